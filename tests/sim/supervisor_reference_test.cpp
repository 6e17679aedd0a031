// The model's supervisor held against a deliberately simple interpreter written here from
// IPU21-DEVICE.md section 5.1's bit patterns alone (no arch/ decoder): it runs the lowered
// code of a one-tile program (a Repeat with an iterated pointer, per-iteration and constant
// patches, a kernel through that pointer, the bulk patcher, a setup patch) and must leave
// the same memory after the same number of cycles as `lockstep run`'s engine.
#include <gtest/gtest.h>

#include <map>

#include "arch/machine.hpp"
#include "sim/backend.hpp"
#include "supervisor/supervisor_code.hpp"

namespace lockstep::sim {
namespace {

constexpr uint64_t kCyclesPerInstruction = 6;  // ipu21-c600's supervisor.cycles_per_instruction

// Registers, a word-addressed memory and a cycle count; one instruction per 6 cycles.
struct ReferenceSupervisor {
  std::map<uint32_t, uint32_t> memory;  // byte address (4-aligned) -> word
  std::map<uint32_t, std::string> intrinsics;
  uint32_t m[16] = {};
  uint64_t cycles = 0;

  uint32_t reg(uint32_t r) const { return r == 15 ? 0 : m[r]; }
  void set(uint32_t r, uint32_t v) {
    if (r != 15) m[r] = v;
  }

  // The two intrinsics this program calls, as docs/timing.md describes them.
  void intrinsic(const std::string& name) {
    cycles += 3 * kCyclesPerInstruction;     // runall, sync 1, br $m10
    if (name == "lockstep_kernel_fill_1") {  // [dst] [bytes, value]: 6 x (4 + ceil(words / 6))
      for (uint32_t b = 0; b < m[3]; b += 4) memory[m[2] + b] = m[4];
      cycles += 6 * (4 + (m[3] / 4 + 5) / 6);
    } else if (name == "lockstep_bulk_patch") {  // records of (word, V values); 6 x (3 + 4 x ceil(n / 6))
      const uint32_t per = m[5], iteration = m[6] - m[4];
      for (uint32_t e = 0; e < m[3]; ++e) {
        const uint32_t record = m[2] + 4 * e * (1 + per);
        memory[memory[record]] = memory[record + 4 * (1 + (per > 1 ? iteration % per : 0))];
      }
      cycles += 6 * (3 + 4 * ((m[3] + 5) / 6));
    } else {
      ADD_FAILURE() << "unexpected intrinsic " << name;
    }
  }

