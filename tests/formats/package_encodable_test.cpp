// Every step field the supervisor code puts in an instruction is validated against the
// encoder's own limit (arch/instruction.hpp, arch/instruction_sequences.hpp): a value just
// inside passes validation and lowers, one just outside is refused by validation naming the
// field, so no package validates and then fails encoding (issue 26, finding 3).
#include <gtest/gtest.h>

#include <climits>

#include "arch/instruction.hpp"
#include "arch/instruction_sequences.hpp"
#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "io/errors.hpp"
#include "supervisor/supervisor_code.hpp"
#include "support/package_steps.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

const MachineDescription& machine() {
  static const MachineDescription m = load_machine("ipu21-c600-t16");
  return m;
}

Package p2p() { return read_package(testing::source_path("tests/data/packages/point_to_point.yaml")); }
Package repeat() { return read_package(testing::source_path("tests/data/packages/repeat_patch.yaml")); }

// "(lowers)" when the package validates and every tile lowers, else the validator's line.
std::string outcome(const Package& p) {
  try {
    validate_package(p, machine(), "p.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  for (const TileProgram& t : p.tiles) lower_tile_code(t, machine());
  return "(lowers)";
}

using testing::step_of;

const std::string kSetzi = " does not fit setzi's 20-bit immediate (0..0xfffff)";

TEST(PackageEncodable, ValidatorLimitsAreTheEncodersLimits) {
  // What the validator asks (fits) is what encode() does, at both edges.
  Instruction setzi{.op = Opcode::SetZi, .immediate = 0xfffff};
  EXPECT_TRUE(fits(Opcode::SetZi, Field::Immediate, 0xfffff));
  EXPECT_NO_THROW(encode(setzi));
  setzi.immediate = 0x100000;
  EXPECT_FALSE(fits(Opcode::SetZi, Field::Immediate, 0x100000));
  EXPECT_THROW(encode(setzi), std::invalid_argument);
  Instruction sync{.op = Opcode::Sync, .zone = 15};
  EXPECT_NO_THROW(encode(sync));
  sync.zone = 16;
  EXPECT_FALSE(fits(Opcode::Sync, Field::Zone, 16));
  EXPECT_THROW(encode(sync), std::invalid_argument);
  Instruction call{.op = Opcode::Call, .target = 0x1ffffc};
  EXPECT_NO_THROW(encode(call));
  call.target = 0x200000;
  EXPECT_FALSE(fits(Opcode::Call, Field::Target, 0x200000));
  EXPECT_THROW(encode(call), std::invalid_argument);
  EXPECT_EQ(misfit(Opcode::Call, Field::Target, 0x60002),
            "0x60002 is not word aligned (call's target takes multiples of 4)");
}

// Sets one field, as encode() reads it.
void set_field(Instruction& in, Field field, int64_t v) {
  const auto u = static_cast<uint32_t>(v);
  switch (field) {
    case Field::Events:
      in.events = u;
      break;
    case Field::Words:
      in.words = u;
      break;
    case Field::Address:
      in.address = u;
      break;
    case Field::Delta:
      in.delta = u;
      break;
    case Field::Sctl:
      in.sctl = u;
      break;
    case Field::Selector:
      in.selector = u;
      break;
    case Field::Value:
      in.value = u;
      break;
    case Field::PicSelector:
      in.pic_selector = u;
      break;
    case Field::Xpic:
      in.xpic = u;
      break;
    case Field::XpicPaired:
      in.xpic_paired = v != 0;
      break;
    case Field::Pic:
      in.pic = u;
      break;
    case Field::Zone:
      in.zone = u;
      break;
    case Field::Reg:
      in.reg = u;
      break;
    case Field::Dest:
      in.dest = u;
      break;
    case Field::Source:
      in.source = u;
      break;
    case Field::Base:
      in.base = u;
      break;
    case Field::Index:
      in.index = u;
      break;
    case Field::Offset:
      in.offset = u;
      break;
    case Field::Immediate:
      in.immediate = static_cast<int32_t>(v);
      break;
    case Field::Csr:
      in.csr = u;
      break;
    case Field::Target:
      in.target = u;
      break;
    case Field::Breakpoint:
      in.breakpoint = u;
      break;
  }
}

// Every field of every instruction: the edges field_limit gives encode, one past them throws
// naming that field.
TEST(PackageEncodable, EveryFieldLimitIsWhatEncodeChecks) {
  for (int op = 0; op <= static_cast<int>(Opcode::Trap); ++op) {
    for (int f = 0; f <= static_cast<int>(Field::Breakpoint); ++f) {
      const auto field = static_cast<Field>(f);
      const auto limit = field_limit(static_cast<Opcode>(op), field);
      if (!limit) continue;
      const std::string name = mnemonic(static_cast<Opcode>(op)) + " " + field_name(field);
      Instruction in{.op = static_cast<Opcode>(op)};
      if (in.op == Opcode::SendPic) in.selector = 2;  // the PIC form: the full 18-bit value
      for (int64_t edge : {limit->min, limit->max}) {
        set_field(in, field, edge);
        EXPECT_NO_THROW(encode(in)) << name << " = " << edge;
      }
      if (field == Field::XpicPaired) continue;  // a bool: nothing past 1 to set
      set_field(in, field, limit->max + 1);
      try {
        encode(in);
        ADD_FAILURE() << name << " = max + 1 encoded";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(std::string(field_name(field)) + " = "), std::string::npos)
            << name << ": " << e.what();
      }
    }
  }
}

TEST(PackageEncodable, WordMacroReachesEveryRegisterValueAndNoMore) {
  EXPECT_EQ(word_limit().min, INT32_MIN);
  EXPECT_EQ(word_limit().max, int64_t{UINT32_MAX});
  for (int64_t inside : {int64_t{INT32_MIN}, int64_t{-1}, int64_t{0xfffff}, int64_t{0x100000}, int64_t{UINT32_MAX}}) {
    for (const Instruction& in : load_word(4, inside)) EXPECT_NO_THROW(encode(in)) << inside;
  }
  EXPECT_EQ(load_word(4, 0xfffff).size(), 1u);
  EXPECT_EQ(load_word(4, 0x100000).size(), 3u);
  EXPECT_EQ(word_misfit(int64_t{UINT32_MAX} + 1),
            "4294967296 does not fit a 32-bit word (-2147483648..4294967295: setzi, shl 12, add)");
  EXPECT_FALSE(word_misfit(int64_t{INT32_MIN} - 1).empty());
  EXPECT_THROW(load_word(4, int64_t{UINT32_MAX} + 1), std::invalid_argument);
}

TEST(PackageEncodable, AddChunksExpressEveryStride) {
  for (int64_t stride : {int64_t{INT32_MIN}, int64_t{-32769}, int64_t{32768}, int64_t{INT32_MAX}}) {
    int64_t sum = 0;
    std::vector<uint32_t> words;
    EXPECT_NO_THROW({
      for (const Instruction& in : add_constant(1, stride)) {
        encode_into(in, words);
        sum += in.immediate;
      }
    }) << stride;
    EXPECT_EQ(sum, stride);
  }
  EXPECT_EQ(add_constant(1, INT32_MIN).size(), 65536u);
  EXPECT_TRUE(add_constant(1, 0).empty());
}

TEST(PackageEncodable, ExchangeIncomingBase) {
  Package p = p2p();
  step_of<ExchangeStep>(p, 1, {0}).incoming_base = 0xfffff;
  EXPECT_EQ(outcome(p), "(lowers)");
  step_of<ExchangeStep>(p, 1, {0}).incoming_base = 0x100000;
  EXPECT_EQ(outcome(p), "p.yaml: tile 1: step 0 (exchange): incoming_base: 0x100000" + kSetzi);
}

TEST(PackageEncodable, SyncZone) {
  Package p = p2p();
  for (size_t tile : {0, 1}) step_of<SyncStep>(p, tile, {1}).zone = 15;
  EXPECT_EQ(outcome(p), "(lowers)");
  for (size_t tile : {0, 1}) step_of<SyncStep>(p, tile, {1}).zone = 16;
  EXPECT_EQ(outcome(p), "p.yaml: tile 0: step 1 (sync): zone: 16 does not fit sync's 4-bit zone (0..15)");
}

// Mux values and the format are CSR values through setzi: past it, the encoder's line; just
// inside it, still no tile, neutral value, host endpoint or format (the meaning's line).
TEST(PackageEncodable, ExchangeMuxValuesAndFormat) {
  const std::string where = "p.yaml: tile 1: step 0 (exchange): ";
  Package p = p2p();
  step_of<ExchangeStep>(p, 1, {0}).incoming_mux = 0x100000;
  EXPECT_EQ(outcome(p), where + "incoming_mux: 0x100000" + kSetzi);
  step_of<ExchangeStep>(p, 1, {0}).incoming_mux = 0xfffff;
  EXPECT_EQ(outcome(p), where +
                            "incoming_mux: 0xfffff is no tile (0..1471), not neutral 0x640 and "
                            "no host endpoint 0x600..0x63f");
  p = p2p();
  step_of<ExchangeStep>(p, 1, {0}).incoming_muxpair = 0x100000;
  EXPECT_EQ(outcome(p), where + "incoming_muxpair: 0x100000" + kSetzi);
  step_of<ExchangeStep>(p, 1, {0}).incoming_muxpair = 0x640;
  EXPECT_EQ(outcome(p), "(lowers)");
  p = p2p();
  step_of<ExchangeStep>(p, 1, {0}).incoming_format = 0x100000;
  EXPECT_EQ(outcome(p), where + "incoming_format: 0x100000" + kSetzi);
  step_of<ExchangeStep>(p, 1, {0}).incoming_format = 0xfffff;
  EXPECT_EQ(outcome(p), where +
                            "incoming_format: 1048575 is not a format (0 32-bit, 1 early half, "
                            "2 waiting half)");
}

TEST(PackageEncodable, ExchangeRowIsACallTarget) {
  Package p = p2p();
  step_of<ExchangeStep>(p, 1, {0}).row_address = 0x200000;
  EXPECT_EQ(outcome(p),
            "p.yaml: tile 1: step 0 (exchange): row_address: 0x200000 does not fit "
            "call's 19-bit target (0..0x1ffffc)");
  step_of<ExchangeStep>(p, 1, {0}).row_address = 0x1ffff8;
  EXPECT_EQ(outcome(p),
            "p.yaml: tile 1: step 0 (exchange): row_address: 0x1ffff8 outside the "
            "table [0x4c000, 0x4c018)");
}

TEST(PackageEncodable, KernelOperandAddresses) {
  Package p = p2p();
  step_of<KernelStep>(p, 1, {2}).operands[1].address = 0x100000;
  EXPECT_EQ(outcome(p), "p.yaml: tile 1: step 2 (kernel): operands[1]: 0x100000" + kSetzi);
  step_of<KernelStep>(p, 1, {2}).operands[1].address = 0xffff8;
  EXPECT_EQ(outcome(p),
            "p.yaml: tile 1: step 2 (kernel): operands[1]: [0xffff8, 0x100000) "
            "outside SRAM [0x4c000, 0xe8000)");
  p = repeat();
  step_of<KernelStep>(p, 0, {0, 2}).operands[1].address = 0x100000;  // a pointer slot
  EXPECT_EQ(outcome(p), "p.yaml: tile 0: step 0.2 (kernel): operands[1]: 0x100000" + kSetzi);
}

TEST(PackageEncodable, KernelScalarsAreThirtyTwoBitWords) {
  const std::string where = "p.yaml: tile 1: step 2 (kernel): scalars[";
  Package p = p2p();
  KernelStep& fill = step_of<KernelStep>(p, 1, {2});
  fill = KernelStep{"fill", {{0x61000, false}}, {8, int64_t{UINT32_MAX}}};
  EXPECT_EQ(outcome(p), "(lowers)");
  fill.scalars[1] = int64_t{UINT32_MAX} + 1;
  EXPECT_EQ(outcome(p), where +
                            "1]: 4294967296 does not fit a 32-bit word "
                            "(-2147483648..4294967295: setzi, shl 12, add)");
  fill.scalars[1] = int64_t{INT32_MIN} - 1;
  EXPECT_EQ(outcome(p), where +
                            "1]: -2147483649 does not fit a 32-bit word "
                            "(-2147483648..4294967295: setzi, shl 12, add)");
  fill.scalars[1] = INT32_MIN;  // a word, but not one fill takes
  EXPECT_EQ(outcome(p), where + "1]: fill: word value = -2147483648 outside [0, 4294967295]");
}

TEST(PackageEncodable, KernelArgumentsFitTheirRegisters) {
  const std::string where = "p.yaml: tile 1: step 2 (kernel): operands: ";
  Package p = p2p();
  KernelStep& k = step_of<KernelStep>(p, 1, {2});
  k.operands.resize(8, k.operands[1]);  // 8 + 1 scalar: $m2..$m10
  EXPECT_EQ(outcome(p), where + "9 operands and scalars; the kernel ABI passes 1 to 8, in $m2..$m9");
  k.operands.resize(7);
  EXPECT_EQ(outcome(p), where + "checksum takes 2 operands, got 7");
  k.operands.clear();
  k.scalars.clear();
  EXPECT_EQ(outcome(p), where + "0 operands and scalars; the kernel ABI passes 1 to 8, in $m2..$m9");
}

TEST(PackageEncodable, RepeatPointerSlotsAndStrides) {
  Package p = repeat();
  RepeatStep& r = std::get<RepeatStep>(p.tiles[0].steps[0].kind);
  r.pointers[0].address = 0x100000;
  EXPECT_EQ(outcome(p), "p.yaml: tile 0: step 0 (repeat): pointers[0].address: 0x100000" + kSetzi);
  r.pointers[0].address = 0xffffc;
  EXPECT_EQ(outcome(p),
            "p.yaml: tile 0: step 0 (repeat): pointers[0].address: [0xffffc, 0x100000) "
            "outside SRAM [0x4c000, 0xe8000)");
  // Any int32 stride is a run of adds; a large one costs code, never an encoding.
  r.pointers[0].address = 0x4c800;
  for (int32_t stride : {-(1 << 20), 1 << 20}) {
    r.pointers[0].stride = stride;
    EXPECT_EQ(outcome(p), "(lowers)") << stride;
  }
}

TEST(PackageEncodable, PatchWordsOfHelperAndSetupPatches) {
  Package p = repeat();
  step_of<PatchStep>(p, 0, {0, 0}).entries[0].word_address = 0x100000;  // helper
  EXPECT_EQ(outcome(p), "p.yaml: tile 0: step 0.0 (patch): entries[0].word: 0x100000" + kSetzi);
  step_of<PatchStep>(p, 0, {0, 0}).entries[0].word_address = 0xffffc;
  EXPECT_EQ(outcome(p),
            "p.yaml: tile 0: step 0.0 (patch): entries[0].word: 0xffffc outside the "
            "table [0x4c000, 0x4c010)");
  p = repeat();
  step_of<PatchStep>(p, 1, {0, 0}).entries[0].word_address = 0x100000;  // setup
  EXPECT_EQ(outcome(p), "p.yaml: tile 1: step 0.0 (patch): entries[0].word: 0x100000" + kSetzi);
  // A bulk patch's words are data for the patcher, not immediates: only the table rule.
  p = repeat();
  step_of<PatchStep>(p, 0, {0, 0}).method = PatchMethod::Bulk;
  EXPECT_EQ(outcome(p), "(lowers)");
  step_of<PatchStep>(p, 0, {0, 0}).entries[0].word_address = 0x100000;
  EXPECT_EQ(outcome(p),
            "p.yaml: tile 0: step 0.0 (patch): entries[0].word: 0x100000 outside the "
            "table [0x4c000, 0x4c010)");
}

// Through the built binary: what `package convert` refuses, `run` refuses with the same line.
struct CommandCase {
  const char* name;
  const char* from;
  const char* to;
  const char* message;
};

TEST(PackageEncodable, ConvertAndRunRefuseWithTheFieldNamed) {
  const CommandCase cases[] = {
      {"incoming_base", "incoming_base: 0x60000", "incoming_base: 0x100000",
       "tile 1: step 0 (exchange): incoming_base: 0x100000 does not fit setzi's 20-bit immediate "
       "(0..0xfffff)"},
      {"sync_zone", "sync: 3", "sync: 16", "tile 0: step 1 (sync): zone: 16 does not fit sync's 4-bit zone (0..15)"},
  };
  const std::string dir = testing::temp_dir("package-encodable");
  const std::string text = testing::read_file(testing::source_path("tests/data/packages/point_to_point.yaml"));
  for (const CommandCase& c : cases) {
    std::string bad = text;
    for (size_t at = bad.find(c.from); at != std::string::npos; at = bad.find(c.from, at + 1)) {
      bad.replace(at, std::string(c.from).size(), c.to);
    }
    const std::string path = dir + "/" + c.name + ".yaml";
    testing::write_file(path, bad);
    const std::string line = "error: " + path + ": " + c.message + "\n";
    auto r = testing::run_lockstep({"package", "convert", path, dir + "/out.lkspkg"});
    EXPECT_EQ(r.exit_code, 2) << c.name;
    EXPECT_EQ(r.err, line) << c.name;
    r = testing::run_lockstep({"run", path});
    EXPECT_EQ(r.exit_code, 2) << c.name;
    EXPECT_NE(r.err.find(line), std::string::npos) << c.name << ": " << r.err;
  }
}

TEST(PackageEncodable, ConvertTakesTheLastValuesThatFit) {
  const std::string dir = testing::temp_dir("package-encodable-inside");
  std::string text = testing::read_file(testing::source_path("tests/data/packages/point_to_point.yaml"));
  text.replace(text.find("incoming_base: 0x60000"), 22, "incoming_base: 0xfffff");
  for (size_t at = text.find("sync: 3"); at != std::string::npos; at = text.find("sync: 3", at)) {
    text.replace(at, 7, "sync: 15");
  }
  testing::write_file(dir + "/p.yaml", text);
  const auto r = testing::run_lockstep({"package", "convert", dir + "/p.yaml", dir + "/p.lkspkg"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace lockstep::arch
