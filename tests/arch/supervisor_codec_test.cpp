// The supervisor instructions of the codec against IPU21-DEVICE.md sections 5 and 8: the
// emitter's test vectors, the exchange and compute steps' worked examples, and the fields an
// encode refuses.
#include <gtest/gtest.h>

#include <utility>

#include "arch/instruction.hpp"
#include "tests/arch/instruction_codec_support.hpp"

namespace lockstep::arch {
namespace {

using namespace codec_testing;

// IPU21-DEVICE.md 5.1: the emitter's test vectors, each decoded, described and encoded back.
TEST(InstructionCodec, SupervisorSpecVectors) {
  const std::pair<uint32_t, const char*> vectors[] = {
      {0x01b8f001, "ld32 dest=$m8 base=$m11 index=$m15 offset=1"},
      {0x4fb2f000, "st32 source=$m2 base=$m11 index=$m15 offset=0"},
      {0x22bbffe0, "add dest=$m11 source=$m11 immediate=-32"},
      {0x42800001, "and dest=$m0 source=$m8 immediate=1"},
      {0x427aa002, "shl dest=$m10 source=$m7 immediate=2"},
      {0x13013040, "brz reg=$m0 target=0x4c100"},
      {0x19870000, "setzi reg=$m8 immediate=0x70000"},
      {0x438080a4, "put csr=0xa4 reg=$m8"},
      {0x43f080a7, "put csr=0xa7 reg=$m15"},
      {0x18a18000, "call reg=$m10 target=0x60000"},
      {0x41010070, "get dest=$m1 csr=0x70"},
      // 5.2 and the named constants of 5.1.
      {0x41000000, "get dest=$m0 csr=0x0"},
      {0x41000001, "get dest=$m0 csr=0x1"},
      {0x43008070, "put csr=0x70 reg=$m0"},
      {0x01f01000, "ld32 dest=$m0 base=$m15 index=$m1 offset=0"},
      {0x4f10f000, "st32 source=$m0 base=$m1 index=$m15 offset=0"},
      {0x43000000, "br reg=$m0"},
      {0x41801000, "trap breakpoint=0"},
      {0x41800007, "sync zone=7"},
      {0x40c00001, "sans zone=1"},
      // nop is the same word as setzi $m14, 0; it decodes as setzi.
      {0x19e00000, "setzi reg=$m14 immediate=0x0"},
  };
  for (const auto& [word, text] : vectors) {
    const Instruction in = decode_one({word});
    EXPECT_EQ(describe(in), text) << std::hex << word;
    EXPECT_EQ(encode(in), std::vector<uint32_t>{word}) << text;
  }
}

TEST(InstructionCodec, EncodesSupervisorSpecVectorsFromFields) {
  EXPECT_EQ(encode({.op = Opcode::Ld32, .dest = 8, .base = 11, .index = 15, .offset = 1}),
            std::vector<uint32_t>{0x01b8f001});
  EXPECT_EQ(encode({.op = Opcode::St32, .source = 2, .base = 11, .index = 15}), std::vector<uint32_t>{0x4fb2f000});
  EXPECT_EQ(encode({.op = Opcode::Add, .dest = 11, .source = 11, .immediate = -32}), std::vector<uint32_t>{0x22bbffe0});
  EXPECT_EQ(encode({.op = Opcode::And, .dest = 0, .source = 8, .immediate = 1}), std::vector<uint32_t>{0x42800001});
  EXPECT_EQ(encode({.op = Opcode::Shl, .dest = 10, .source = 7, .immediate = 2}), std::vector<uint32_t>{0x427aa002});
  EXPECT_EQ(encode({.op = Opcode::Brz, .reg = 0, .target = 0x4c100}), std::vector<uint32_t>{0x13013040});
  EXPECT_EQ(encode({.op = Opcode::SetZi, .reg = 8, .immediate = 0x70000}), std::vector<uint32_t>{0x19870000});
  EXPECT_EQ(encode({.op = Opcode::Put, .reg = 8, .csr = 0xa4}), std::vector<uint32_t>{0x438080a4});
  EXPECT_EQ(encode({.op = Opcode::Put, .reg = 15, .csr = 0xa7}), std::vector<uint32_t>{0x43f080a7});
  EXPECT_EQ(encode({.op = Opcode::Call, .reg = 10, .target = 0x60000}), std::vector<uint32_t>{0x18a18000});
  EXPECT_EQ(encode({.op = Opcode::Get, .dest = 1, .csr = 0x70}), std::vector<uint32_t>{0x41010070});
}

// IPU21-DEVICE.md 8.2: the active and inactive exchange step, word for word.
TEST(InstructionCodec, ExchangeStepWorkedExample) {
  const Instruction incoming_base{.op = Opcode::SetZi, .reg = 8, .immediate = 0x70000};
  const Instruction put_incoming_base{.op = Opcode::Put, .reg = 8, .csr = 0xa4};
  const Instruction put_outgoing_base{.op = Opcode::Put, .reg = 15, .csr = 0xa7};
  const Instruction call_row{.op = Opcode::Call, .reg = 10, .target = 0x60000};
  const std::vector<uint32_t> active = {0x19870000, 0x438080a4, 0x43f080a7, 0x18714000,
                                        0x19800001, 0x438080a6, 0x41800003, 0x18a18000};
  EXPECT_EQ(encode_all({incoming_base,
                        put_incoming_base,
                        put_outgoing_base,
                        {.op = Opcode::Call, .reg = 7, .target = 0x50000},
                        {.op = Opcode::SetZi, .reg = 8, .immediate = 1},
                        {.op = Opcode::Put, .reg = 8, .csr = 0xa6},
                        {.op = Opcode::Sync, .zone = 3},
                        call_row}),
            active);
  EXPECT_EQ(texts_of(active), (std::vector<std::string>{"setzi reg=$m8 immediate=0x70000", "put csr=0xa4 reg=$m8",
                                                        "put csr=0xa7 reg=$m15", "call reg=$m7 target=0x50000",
                                                        "setzi reg=$m8 immediate=0x1", "put csr=0xa6 reg=$m8",
                                                        "sync zone=3", "call reg=$m10 target=0x60000"}));
  const std::vector<uint32_t> inactive = {0x19870000, 0x438080a4, 0x43f080a7, 0x40c00000, 0x41800001, 0x18a18000};
  EXPECT_EQ(encode_all({incoming_base,
                        put_incoming_base,
                        put_outgoing_base,
                        {.op = Opcode::Sans, .zone = 0},
                        {.op = Opcode::Sync, .zone = 1},
                        call_row}),
            inactive);
}

// IPU21-DEVICE.md 8.3: a kernel launch with output, two inputs and one argument.
TEST(InstructionCodec, ComputeStepWorkedExample) {
  const std::vector<uint32_t> words = {0x19270000, 0x19371000, 0x19472000, 0x19500040, 0x18a14400};
  EXPECT_EQ(encode_all({{.op = Opcode::SetZi, .reg = 2, .immediate = 0x70000},
                        {.op = Opcode::SetZi, .reg = 3, .immediate = 0x71000},
                        {.op = Opcode::SetZi, .reg = 4, .immediate = 0x72000},
                        {.op = Opcode::SetZi, .reg = 5, .immediate = 64},
                        {.op = Opcode::Call, .reg = 10, .target = 0x51000}}),
            words);
  EXPECT_EQ(texts_of(words).back(), "call reg=$m10 target=0x51000");
}

TEST(InstructionCodec, SupervisorEncodeNamesTheFieldThatDoesNotFit) {
  const std::pair<Instruction, const char*> refused[] = {
      {{.op = Opcode::SetZi, .immediate = 1 << 20}, "immediate"},
      {{.op = Opcode::SetZi, .immediate = -1}, "immediate"},
      {{.op = Opcode::SetZi, .reg = 16}, "reg"},
      {{.op = Opcode::Add, .immediate = 32768}, "immediate"},
      {{.op = Opcode::Add, .immediate = -32769}, "immediate"},
      {{.op = Opcode::Shl, .immediate = 4096}, "immediate"},
      {{.op = Opcode::Ld32, .offset = 4096}, "offset"},
      {{.op = Opcode::St32, .base = 16}, "base"},
      {{.op = Opcode::Put, .csr = 256}, "csr"},
      {{.op = Opcode::Call, .target = 0x60002}, "word aligned"},
      {{.op = Opcode::Brz, .target = 1u << 21}, "target"},
      {{.op = Opcode::Br, .reg = 10}, "Return"},
      {{.op = Opcode::Trap, .breakpoint = 16}, "breakpoint"},
      // A field the instruction lacks must keep its default.
      {{.op = Opcode::SetZi, .dest = 1}, "field dest"},
      {{.op = Opcode::Ld32, .source = 1}, "field source"},
      {{.op = Opcode::Get, .reg = 1}, "field reg"},
      {{.op = Opcode::Send, .immediate = 1}, "field immediate"},
      {{.op = Opcode::Delay, .pic_selector = 1}, "field ps"},
      {{.op = Opcode::SendPicP, .pic_selector = 2}, "ps"},
  };
  for (const auto& [instruction, field] : refused) {
    EXPECT_NE(encode_failure(instruction).find(field), std::string::npos) << describe(instruction) << ": " << field;
  }
}

}  // namespace
}  // namespace lockstep::arch
