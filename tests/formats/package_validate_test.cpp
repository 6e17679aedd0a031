// One test per validation rule: each asserts the exact message, which names the tile, the
// step (index path into Repeat bodies) and the field.
#include <gtest/gtest.h>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "io/errors.hpp"
#include "support/package_steps.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

const MachineDescription& machine() {
  static const MachineDescription m = load_machine("ipu21-c600-t16");
  return m;
}

Package load(const std::string& name) {
  Package p = read_package(testing::source_path("tests/data/packages/" + name));
  return p;
}

Package p2p() { return load("point_to_point.yaml"); }
Package repeat() { return load("repeat_patch.yaml"); }

std::string error_of(const Package& p) {
  try {
    validate_package(p, machine(), "p.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(valid)";
}

using testing::step_of;

TEST(PackageValidate, CheckedInPackagesAreValid) {
  for (const char* name : {"point_to_point.yaml", "repeat_patch.yaml", "long_rows.yaml"}) {
    EXPECT_EQ(error_of(load(name)), "(valid)") << name;
  }
}

TEST(PackageValidate, MachineName) {
  Package p = p2p();
  p.machine_name = "ipu21-c600";
  EXPECT_EQ(error_of(p), "p.yaml: machine.name: package is for machine 'ipu21-c600', not 'ipu21-c600-t16'");
}

TEST(PackageValidate, MachineDigest) {
  Package p = p2p();
  p.machine_digest = "0123";
  EXPECT_EQ(error_of(p), "p.yaml: machine.digest: '0123' does not match machine ipu21-c600-t16 (digest " +
                             machine().digest + "): built for a different machine");
}

TEST(PackageValidate, TileIdInsideMachine) {
  Package p = p2p();
  p.tiles[1].tile = 16;
  EXPECT_EQ(error_of(p), "p.yaml: tile 16: tile: tile id 16 outside the machine's 16 tiles");
}

TEST(PackageValidate, TileIdsUnique) {
  Package p = p2p();
  p.tiles[1].tile = 0;
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: tile: tile listed twice");
}

TEST(PackageValidate, SegmentInsideSram) {
  Package p = p2p();
  p.tiles[0].segments[1].address = 0x40000;
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: segment 1 (0x40000): [0x40000, 0x4000c) outside SRAM [0x4c000, 0xe8000)");
}

TEST(PackageValidate, SegmentBelowLoaderLimit) {
  Package p = p2p();
  p.tiles[0].segments[1].address = 0xe7bb0;
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 0: segment 1 (0xe7bb0): [0xe7bb0, 0xe7bbc) reaches past the loader limit 0xe7bb0");
}

TEST(PackageValidate, SegmentAligned) {
  Package p = p2p();
  p.tiles[0].segments[1].address = 0x60002;
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: segment 1 (0x60002): address: 0x60002 is not 4-aligned");
  p = p2p();
  p.tiles[0].segments[1].size = 10;
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: segment 1 (0x60000): size: 10 is not a multiple of 4");
}

TEST(PackageValidate, SegmentsDoNotOverlap) {
  Package p = p2p();
  p.tiles[1].segments[1].address = 0x4c010;
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 1: segment 1 (0x4c010): [0x4c010, 0x4d020) overlaps segment 0 [0x4c000, 0x4c018)");
}

TEST(PackageValidate, SegmentBytesMatchSize) {
  Package p = p2p();
  p.tiles[0].segments[0].bytes.resize(12);
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: segment 0 (0x4c000): bytes: 12 bytes given for size 16");
}

TEST(PackageValidate, TableAlignedAndFetchable) {
  Package p = p2p();
  p.tiles[0].table.address = 0x4c004;
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: table.address: 0x4c004 is not 8-aligned");
  p = p2p();
  p.tiles[0].table = {0x7fff8, 16};
  EXPECT_EQ(
      error_of(p),
      "p.yaml: tile 0: table: [0x7fff8, 0x80008) reaches past the row region end 0x80000 (rows must be fetchable)");
  p = p2p();
  p.tiles[0].table = {0x48000, 16};
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: table: [0x48000, 0x48010) outside SRAM [0x4c000, 0xe8000)");
}

TEST(PackageValidate, ExchangeRowAddress) {
  Package p = p2p();
  step_of<ExchangeStep>(p, 1, {0}).row_address = 0x4c004;
  EXPECT_EQ(error_of(p), "p.yaml: tile 1: step 0 (exchange): row_address: 0x4c004 is not 8-aligned");
  p = p2p();
  step_of<ExchangeStep>(p, 1, {0}).row_address = 0x4c018;
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 1: step 0 (exchange): row_address: 0x4c018 outside the table [0x4c000, 0x4c018)");
  p = p2p();
  p.tiles[1].table.size = 32;
  step_of<ExchangeStep>(p, 1, {0}).row_address = 0x4c018;
  EXPECT_EQ(error_of(p), "p.yaml: tile 1: step 0 (exchange): row_address: 0x4c018 is in no segment");
}

TEST(PackageValidate, ExchangeCsrValues) {
  Package p = p2p();
  step_of<ExchangeStep>(p, 1, {0}).incoming_format = 3;
  EXPECT_EQ(
      error_of(p),
      "p.yaml: tile 1: step 0 (exchange): incoming_format: 3 is not a format (0 32-bit, 1 early half, 2 waiting half)");
  p = p2p();
  step_of<ExchangeStep>(p, 1, {0}).incoming_muxpair = 0x5c0;
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 1: step 0 (exchange): incoming_muxpair: 0x5c0 is no tile (0..1471), not neutral "
            "0x640 and no host endpoint 0x600..0x63f");
  p = p2p();
  step_of<ExchangeStep>(p, 1, {0}).incoming_mux = 0x641;
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 1: step 0 (exchange): incoming_mux: 0x641 is no tile (0..1471), not neutral "
            "0x640 and no host endpoint 0x600..0x63f");
  for (uint32_t ok : {0u, 1471u, 0x600u, 0x63du, 0x640u}) {
    p = p2p();
    step_of<ExchangeStep>(p, 1, {0}).incoming_muxpair = ok;
    step_of<ExchangeStep>(p, 1, {0}).incoming_format = 2;
    EXPECT_EQ(error_of(p), "(valid)") << ok;
  }
}

