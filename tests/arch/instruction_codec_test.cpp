// The instruction codec against IPU21-EXCHANGE.md sections 4 and 9 and IPU21-DEVICE.md
// sections 5 and 8 (the supervisor's worked examples: supervisor_codec_test.cpp).
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "arch/instruction.hpp"
#include "tests/arch/instruction_codec_support.hpp"

namespace lockstep::arch {
namespace {

using namespace codec_testing;

constexpr Opcode kAllOpcodes[] = {Opcode::Delay,   Opcode::DelayPic, Opcode::DelayXpic, Opcode::Send, Opcode::SendOff,
                                  Opcode::SendPic, Opcode::SendPicP, Opcode::Sync,      Opcode::Sans, Opcode::Return,
                                  Opcode::SetZi,   Opcode::Add,      Opcode::And,       Opcode::Shl,  Opcode::Ld32,
                                  Opcode::St32,    Opcode::Put,      Opcode::Get,       Opcode::Br,   Opcode::Call,
                                  Opcode::Brz,     Opcode::Trap};

uint64_t offset_of_failure(const std::vector<uint32_t>& words, size_t index) {
  try {
    decode(words, index);
  } catch (const DecodeError& e) {
    return e.byte_offset();
  }
  ADD_FAILURE() << "decode accepted word " << std::hex << words[index];
  return UINT64_MAX;
}

TEST(InstructionCodec, SpecExamples) {
  EXPECT_EQ(text_of({0x7fec0003}), "send words=64 address=0x18000 sctl=3");
  EXPECT_EQ(text_of({0x70e0c001}), "sendoff words=200 delta=0 sctl=1");
  EXPECT_EQ(text_of({0x71398010}), "sendpic words=10 selector=2 value=0x18010");
  EXPECT_EQ(text_of({0xf26c0802, 0x048d9000}),
            "sendpicp words=20 address=0x18100 sctl=2 ps=0 xpic=0x123 (tile 291) xpic_paired=0 "
            "pic=0x19000");
  EXPECT_EQ(text_of({0x43a00000}), "br $m10");
  EXPECT_EQ(text_of({0x41800003}), "sync zone=3");
  EXPECT_EQ(text_of({0x40c00000}), "sans zone=0");
}

TEST(InstructionCodec, SectionNineSenderRows) {
  // A: delay 135; send 3 items, sctl 1.
  EXPECT_EQ(text_of({0x40a00086}), "delay events=135");
  EXPECT_EQ(text_of({0x78400001}), "send words=3 address=0x0 sctl=1");
  // B: delay 63; send 52, sctl 2.
  EXPECT_EQ(text_of({0x40a0003e}), "delay events=63");
  EXPECT_EQ(text_of({0x7e600002}), "send words=52 address=0x0 sctl=2");
  // C: delay 126; send 64, sctl 2; sendoff 1, delta 0, sctl 2.
  EXPECT_EQ(text_of({0x40a0007d}), "delay events=126");
  EXPECT_EQ(text_of({0x7fe00002}), "send words=64 address=0x0 sctl=2");
  EXPECT_EQ(text_of({0x70000002}), "sendoff words=1 delta=0 sctl=2");
  // D: delay 109; send 64, sctl 1; sendoff 4084 (low 51, high 63), sctl 1.
  EXPECT_EQ(text_of({0x40a0006c}), "delay events=109");
  EXPECT_EQ(text_of({0x7fe00001}), "send words=64 address=0x0 sctl=1");
  EXPECT_EQ(text_of({0x766fc001}), "sendoff words=4084 delta=0 sctl=1");
}

TEST(InstructionCodec, SectionNineReceiverRows) {
  EXPECT_EQ(text_of({0x641c0000}), "delayxpic events=113 selector=0 value=0x0 (tile 0)");
  EXPECT_EQ(text_of({0x641c0000 | 53}), "delayxpic events=113 selector=0 value=0x35 (tile 53)");
  // A
  EXPECT_EQ(text_of({0x64008640}), "delayxpic events=3 selector=0 value=0x640 (neutral)");
  EXPECT_EQ(text_of({0x61800000}), "delaypic events=49 selector=0 value=0x0");
  EXPECT_EQ(text_of({0x40a00007}), "delay events=8");
  // B
  EXPECT_EQ(text_of({0x61d00000}), "delaypic events=59 selector=0 value=0x0");
  EXPECT_EQ(text_of({0x64000640}), "delayxpic events=1 selector=0 value=0x640 (neutral)");
  EXPECT_EQ(text_of({0x40a00038}), "delay events=57");
  // C
  EXPECT_EQ(text_of({0x61980000}), "delaypic events=52 selector=0 value=0x0");
  EXPECT_EQ(text_of({0x64030640}), "delayxpic events=13 selector=0 value=0x640 (neutral)");
  // D
  EXPECT_EQ(text_of({0x67ffc640}), "delayxpic events=4096 selector=0 value=0x640 (neutral)");
}

TEST(InstructionCodec, DecodesWholeVectorRows) {
  const std::vector<uint32_t> sender = {0x41800003, 0x40a0007d, 0x7fe00002, 0x70000002, 0x43a00000};
  const auto row = decode_row(sender);
  ASSERT_EQ(row.size(), 5u);
  uint64_t events = 0;
  for (const auto& d : row) {
    const auto& in = d.instruction;
    if (in.op == Opcode::Delay) events += in.events;
    if (in.op == Opcode::Send || in.op == Opcode::SendOff) events += in.words;
  }
  EXPECT_EQ(events, 191u);  // section 9: C sender ends at 191
  EXPECT_EQ(row.back().instruction.op, Opcode::Return);

  const std::vector<uint32_t> receiver = {0x41800003, 0x641c0000 | 1024, 0x61980000,
                                          0x67ffc640, 0x40a00038,        0x43a00000};
  uint64_t t = 0;
  for (const auto& d : decode_row(receiver)) {
    if (d.instruction.op != Opcode::Sync && d.instruction.op != Opcode::Return) {
      t += d.instruction.events;
    }
  }
  EXPECT_EQ(t, 4318u);  // section 9: D receiver ends at 4318
}

TEST(InstructionCodec, EncodesSpecExamples) {
  Instruction send;
  send.op = Opcode::Send;
  send.words = 64;
  send.address = 0x18000;
  send.sctl = 3;
  EXPECT_EQ(encode(send), std::vector<uint32_t>{0x7fec0003});

  Instruction p;
  p.op = Opcode::SendPicP;
  p.words = 20;
  p.address = 0x18100;
  p.sctl = 2;
  p.xpic = 0x123;
  p.pic = 0x19000;
  EXPECT_EQ(encode(p), (std::vector<uint32_t>{0xf26c0802, 0x048d9000}));

  Instruction off;
  off.op = Opcode::SendOff;
  off.words = 4084;
  off.sctl = 1;
  EXPECT_EQ(encode(off), std::vector<uint32_t>{0x766fc001});

  Instruction ret;
  ret.op = Opcode::Return;
  EXPECT_EQ(encode(ret), std::vector<uint32_t>{0x43a00000});
}

// Fields of a supervisor instruction, each in range, chosen by pick(lo, hi).
template <typename Pick>
void random_supervisor_fields(Instruction& in, Pick pick) {
  auto reg = [&] { return pick(0, 15); };
  auto imm = [&](int32_t lo, int32_t hi) { return static_cast<int32_t>(pick(0, static_cast<uint32_t>(hi - lo))) + lo; };
  switch (in.op) {
    case Opcode::SetZi:
      in.reg = reg();
      in.immediate = imm(0, (1 << 20) - 1);
      break;
    case Opcode::Add:
    case Opcode::And:
    case Opcode::Shl:
      in.dest = reg();
      in.source = reg();
      in.immediate = in.op == Opcode::Add ? imm(-32768, 32767) : imm(0, 4095);
      break;
    case Opcode::Ld32:
    case Opcode::St32:
      (in.op == Opcode::Ld32 ? in.dest : in.source) = reg();
      in.base = reg();
      in.index = reg();
      in.offset = pick(0, 4095);
      break;
    case Opcode::Put:
      in.reg = reg();
      in.csr = pick(0, 255);
      break;
    case Opcode::Get:
      in.dest = reg();
      in.csr = pick(0, 255);
      break;
    case Opcode::Br:
      in.reg = pick(0, 14);
      if (in.reg >= 10) ++in.reg;  // br $m10 is Opcode::Return
      break;
    case Opcode::Call:
    case Opcode::Brz:
      in.reg = reg();
      in.target = pick(0, (1u << 19) - 1) * 4;
      break;
    case Opcode::Trap:
      in.breakpoint = pick(0, 15);
      break;
    default:
      break;
  }
}

// Random instruction of the given opcode with every field in range; `edge` picks each
// field's minimum or maximum instead.
Instruction random_instruction(Opcode op, std::mt19937& rng, int edge) {
  auto pick = [&](uint32_t lo, uint32_t hi) {
    if (edge == 1) return lo;
    if (edge == 2) return hi;
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  Instruction in;
  in.op = op;
  switch (op) {
    case Opcode::Delay:
      in.events = pick(1, 1u << 19);
      break;
    case Opcode::DelayPic:
      in.events = pick(1, 128);
      in.selector = pick(0, 1);
      in.value = pick(0, (1u << 18) - 1);
      break;
    case Opcode::DelayXpic:
      in.events = pick(1, 4096);
      in.selector = pick(0, 1);
      in.value = pick(0, (1u << 13) - 1);
      break;
    case Opcode::Send:
      in.words = pick(1, 64);
      in.address = pick(0, (1u << 18) - 1);
      in.sctl = pick(0, 7);
      break;
    case Opcode::SendOff:
      in.words = pick(1, 4096);
      in.delta = pick(0, 2047);
      in.sctl = pick(0, 7);
      break;
    case Opcode::SendPic:
      in.words = pick(1, 64);
      in.selector = pick(0, 3);
      in.value = pick(0, in.selector < 2 ? (1u << 13) - 1 : (1u << 18) - 1);
      break;
    case Opcode::SendPicP:
      in.words = pick(1, 64);
      in.address = pick(0, (1u << 18) - 1);
      in.sctl = pick(0, 7);
      in.pic_selector = pick(0, 1);
      in.xpic = pick(0, (1u << 13) - 1);
      in.xpic_paired = pick(0, 1) != 0;
      in.pic = pick(0, (1u << 18) - 1);
      break;
    case Opcode::Sync:
    case Opcode::Sans:
      in.zone = pick(0, 15);
      break;
    case Opcode::Return:
      break;
    default:
      random_supervisor_fields(in, pick);
      break;
  }
  return in;
}

TEST(InstructionCodec, RoundTripsEveryOpcodeWithRandomAndEdgeFields) {
  std::mt19937 rng(20261129);
  for (const Opcode op : kAllOpcodes) {
    for (int trial = 0; trial < 2000; ++trial) {
      const int edge = trial < 2 ? trial + 1 : 0;
      const Instruction in = random_instruction(op, rng, edge);
      const auto words = encode(in);
      ASSERT_EQ(words.size(), op == Opcode::SendPicP ? 2u : 1u);
      const auto decoded = decode(words, 0);
      ASSERT_EQ(decoded.instruction, in) << describe(in) << " vs " << describe(decoded.instruction);
      ASSERT_EQ(decoded.word_count, words.size());
    }
  }
}

TEST(InstructionCodec, EveryDecodableWordEncodesBackToItself) {
  std::mt19937 rng(7);
  size_t accepted = 0;
  for (int trial = 0; trial < 50000; ++trial) {
    // Bias the top bits toward the instruction space so every opcode is hit often.
    uint32_t w = rng();
    if (trial % 2 == 0) w = (w & 0x07ffffffu) | (0x40000000u + (rng() % 16) * 0x08000000u);
    const std::vector<uint32_t> words = {w, static_cast<uint32_t>(rng())};
    DecodedInstruction d;
    try {
      d = decode(words, 0);
    } catch (const DecodeError& e) {
      ASSERT_EQ(e.byte_offset(), 0u);
      continue;
    }
    ++accepted;
    const auto again = encode(d.instruction);
    ASSERT_EQ(again.size(), d.word_count);
    for (size_t i = 0; i < again.size(); ++i) ASSERT_EQ(again[i], words[i]) << std::hex << w;
  }
  EXPECT_GT(accepted, 2500u);
}

TEST(InstructionCodec, RejectsWordsThatAreNoInstruction) {
  EXPECT_EQ(offset_of_failure({0x00000000}, 0), 0u);
  EXPECT_EQ(offset_of_failure({0x41800003, 0x40a00000, 0x7fe00001, 0x12345678}, 3), 12u);
  EXPECT_EQ(offset_of_failure({0x41800010}, 0), 0u);  // sync zone 16
  EXPECT_EQ(offset_of_failure({0x70102000}, 0), 0u);  // sendpic XPIC value over 13 bits
  EXPECT_EQ(offset_of_failure({0x43018000}, 0), 0u);  // put with bits 16-19 set
  EXPECT_EQ(offset_of_failure({0x41100000}, 0), 0u);  // get with bits 20-23 set (not sync)
  EXPECT_EQ(offset_of_failure({0x4200b000}, 0), 0u);  // 0x42 with bits 12-15 neither and nor shl
  EXPECT_EQ(offset_of_failure({0x18080000}, 0), 0u);  // call with bit 19 set
}

TEST(InstructionCodec, RejectsMisplacedOrTruncatedSendPicP) {
  EXPECT_EQ(offset_of_failure({0x41800003, 0xf26c0802, 0x048d9000}, 1), 4u);
  EXPECT_EQ(offset_of_failure({0x41800003, 0x40a00000, 0xf26c0802}, 2), 8u);
  try {
    decode(std::vector<uint32_t>{0x41800003, 0xf26c0802, 0x048d9000}, 1);
  } catch (const DecodeError& e) {
    EXPECT_NE(std::string(e.what()).find("odd"), std::string::npos) << e.what();
  }
}

TEST(InstructionCodec, DecodeRowNeedsReturn) {
  const std::vector<uint32_t> words = {0x41800003, 0x40a00007};
  try {
    decode_row(words);
    FAIL() << "decode_row accepted a row without br $m10";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.byte_offset(), 8u);
  }
  // A Return ends the row even if more words follow.
  const std::vector<uint32_t> longer = {0x43a00000, 0xdeadbeef};
  EXPECT_EQ(decode_row(longer).size(), 1u);
}

TEST(InstructionCodec, EncodeNamesTheFieldThatDoesNotFit) {
  Instruction in;
  in.op = Opcode::Send;
  in.words = 65;
  EXPECT_NE(encode_failure(in).find("words"), std::string::npos);
  in.words = 0;
  EXPECT_NE(encode_failure(in).find("words"), std::string::npos);
  in.words = 1;
  in.address = 1u << 18;
  EXPECT_NE(encode_failure(in).find("address"), std::string::npos);
  in.address = 0;
  in.sctl = 8;
  EXPECT_NE(encode_failure(in).find("sctl"), std::string::npos);
  in.sctl = 1;
  in.events = 5;  // events belongs to delays, not to send
  EXPECT_NE(encode_failure(in).find("events"), std::string::npos);

  Instruction d;
  d.op = Opcode::Delay;
  d.events = (1u << 19) + 1;
  EXPECT_NE(encode_failure(d).find("events"), std::string::npos);
  d.events = 0;
  EXPECT_NE(encode_failure(d).find("events"), std::string::npos);

  Instruction x;
  x.op = Opcode::DelayXpic;
  x.value = 0x2000;
  EXPECT_NE(encode_failure(x).find("value"), std::string::npos);
  x.value = 0;
  x.events = 4097;
  EXPECT_NE(encode_failure(x).find("events"), std::string::npos);

  Instruction p;
  p.op = Opcode::SendPicP;
  p.xpic = 0x2000;
  EXPECT_NE(encode_failure(p).find("xpic"), std::string::npos);
  p.xpic = 0;
  p.pic = 1u << 18;
  EXPECT_NE(encode_failure(p).find("pic"), std::string::npos);

  Instruction o;
  o.op = Opcode::SendOff;
  o.delta = 2048;
  EXPECT_NE(encode_failure(o).find("delta"), std::string::npos);

  Instruction s;
  s.op = Opcode::SendPic;
  s.selector = 4;
  EXPECT_NE(encode_failure(s).find("selector"), std::string::npos);
}

TEST(InstructionCodec, FieldsFollowTheSpecNames) {
  Instruction p;
  p.op = Opcode::SendPicP;
  std::vector<std::string> names;
  for (const auto& f : fields_of(p)) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"words", "address", "sctl", "ps", "xpic", "xpic_paired", "pic"}));
  names.clear();
  for (const auto& f : fields_of({.op = Opcode::Ld32})) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"dest", "base", "index", "offset"}));
  names.clear();
  for (const auto& f : fields_of({.op = Opcode::Put})) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"csr", "reg"}));
  Instruction r;
  r.op = Opcode::Return;
  EXPECT_TRUE(fields_of(r).empty());
}