  void run(uint32_t pc) {
    for (int guard = 0; guard < 100000; ++guard) {
      const uint32_t w = memory[pc];
      const uint32_t r20 = (w >> 20) & 15, r16 = (w >> 16) & 15, r12 = (w >> 12) & 15;
      cycles += kCyclesPerInstruction;
      uint32_t next = pc + 4;
      switch (w >> 24) {
        case 0x19:
          set(r20, w & 0xfffff);
          break;  // setzi
        case 0x22:
          set(r16, reg(r20) + uint32_t(int32_t(int16_t(w & 0xffff))));
          break;  // add
        case 0x42:
          set(r16, r12 == 0xa ? reg(r20) << (w & 0xfff) : reg(r20) & (w & 0xfff));
          break;  // shl, and
        case 0x01:
          set(r16, memory[reg(r20) + reg(r12) + 4 * (w & 0xfff)]);
          break;  // ld32
        case 0x4f:
          memory[reg(r20) + reg(r12) + 4 * (w & 0xfff)] = reg(r16);
          break;  // st32
        case 0x43:
          if (w & 0x8000) break;  // put: no CSR matters here
          if (reg(r20) == 0) {    // br to 0: the halt, which takes no slot
            cycles -= kCyclesPerInstruction;
            return;
          }
          next = reg(r20);
          break;
        case 0x18: {  // call
          const uint32_t target = (w & 0x7ffff) << 2;
          if (intrinsics.count(target)) {
            intrinsic(intrinsics[target]);
          } else {
            set(r20, pc + 4);
            next = target;
          }
          break;
        }
        case 0x13:  // brz
          if (reg(r20) == 0) next = (w & 0x7ffff) << 2;
          break;
        default:
          ADD_FAILURE() << "word " << std::hex << w << " at " << pc;
          return;
      }
      pc = next;
    }
    ADD_FAILURE() << "no halt";
  }
};

arch::Segment zeros(uint32_t address, uint32_t size) {
  arch::Segment s;
  s.address = address;
  s.size = size;
  return s;
}

arch::Package one_tile_program() {
  const auto machine = arch::load_machine("ipu21-c600-t16");
  arch::Package p;
  p.machine_name = machine.name;
  p.machine_digest = machine.digest;
  arch::TileProgram t;
  t.tile = 0;
  t.table = {0x50000, 0x1000};
  arch::Segment slot;
  slot.address = 0x68000;
  slot.size = 4;
  slot.fill = arch::FillKind::Bytes;
  slot.bytes = {0x00, 0x00, 0x06, 0x00};  // 0x60000
  t.segments = {zeros(0x50000, 0x100), zeros(0x60000, 0x100), slot};
  arch::RepeatStep r;
  r.count = 5;
  r.pointers = {{0x68000, 16}};
  r.body = {arch::Step{arch::PatchStep{arch::PatchMethod::Helper, {{0x50000, {11, 22, 33, 44, 55}}, {0x50004, {7}}}}},
            arch::Step{arch::KernelStep{"fill", {{0x68000, true}}, {16, 0xabcd1234}}},
            arch::Step{arch::PatchStep{arch::PatchMethod::Bulk, {{0x50020, {1, 2, 3, 4, 5}}, {0x50024, {6}}}}}};
  t.steps = {arch::Step{r}, arch::Step{arch::PatchStep{arch::PatchMethod::Setup, {{0x50010, {9}}, {0x50014, {10}}}}}};
  p.tiles = {t};
  for (const auto& [name, address, bytes] : std::vector<std::tuple<std::string, uint32_t, uint32_t>>{
           {"table", 0x50000, 0x40}, {"filled", 0x60000, 0x60}, {"slot", 0x68000, 4}}) {
    p.bindings.push_back({name, arch::BindingKind::Output, {{0, address, bytes}}, arch::ElementType::Bytes, {}});
  }
  return p;
}

TEST(SupervisorReference, TheModelAgreesWithASimpleInterpreterOfTheSameCode) {
  const arch::Package package = one_tile_program();
  const auto machine = arch::load_machine(package.machine_name);
  const RunResult result = make_systemc_backend(machine)->run(package, {});
  ASSERT_TRUE(result.hazards.empty()) << result.hazards.front().detail;

  const arch::TileCode code = arch::lower_tile_code(package.tiles[0], machine);
  ReferenceSupervisor ref;
  ref.memory[0x68000] = 0x60000;
  for (size_t i = 0; i < code.words.size(); ++i) ref.memory[code.base + 4 * static_cast<uint32_t>(i)] = code.words[i];
  for (const auto& s : code.symbols) {
    if (s.intrinsic) ref.intrinsics[s.address] = s.name;
  }
  ref.m[11] = code.stack_top;
  ref.run(code.program);

  EXPECT_EQ(result.total_cycles, ref.cycles);
  for (const auto& [name, address] :
       std::vector<std::pair<std::string, uint32_t>>{{"table", 0x50000}, {"filled", 0x60000}, {"slot", 0x68000}}) {
    const std::vector<uint8_t>& bytes = result.outputs.at(name);
    for (size_t b = 0; b < bytes.size(); b += 4) {
      const uint32_t model = bytes[b] | bytes[b + 1] << 8 | bytes[b + 2] << 16 | uint32_t(bytes[b + 3]) << 24;
      EXPECT_EQ(model, ref.memory[address + static_cast<uint32_t>(b)]) << name << " + " << b;
    }
  }
  // What the program means, independently of either: the last iteration's values, five
  // 16-byte fills, the pointer advanced five times.
  EXPECT_EQ(ref.memory[0x50000], 55u);
  EXPECT_EQ(ref.memory[0x50004], 7u);
  EXPECT_EQ(ref.memory[0x50010], 9u);
  EXPECT_EQ(ref.memory[0x50020], 5u);
  EXPECT_EQ(ref.memory[0x50024], 6u);
  EXPECT_EQ(ref.memory[0x6004c], 0xabcd1234u);
  EXPECT_EQ(ref.memory[0x60050], 0u);
  EXPECT_EQ(ref.memory[0x68000], 0x60050u);
}

}  // namespace
}  // namespace lockstep::sim