TEST(PackageValidate, TypedBindingShapeMatchesItsBytes) {
  Package p = p2p();
  p.bindings[0].element = ElementType::Float16;
  p.bindings[0].shape = {4, 5};
  const uint64_t bytes = p.bindings[0].slices[0].bytes;
  EXPECT_EQ(error_of(p), "p.yaml: binding '" + p.bindings[0].name + "': shape: 20 elements of float16 are 40 bytes, " +
                             "but the slices hold " + std::to_string(bytes));
  p.bindings[0].shape = {static_cast<uint32_t>(bytes / 2)};
  EXPECT_EQ(error_of(p), "(valid)");
  p.bindings[0].element = ElementType::Bytes;
  EXPECT_EQ(error_of(p), "p.yaml: binding '" + p.bindings[0].name + "': shape: given for untyped bytes (set element)");
}

TEST(PackageValidate, ExchangePhaseExists) {
  Package p = repeat();
  step_of<ExchangeStep>(p, 0, {0, 1}).phase = 5;
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: step 0.1 (exchange): phase: phase 5 is not in the package's phases");
}

TEST(PackageValidate, PhaseIdsUnique) {
  Package p = p2p();
  p.phases.push_back(p.phases[0]);
  EXPECT_EQ(error_of(p), "p.yaml: phase 1: id: phase id listed twice");
}

TEST(PackageValidate, BarriersMatchAcrossTiles) {
  Package p = repeat();
  step_of<SyncStep>(p, 1, {0, 3}).zone = 1;
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 1: step 0.3 (sync): barrier 2 is sync 1 but tile 0 has sync 3 (tile 0: step 0.3.0 (sync))");
}

TEST(PackageValidate, BarrierCountsMatchAcrossTiles) {
  Package p = repeat();
  std::get<RepeatStep>(p.tiles[1].steps[0].kind).count = 2;
  // Patch values must then follow the new count; use one value for all.
  step_of<PatchStep>(p, 1, {0, 0}).entries[0].values.resize(1);
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 1: steps: takes part in 6 barriers but tile 0 in 9; first unmatched: exchange of phase 2 at "
            "tile 0: step 0.1 (exchange)");
}