// The classes of the spec's tables (IPU21-EXCHANGE.md 4, IPU21-DEVICE.md 5.1-5.3), written
// out here independently of the codec: mask -> value.
struct SpecClass {
  uint32_t mask, value;
  Opcode op;
};
constexpr SpecClass kSpecClasses[] = {
    {0xf0000000, 0xf0000000, Opcode::SendPicP}, {0xf8000000, 0x78000000, Opcode::Send},
    {0xf8100000, 0x70000000, Opcode::SendOff},  {0xf8100000, 0x70100000, Opcode::SendPic},
    {0xfc000000, 0x60000000, Opcode::DelayPic}, {0xfc000000, 0x64000000, Opcode::DelayXpic},
    {0xfff80000, 0x40a00000, Opcode::Delay},    {0xfffffff0, 0x41800000, Opcode::Sync},
    {0xfffffff0, 0x40c00000, Opcode::Sans},     {0xff000000, 0x19000000, Opcode::SetZi},
    {0xff000000, 0x22000000, Opcode::Add},      {0xff00f000, 0x42000000, Opcode::And},
    {0xff00f000, 0x4200a000, Opcode::Shl},      {0xff000000, 0x01000000, Opcode::Ld32},
    {0xff000000, 0x4f000000, Opcode::St32},     {0xff0fff00, 0x43008000, Opcode::Put},
    {0xfff0ff00, 0x41000000, Opcode::Get},      {0xff0fffff, 0x43000000, Opcode::Br},
    {0xff080000, 0x18000000, Opcode::Call},     {0xff080000, 0x13000000, Opcode::Brz},
    {0xfffffff0, 0x41801000, Opcode::Trap},
};

