// The exchange instruction codec against IPU21-EXCHANGE.md sections 4 and 9.
#include <gtest/gtest.h>

#include <random>

#include "arch/instruction.hpp"

namespace lockstep::arch {
namespace {

Instruction decode_one(std::vector<uint32_t> words) {
  const auto decoded = decode(words, 0);
  EXPECT_EQ(decoded.word_count, words.size());
  return decoded.instruction;
}

std::string text_of(std::vector<uint32_t> words) { return describe(decode_one(words)); }

uint64_t offset_of_failure(const std::vector<uint32_t>& words, size_t index) {
  try {
    decode(words, index);
  } catch (const DecodeError& e) {
    return e.byte_offset();
  }
  ADD_FAILURE() << "decode accepted word " << std::hex << words[index];
  return UINT64_MAX;
}

std::string encode_failure(const Instruction& in) {
  try {
    encode(in);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "encode accepted " << describe(in);
  return "";
}

TEST(InstructionCodec, SpecExamples) {
  EXPECT_EQ(text_of({0x7fec0003}), "send words=64 address=0x18000 sctl=3");
  EXPECT_EQ(text_of({0x70e0c001}), "sendoff words=200 delta=0 sctl=1");
  EXPECT_EQ(text_of({0x71398010}), "sendpic words=10 selector=2 value=0x18010");
  EXPECT_EQ(text_of({0xf26c0802, 0x048d9000}),
            "sendpicp words=20 address=0x18100 sctl=2 ps=0 xpic=0x123 xpic_paired=0 pic=0x19000");
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
  EXPECT_EQ(text_of({0x641c0000}), "delayxpic events=113 selector=0 value=0x0");
  EXPECT_EQ(text_of({0x641c0000 | 53}), "delayxpic events=113 selector=0 value=0x35");
  // A
  EXPECT_EQ(text_of({0x64008640}), "delayxpic events=3 selector=0 value=0x640");
  EXPECT_EQ(text_of({0x61800000}), "delaypic events=49 selector=0 value=0x0");
  EXPECT_EQ(text_of({0x40a00007}), "delay events=8");
  // B
  EXPECT_EQ(text_of({0x61d00000}), "delaypic events=59 selector=0 value=0x0");
  EXPECT_EQ(text_of({0x64000640}), "delayxpic events=1 selector=0 value=0x640");
  EXPECT_EQ(text_of({0x40a00038}), "delay events=57");
  // C
  EXPECT_EQ(text_of({0x61980000}), "delaypic events=52 selector=0 value=0x0");
  EXPECT_EQ(text_of({0x64030640}), "delayxpic events=13 selector=0 value=0x640");
  // D
  EXPECT_EQ(text_of({0x67ffc640}), "delayxpic events=4096 selector=0 value=0x640");
}

TEST(InstructionCodec, DecodesWholeVectorRows) {
  const std::vector<uint32_t> sender = {0x41800003, 0x40a0007d, 0x7fe00002, 0x70000002,
                                        0x43a00000};
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
                                          0x67ffc640, 0x40a00038, 0x43a00000};
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
    case Opcode::Delay: in.events = pick(1, 1u << 19); break;
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
      in.paired_stream = pick(0, 1) != 0;
      in.xpic = pick(0, (1u << 13) - 1);
      in.xpic_paired = pick(0, 1) != 0;
      in.pic = pick(0, (1u << 18) - 1);
      break;
    case Opcode::Sync:
    case Opcode::Sans: in.zone = pick(0, 15); break;
    case Opcode::Return: break;
  }
  return in;
}

TEST(InstructionCodec, RoundTripsEveryOpcodeWithRandomAndEdgeFields) {
  std::mt19937 rng(20261129);
  const Opcode ops[] = {Opcode::Delay,   Opcode::DelayPic, Opcode::DelayXpic, Opcode::Send,
                        Opcode::SendOff, Opcode::SendPic,  Opcode::SendPicP,  Opcode::Sync,
                        Opcode::Sans,    Opcode::Return};
  for (const Opcode op : ops) {
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
  EXPECT_EQ(offset_of_failure({0x43900000}, 0), 0u);  // br $m9 is not a row end
  EXPECT_EQ(offset_of_failure({0x41800010}, 0), 0u);  // sync zone 16
  EXPECT_EQ(offset_of_failure({0x18000000}, 0), 0u);  // call: supervisor code, not row
  EXPECT_EQ(offset_of_failure({0x70102000}, 0), 0u);  // sendpic XPIC value over 13 bits
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
  EXPECT_EQ(names, (std::vector<std::string>{"words", "address", "sctl", "ps", "xpic",
                                             "xpic_paired", "pic"}));
  Instruction r;
  r.op = Opcode::Return;
  EXPECT_TRUE(fields_of(r).empty());
}

}  // namespace
}  // namespace lockstep::arch
