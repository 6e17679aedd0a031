// The lowering of steps to supervisor code, held against IPU21-DEVICE.md's worked examples
// (sections 8.2 and 8.3), its encodings (section 5.1) and the shape of section 8.4.
#include "supervisor/supervisor_code.hpp"

#include <gtest/gtest.h>

#include <span>

#include "arch/instruction.hpp"
#include "arch/machine.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"

namespace lockstep::arch {
namespace {

MachineDescription machine() { return load_machine("ipu21-c600-t16"); }

TileProgram program_with(std::vector<Step> steps) {
  TileProgram p;
  p.tile = 0;
  p.table = {0x60000, 0x100};
  p.steps = std::move(steps);
  return p;
}

// The program's words from its first instruction up to (not including) the final halt.
std::vector<uint32_t> program_words(const TileCode& code) {
  const size_t first = (code.program - code.base) / 4;
  const size_t end = code.code_bytes / 4 - 1;  // the halt
  EXPECT_EQ(code.words[end], 0x43f00000u) << "br $m15 (halt)";
  return {code.words.begin() + first, code.words.begin() + end};
}

uint32_t symbol(const TileCode& code, const std::string& name) {
  const CodeSymbol* s = find_symbol(code, name);
  EXPECT_NE(s, nullptr) << name;
  return s ? s->address : 0;
}

TEST(SupervisorCode, ActiveExchangeIsTheSpecWorkedExample) {
  ExchangeStep e;
  e.phase = 7;
  e.row_address = 0x60000;
  e.incoming_base = 0x70000;
  const TileCode code = lower_tile_code(program_with({Step{e}}), machine());
  const uint32_t barrier = symbol(code, "lockstep_worker_barrier");
  // Section 8.2's worked example with the barrier helper at 0x50000: 18714000 is
  // call $m7, 0x50000; here the helper lies where the lowering put it.
  const std::vector<uint32_t> expected = {0x19870000, 0x438080a4, 0x43f080a7, 0x18700000u | (barrier >> 2),
                                          0x19800001, 0x438080a6, 0x41800003, 0x18a18000};
  EXPECT_EQ(program_words(code), expected);
  EXPECT_EQ(0x18700000u | (0x50000u >> 2), 0x18714000u);  // the spec's word for 0x50000
}

TEST(SupervisorCode, InactiveExchangeIsTheSpecWorkedExample) {
  ExchangeStep e;
  e.phase = 7;
  e.incoming_base = 0x70000;
  const TileCode code = lower_tile_code(program_with({Step{e}}), machine());
  const std::vector<uint32_t> expected = {0x19870000, 0x438080a4, 0x43f080a7, 0x40c00000, 0x41800001};
  EXPECT_EQ(program_words(code), expected);
}

TEST(SupervisorCode, KernelLaunchIsTheSpecWorkedExample) {
  KernelStep k;
  k.name = "add";
  k.operands = {{0x70000, false}, {0x71000, false}, {0x72000, false}};
  k.scalars = {64};
  const TileCode code = lower_tile_code(program_with({Step{k}}), machine());
  const uint32_t kernel = symbol(code, "lockstep_kernel_add_3");
  const std::vector<uint32_t> expected = {0x19270000, 0x19371000, 0x19472000, 0x19500040, 0x18a00000u | (kernel >> 2)};
  EXPECT_EQ(program_words(code), expected);
  EXPECT_TRUE(find_symbol(code, "lockstep_kernel_add_3")->intrinsic);
  EXPECT_EQ(code.words[(kernel - code.base) / 4], 0x41801001u) << "an intrinsic's slot is trap 1";
}

TEST(SupervisorCode, LargeAndNegativeScalarsUseTheThreeWordMacro) {
  KernelStep k;
  k.name = "fill";
  k.operands = {{0x70000, false}};
  k.scalars = {64, 0xdeadbeef};
  const TileCode code = lower_tile_code(program_with({Step{k}}), machine());
  const std::vector<uint32_t> words = program_words(code);
  ASSERT_EQ(words.size(), 6u);
  // setzi $m4, 0xdeadb; shl $m4, $m4, 12; add $m4, $m4, 0xeef
  EXPECT_EQ(words[2], 0x194deadbu);
  EXPECT_EQ(words[3], 0x4244a00cu);
  EXPECT_EQ(words[4], 0x22440eefu);
}

TEST(SupervisorCode, RepeatFollowsSection84) {
  KernelStep k;
  k.name = "copy";
  k.operands = {{0x70000, false}, {0x70100, true}};
  k.scalars = {16};
  RepeatStep r;
  r.count = 5;
  r.body = {Step{k}};
  r.pointers = {{0x70100, 64}};
  const TileCode code = lower_tile_code(program_with({Step{r}}), machine());
  const std::vector<uint32_t> w = program_words(code);
  // Entry: add $m11,$m11,-8; setzi $m0,5; st32 $m0,$m11,$m15,0; pointer: setzi $m0,init;
  // setzi $m1,slot; st32 $m0,$m1,$m15,0.
  EXPECT_EQ(w[0], 0x22bbfff8u);
  EXPECT_EQ(w[1], 0x19000005u);
  EXPECT_EQ(w[2], 0x4fb0f000u);
  EXPECT_EQ(w[4], 0x19170100u);
  EXPECT_EQ(w[5], 0x4f10f000u);
  // Body: setzi $m2; setzi $m3, slot; ld32 $m3,$m3,$m15,0; setzi $m4,16; call.
  EXPECT_EQ(w[8], 0x0133f000u);
  // Bookkeeping: pointer (setzi, ld32, add 64, st32) then ld32, add -1, st32, brz, setzi, br;
  // then the frame pop.
  const size_t book = 11;
  EXPECT_EQ(w[book + 2], 0x22000040u);
  EXPECT_EQ(w[book + 4], 0x01b0f000u);
  EXPECT_EQ(w[book + 5], 0x2200ffffu);
  EXPECT_EQ(w[book + 9], 0x43000000u);  // br $m0
  EXPECT_EQ(w[book + 10], 0x22bb0008u);
  EXPECT_EQ(w.size(), book + 11);
}

TEST(SupervisorCode, EveryWordDecodesAndReencodes) {
  ExchangeStep e;
  e.phase = 1;
  e.row_address = 0x60000;
  e.incoming_mux = 12;
  e.incoming_format = 1;
  e.incoming_muxpair = 14;
  PatchStep helper{PatchMethod::Helper, {{0x60008, {1, 2, 3}}, {0x6000c, {9}}}};
  PatchStep setup{PatchMethod::Setup, {{0x60010, {4}}, {0x60014, {5}}}};
  PatchStep bulk{PatchMethod::Bulk, {{0x60018, {6, 7, 8}}}};
  RepeatStep r;
  r.count = 3;
  r.body = {Step{helper}, Step{setup}, Step{bulk}, Step{e}, Step{SyncStep{3}}};
  const TileCode code = lower_tile_code(program_with({Step{r}}), machine(), LoweringOptions{4, {}});
  const std::span<const uint32_t> words(code.words.data(), code.code_bytes / 4);
  for (size_t i = 0; i < words.size();) {
    const DecodedInstruction d = decode(words, i);
    EXPECT_EQ(encode(d.instruction), std::vector<uint32_t>(words.begin() + i, words.begin() + i + d.word_count))
        << "word " << i;
    i += d.word_count;
  }
  EXPECT_GE(code.base, 0x4c018u);
  EXPECT_LE(code.end(), 0x80000u);
  EXPECT_EQ(code.stack_top, code.end());
  EXPECT_EQ(code.stack_top - code.base - code.code_bytes, 64u + 48u + 16u)
      << "guard; patch_word table (3), patch_row tables (2+2), bulk records (4), one pad; two frames";
}

TEST(SupervisorCode, NoRoomIsAClearError) {
  TileProgram p = program_with({Step{SyncStep{3}}});
  Segment all;
  all.address = 0x4c000;
  all.size = 0x80000 - 0x4c000;
  p.segments = {all};
  try {
    lower_tile_code(p, machine());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tile 0: no room for"), std::string::npos) << e.what();
  }
}

// A program the host drives ends as ipu_stack_static_complete does (IPU21-DEVICE.md 9.2): 1
// stored at 0x58000, then the halt; the code area keeps clear of the word, and a package that
// uses it is told so.
TEST(SupervisorCode, TheCompletionWordIsSetLastAndKeptFree) {
  LoweringOptions options;
  options.completion_word = true;
  TileProgram p = program_with({Step{SyncStep{3}}});
  p.table = {0x57f00, 0x200};  // the code would go at the table's top, over 0x58000
  const TileCode code = lower_tile_code(p, machine(), options);
  const std::vector<uint32_t> words = program_words(code);
  ASSERT_GE(words.size(), 3u);
  const std::span<const uint32_t> tail(words.end() - 3, words.end());
  EXPECT_EQ(decode(tail, 0).instruction.op, Opcode::SetZi);
  EXPECT_EQ(decode(tail, 0).instruction.immediate, 1);
  EXPECT_EQ(decode(tail, 1).instruction.immediate, 0x58000);
  EXPECT_EQ(decode(tail, 2).instruction.op, Opcode::St32);
  EXPECT_TRUE(code.end() <= 0x58000u || code.base >= 0x58004u) << hex(code.base) << ".." << hex(code.end());
  // A package with host calls sets the word; a step that uses it is refused.
  Package package;
  package.host.calls.push_back(HostCallSpec{"run", 0, 0, {}, {}, {}, {}, {}, {}});
  package.tiles = {program_with({Step{PatchStep{PatchMethod::Helper, {{0x58000, {7}}}}}})};
  try {
    package_lowering(package, machine());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "tile 0: the completion word 0x58000 (IPU21-DEVICE.md 9.2), which a program with host calls sets at its "
              "end, is taken by a step's operand or pointer at 0x58000+4");
  }
  package.host.calls.clear();
  EXPECT_FALSE(package_lowering(package, machine()).completion_word);
}

}  // namespace
}  // namespace lockstep::arch