// Words near every class (its value, random free bits, a few flipped bits) and the
// boundary values: each matches at most one class, decodes as that class (br $m10 as
// Return), and encodes back to itself.
TEST(InstructionCodec, EveryWordHasAtMostOneClassAndRoundTrips) {
  std::mt19937 rng(20261130);
  std::vector<uint32_t> samples = {0x00000000, 0xffffffff, 0x80000000, 0x7fffffff};
  for (const SpecClass& c : kSpecClasses) {
    samples.push_back(c.value);
    samples.push_back(c.value | ~c.mask);
    for (int i = 0; i < 4000; ++i) {
      uint32_t w = c.value | (rng() & ~c.mask);
      for (int flips = i % 3; flips > 0; --flips) w ^= 1u << (rng() % 32);
      samples.push_back(w);
    }
  }
  for (int i = 0; i < 100000; ++i) samples.push_back(rng());
  std::map<Opcode, size_t> decoded_per_class;
  for (const uint32_t w : samples) {
    std::vector<Opcode> classes;
    for (const SpecClass& c : kSpecClasses) {
      if ((w & c.mask) == c.value) classes.push_back(c.op);
    }
    ASSERT_LE(classes.size(), 1u) << std::hex << w;
    const std::vector<uint32_t> words = {w, static_cast<uint32_t>(rng())};
    DecodedInstruction d;
    try {
      d = decode(words, 0);
    } catch (const DecodeError&) {
      continue;  // no class, a zone over 15, or an XPIC sendpic value over 13 bits
    }
    ASSERT_EQ(classes.size(), 1u) << std::hex << w;
    const Opcode expected = w == 0x43a00000u ? Opcode::Return : classes[0];
    ASSERT_EQ(d.instruction.op, expected) << std::hex << w;
    ++decoded_per_class[expected];
    const auto again = encode(d.instruction);
    ASSERT_EQ(again.size(), d.word_count);
    for (size_t i = 0; i < again.size(); ++i) ASSERT_EQ(again[i], words[i]) << std::hex << w;
  }
  for (const Opcode op : kAllOpcodes) {
    if (op != Opcode::Return) {
      EXPECT_GT(decoded_per_class[op], 100u) << mnemonic(op);
    }
  }
}

