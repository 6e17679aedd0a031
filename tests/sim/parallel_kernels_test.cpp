// Kernel numerics are deferred to the next barrier and run there on several threads, one
// tile per task (model/chip.cpp). The bits, cycles and hazards must be those of one thread,
// and the deferral must keep program order on a tile (patch, pointer, indirect operand).
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <random>

#include "arch/kernel_signatures.hpp"
#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "model/kernel_registry.hpp"
#include "sim/backend.hpp"

namespace lockstep::sim {
namespace {

constexpr uint32_t kA = 0x60000, kB = 0x64000, kOut = 0x68000, kWide = 0x70000, kSlot = 0x5c000;
constexpr int64_t kCount = 2048;

arch::Step kernel(std::string name, std::vector<arch::Operand> operands, std::vector<int64_t> scalars) {
  return arch::Step{arch::KernelStep{std::move(name), std::move(operands), std::move(scalars)}};
}

std::vector<uint8_t> random_fp16_bytes(std::mt19937& rng, size_t values) {
  std::vector<uint8_t> bytes(values * 2);
  std::uniform_int_distribution<int> exponent(10, 18), byte(0, 255);
  for (size_t i = 0; i < values; ++i) {
    bytes[2 * i] = static_cast<uint8_t>(byte(rng));
    bytes[2 * i + 1] = static_cast<uint8_t>((byte(rng) & 0x83) | (exponent(rng) << 2));  // finite, moderate
  }
  return bytes;
}

// Eight tiles, each: add, gelu in place, layernorm (through an iterated pointer in a
// Repeat of 3), a sync, cast to FP32; the outputs are bound so the run returns them.
arch::Package package() {
  std::mt19937 rng(7);
  arch::Package p;
  p.machine_name = "ipu21-c600-t16";
  arch::Binding out{"out", arch::BindingKind::Output, {}, arch::ElementType::Bytes, {}};
  for (uint32_t t = 0; t < 8; ++t) {
    arch::TileProgram tile;
    tile.tile = t;
    tile.segments.push_back({kA, kCount * 2, arch::FillKind::Bytes, random_fp16_bytes(rng, kCount), 0});
    tile.segments.push_back({kB, kCount * 2, arch::FillKind::Bytes, random_fp16_bytes(rng, kCount), 0});
    tile.segments.push_back({kSlot, 4, arch::FillKind::Bytes, {0x00, 0x80, 0x06, 0x00}, 0});  // -> kOut
    arch::RepeatStep repeat;
    repeat.count = 3;
    repeat.pointers = {{kSlot, 0}};
    repeat.body = {kernel("add", {{kOut, false}, {kA, false}, {kB, false}}, {kCount}),
                   kernel("gelu", {{kOut, false}, {kOut, false}}, {kCount}),
                   kernel("layernorm", {{kA, false}, {kSlot, true}}, {16, kCount / 16})};
    tile.steps = {arch::Step{repeat}, arch::Step{arch::SyncStep{3}},
                  kernel("cast", {{kWide, false}, {kA, false}}, {kCount, 16, 32})};
    p.tiles.push_back(tile);
    out.slices.push_back({t, kWide, kCount * 4});
  }
  p.bindings.push_back(out);
  p.machine_digest = arch::machine_digest(arch::load_machine(p.machine_name));
  return p;
}

RunResult run_with_threads(size_t threads) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  const arch::Package p = package();
  return make_systemc_backend(arch::load_machine(p.machine_name))->run(p, {});
}

TEST(ParallelKernels, TwoThreadsGiveTheBitsAndCyclesOfOne) {
  const RunResult one = run_with_threads(1);
  const RunResult two = run_with_threads(2);
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(one.total_cycles, two.total_cycles);
  ASSERT_EQ(one.outputs.at("out").size(), 8u * kCount * 4);
  EXPECT_EQ(one.outputs, two.outputs);
  // The cast really ran: not all zero.
  const auto& bytes = one.outputs.at("out");
  EXPECT_NE(std::count(bytes.begin(), bytes.end(), uint8_t{0}), static_cast<long>(bytes.size()));
}

TEST(ParallelKernels, AKernelOutsideSramIsStillHazardFour) {
  arch::Package p = package();
  p.tiles[3].segments[2].bytes = {0x00, 0x7f, 0x0e, 0x00};  // the layernorm input -> 0xe7f00
  const RunResult r = make_systemc_backend(arch::load_machine(p.machine_name))->run(p, {});
  ASSERT_EQ(r.hazards.size(), 1u);
  EXPECT_EQ(r.hazards[0].kind, HazardKind::WriteOutOfRange);
  EXPECT_EQ(r.hazards[0].tile, 3u);
  EXPECT_EQ(r.hazards[0].instruction, "kernel layernorm");
}

// Every kernel a package may name (arch's table) is one the model runs, and no other.
TEST(ParallelKernels, ValidatorAndModelKnowTheSameKernels) {
  std::vector<std::string> names;
  for (const auto& k : arch::kernel_signatures()) names.push_back(k.name);
  EXPECT_EQ(names, model::kernel_names());
}

}  // namespace
}  // namespace lockstep::sim