TEST(PackageValidate, RepeatShape) {
  Package p = repeat();
  std::get<RepeatStep>(p.tiles[0].steps[0].kind).count = 0;
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: step 0 (repeat): count: must be at least 1");
  p = repeat();
  step_of<RepeatStep>(p, 0, {0, 3}).body.clear();
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: step 0.3 (repeat): body: is empty");
  p = repeat();
  std::get<RepeatStep>(p.tiles[0].steps[0].kind).pointers[0].address = 0x4c802;
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: step 0 (repeat): pointers[0].address: 0x4c802 is not 4-aligned");
}

TEST(PackageValidate, PatchEntries) {
  Package p = repeat();
  step_of<PatchStep>(p, 0, {0, 0}).entries[0].word_address = 0x4c010;
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 0: step 0.0 (patch): entries[0].word: 0x4c010 outside the table [0x4c000, 0x4c010)");
  p = repeat();
  step_of<PatchStep>(p, 0, {0, 0}).entries[0].values.resize(2);
  EXPECT_EQ(
      error_of(p),
      "p.yaml: tile 0: step 0.0 (patch): entries[0].values: 2 values; expected 1 or the enclosing Repeat's count 3");
  p = repeat();
  step_of<PatchStep>(p, 0, {0, 0}).entries[0].values.clear();
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: step 0.0 (patch): entries[0].values: is empty");
  p = repeat();
  step_of<PatchStep>(p, 0, {0, 0}).entries[0].word_address = 0x4c006;
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: step 0.0 (patch): entries[0].word: 0x4c006 is not 4-aligned");
}

TEST(PackageValidate, KernelNameAndShape) {
  Package p = p2p();
  step_of<KernelStep>(p, 1, {2}).name = "gemm";
  EXPECT_EQ(
      error_of(p),
      "p.yaml: tile 1: step 2 (kernel): name: unknown kernel 'gemm' (known: add, attention_merge, attention_softmax, "
      "cast, checksum, "
      "checksum_xxh3, copy, fill, gelu, gemm_fp16, gemm_fp16_interleaved, gemm_fp8, gemm_fp8_interleaved, layernorm, "
      "reduce_sum, softmax, and the IPU21 stack's kernels by symbol)");
  p = p2p();
  step_of<KernelStep>(p, 1, {2}).operands.pop_back();
  EXPECT_EQ(error_of(p), "p.yaml: tile 1: step 2 (kernel): operands: checksum takes 2 operands, got 1");
  p = p2p();
  step_of<KernelStep>(p, 1, {2}).scalars.push_back(1);
  EXPECT_EQ(error_of(p), "p.yaml: tile 1: step 2 (kernel): scalars: checksum takes 1 scalars, got 2");
}

TEST(PackageValidate, KernelRangesInSram) {
  Package p = p2p();
  step_of<KernelStep>(p, 1, {2}).operands[1].address = 0xe7ffc;
  EXPECT_EQ(error_of(p),
            "p.yaml: tile 1: step 2 (kernel): operands[1]: [0xe7ffc, 0xe8004) outside SRAM [0x4c000, 0xe8000)");
  p = repeat();
  step_of<KernelStep>(p, 0, {0, 2}).scalars[0] = 0;
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: step 0.2 (kernel): scalars[0]: copy: bytes = 0 outside [1, 638976]");
  p = repeat();
  step_of<KernelStep>(p, 0, {0, 2}).operands[1].address = 0x4c801;
  EXPECT_EQ(error_of(p), "p.yaml: tile 0: step 0.2 (kernel): operands[1]: pointer slot 0x4c801 is not 4-aligned");
  p = p2p();
  step_of<KernelStep>(p, 1, {2}).operands[0].offset = 64;
  EXPECT_EQ(
      error_of(p),
      "p.yaml: tile 1: step 2 (kernel): operands[0].offset: an offset without a pointer (write the address itself)");
}

TEST(PackageValidate, BindingsAndExpectationsInSram) {
  Package p = p2p();
  p.bindings[1].slices[0].address = 0xe7ff8;
  EXPECT_EQ(error_of(p), "p.yaml: binding 'received': slices[0]: [0xe7ff8, 0xe8004) outside SRAM [0x4c000, 0xe8000)");
  p = p2p();
  p.expectations[1].tile = 99;
  EXPECT_EQ(error_of(p), "p.yaml: expectation 1 (tile 99): tile: tile 99 outside the machine");
  p = p2p();
  p.expectations[0].size = 16;
  EXPECT_EQ(error_of(p), "p.yaml: expectation 0 (tile 1): bytes: 12 bytes given for size 16");
}

}  // namespace
}  // namespace lockstep::arch