TEST(InstructionCodec, RowDecodingRejectsSupervisorWordsByName) {
  const std::pair<uint32_t, const char*> words[] = {{0x19870000, "setzi"}, {0x438080a4, "put"}, {0x18a18000, "call"},
                                                    {0x43900000, "br"},    {0x41010070, "get"}, {0x41801000, "trap"},
                                                    {0x4fb2f000, "st32"}};
  for (const auto& [word, name] : words) {
    const std::vector<uint32_t> row = {0x40a00000, word, 0x43a00000};
    EXPECT_NO_THROW(decode(row, 1));  // a supervisor word on its own decodes
    try {
      decode_row(row);
      ADD_FAILURE() << "decode_row accepted " << name;
    } catch (const DecodeError& e) {
      EXPECT_EQ(e.byte_offset(), 4u);
      EXPECT_NE(std::string(e.what()).find(std::string(name) + " is supervisor code"), std::string::npos) << e.what();
    }
  }
  try {
    decode_row_word(std::vector<uint32_t>{0x12345678}, 0);
    ADD_FAILURE() << "decode_row_word accepted an unknown word";
  } catch (const DecodeError& e) {
    EXPECT_NE(std::string(e.what()).find("not an exchange row or supervisor instruction"), std::string::npos);
  }
  EXPECT_TRUE(is_row_instruction(Opcode::Sync));
  EXPECT_TRUE(is_row_instruction(Opcode::Return));
  EXPECT_FALSE(is_row_instruction(Opcode::Br));
}

TEST(InstructionCodec, SendPicPSelectorIsPrefixBit27) {
  Instruction p{.op = Opcode::SendPicP, .words = 20, .address = 0x18100, .sctl = 2};
  p.pic = 1;
  p.pic_selector = 1;
  EXPECT_EQ(encode(p), (std::vector<uint32_t>{0xfa6c0802, 0x00000001}));
  EXPECT_EQ(decode_one({0xfa6c0802, 0x00000001}).pic_selector, 1u);
  EXPECT_EQ(decode_one({0xf26c0802, 0x00000001}).pic_selector, 0u);
}

TEST(InstructionCodec, MuxValuesAreNamed) {
  EXPECT_EQ(mux_value_name(0x640), "neutral");
  EXPECT_EQ(mux_value_name(0x612), "host endpoint 0x12");
  EXPECT_EQ(mux_value_name(0x600), "host endpoint 0x0");
  EXPECT_EQ(mux_value_name(0x63f), "host endpoint 0x3f");
  EXPECT_EQ(mux_value_name(53), "tile 53");
  EXPECT_EQ(mux_value_name(1471), "tile 1471");
  EXPECT_EQ(mux_value_name(1472), "unknown");
  EXPECT_EQ(mux_value_name(0x641), "unknown");
  EXPECT_EQ(text_of({0x70000612 | 0x00100000}), "sendpic words=1 selector=0 value=0x612 (host endpoint 0x12)");
  EXPECT_EQ(text_of({0x70140640}), "sendpic words=1 selector=1 value=0x640 (neutral)");
  EXPECT_EQ(text_of({0x70180640}), "sendpic words=1 selector=2 value=0x640");  // a PIC value
  EXPECT_EQ(text_of({0x60000640}), "delaypic events=1 selector=0 value=0x640");
}

}  // namespace
}  // namespace lockstep::arch
