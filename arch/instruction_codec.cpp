// Bit-level encoding of the exchange instructions (IPU21-EXCHANGE.md section 4).
#include <cstdio>
#include <stdexcept>

#include "arch/instruction.hpp"

namespace lockstep::arch {
namespace {

// Fixed bit patterns (mask -> value) of section 4.
constexpr uint32_t kDelayMask = 0xfff80000u, kDelayValue = 0x40a00000u;
constexpr uint32_t kPicMask = 0xfc000000u, kDelayPicValue = 0x60000000u,
                   kDelayXpicValue = 0x64000000u;
constexpr uint32_t kSendMask = 0xf8000000u, kSendValue = 0x78000000u;
constexpr uint32_t kSendOffMask = 0xf8100000u, kSendOffValue = 0x70000000u,
                   kSendPicValue = 0x70100000u;
constexpr uint32_t kSendPicPMask = 0xf0000000u, kSendPicPValue = 0xf0000000u;
constexpr uint32_t kSyncBase = 0x41800000u;
constexpr uint32_t kSansBase = 0x40c00000u;
constexpr uint32_t kReturnWord = 0x43a00000u;  // br $m10
// sync and sans carry a zone in their low bits; the spec names zones 0..15.
constexpr uint32_t kZoneLimit = 16;

constexpr uint32_t bits(uint32_t word, unsigned low, unsigned count) {
  return (word >> low) & ((1u << count) - 1u);
}

std::string opname(Opcode op) { return mnemonic(op); }

void check_range(const Instruction& in, const char* field, uint64_t value, uint64_t min,
                 uint64_t max) {
  if (value < min || value > max) {
    throw std::invalid_argument(opname(in.op) + ": " + field + " = " + std::to_string(value) +
                                " does not fit (allowed " + std::to_string(min) + ".." +
                                std::to_string(max) + ")");
  }
}

// A field the instruction does not have must keep its default, so that a caller who sets
// `events` on a send (instead of `words`) hears about it instead of sending one word.
void check_unused(const Instruction& in, bool uses_events, bool uses_words, bool uses_address,
                  bool uses_delta, bool uses_sctl, bool uses_selector, bool uses_value,
                  bool uses_payload, bool uses_zone) {
  const Instruction defaults;
  auto require = [&](bool used, const char* field, bool is_default) {
    if (!used && !is_default) {
      throw std::invalid_argument(opname(in.op) + ": field " + field +
                                  " is not part of this instruction and must keep its default");
    }
  };
  require(uses_events, "events", in.events == defaults.events);
  require(uses_words, "words", in.words == defaults.words);
  require(uses_address, "address", in.address == defaults.address);
  require(uses_delta, "delta", in.delta == defaults.delta);
  require(uses_sctl, "sctl", in.sctl == defaults.sctl);
  require(uses_selector, "selector", in.selector == defaults.selector);
  require(uses_value, "value", in.value == defaults.value);
  require(uses_payload, "pic", in.pic == defaults.pic);
  require(uses_payload, "xpic", in.xpic == defaults.xpic);
  require(uses_payload, "xpic_paired", in.xpic_paired == defaults.xpic_paired);
  require(uses_payload, "ps", in.paired_stream == defaults.paired_stream);
  require(uses_zone, "zone", in.zone == defaults.zone);
}

[[noreturn]] void reject(size_t index, uint32_t word, const char* why) {
  char text[128];
  std::snprintf(text, sizeof text, "byte offset %zu: word %08x: %s", index * 4, word, why);
  throw DecodeError(index * 4, text);
}

}  // namespace

void encode_into(const Instruction& in, std::vector<uint32_t>& out) {
  switch (in.op) {
    case Opcode::Delay:
      check_unused(in, true, false, false, false, false, false, false, false, false);
      check_range(in, "events", in.events, 1, 1u << 19);
      out.push_back(kDelayValue | (in.events - 1));
      return;
    case Opcode::DelayPic:
      check_unused(in, true, false, false, false, false, true, true, false, false);
      check_range(in, "events", in.events, 1, 128);
      check_range(in, "selector", in.selector, 0, 1);
      check_range(in, "value", in.value, 0, (1u << 18) - 1);
      out.push_back(kDelayPicValue | ((in.events - 1) << 19) | (in.selector << 18) | in.value);
      return;
    case Opcode::DelayXpic:
      check_unused(in, true, false, false, false, false, true, true, false, false);
      check_range(in, "events", in.events, 1, 4096);
      check_range(in, "selector", in.selector, 0, 1);
      check_range(in, "value", in.value, 0, (1u << 13) - 1);
      out.push_back(kDelayXpicValue | ((in.events - 1) << 14) | (in.selector << 13) | in.value);
      return;
    case Opcode::Send:
      check_unused(in, false, true, true, false, true, false, false, false, false);
      check_range(in, "words", in.words, 1, 64);
      check_range(in, "address", in.address, 0, (1u << 18) - 1);
      check_range(in, "sctl", in.sctl, 0, 7);
      out.push_back(kSendValue | ((in.words - 1) << 21) | (in.address << 3) | in.sctl);
      return;
    case Opcode::SendOff: {
      check_unused(in, false, true, false, true, true, false, false, false, false);
      check_range(in, "words", in.words, 1, 4096);
      check_range(in, "delta", in.delta, 0, (1u << 11) - 1);
      check_range(in, "sctl", in.sctl, 0, 7);
      const uint32_t n = in.words - 1;
      out.push_back(kSendOffValue | ((n & 0x3fu) << 21) | ((n >> 6) << 14) | (in.delta << 3) |
                    in.sctl);
      return;
    }
    case Opcode::SendPic:
      check_unused(in, false, true, false, false, false, true, true, false, false);
      check_range(in, "words", in.words, 1, 64);
      check_range(in, "selector", in.selector, 0, 3);
      // Selectors 0/1 are the XPIC forms, whose value is 13 bits wide.
      check_range(in, "value", in.value, 0, in.selector < 2 ? (1u << 13) - 1 : (1u << 18) - 1);
      out.push_back(kSendPicValue | ((in.words - 1) << 21) | (in.selector << 18) | in.value);
      return;
    case Opcode::SendPicP:
      check_unused(in, false, true, true, false, true, false, false, true, false);
      check_range(in, "words", in.words, 1, 64);
      check_range(in, "address", in.address, 0, (1u << 18) - 1);
      check_range(in, "sctl", in.sctl, 0, 7);
      check_range(in, "xpic", in.xpic, 0, (1u << 13) - 1);
      check_range(in, "pic", in.pic, 0, (1u << 18) - 1);
      out.push_back(kSendPicPValue | (uint32_t{in.paired_stream} << 27) | ((in.words - 1) << 21) |
                    (in.address << 3) | in.sctl);
      out.push_back((uint32_t{in.xpic_paired} << 31) | (in.xpic << 18) | in.pic);
      return;
    case Opcode::Sync:
      check_unused(in, false, false, false, false, false, false, false, false, true);
      check_range(in, "zone", in.zone, 0, kZoneLimit - 1);
      out.push_back(kSyncBase + in.zone);
      return;
    case Opcode::Sans:
      check_unused(in, false, false, false, false, false, false, false, false, true);
      check_range(in, "zone", in.zone, 0, kZoneLimit - 1);
      out.push_back(kSansBase + in.zone);
      return;
    case Opcode::Return:
      check_unused(in, false, false, false, false, false, false, false, false, false);
      out.push_back(kReturnWord);
      return;
  }
  throw std::invalid_argument("op: unknown opcode " + std::to_string(static_cast<int>(in.op)));
}

std::vector<uint32_t> encode(const Instruction& instruction) {
  std::vector<uint32_t> words;
  words.reserve(2);
  encode_into(instruction, words);
  return words;
}

DecodedInstruction decode(std::span<const uint32_t> words, size_t index) {
  if (index >= words.size()) {
    throw DecodeError(index * 4, "byte offset " + std::to_string(index * 4) +
                                     ": past the end of the row (no br $m10)");
  }
  const uint32_t w = words[index];
  DecodedInstruction out{Instruction{}, 1};
  Instruction& in = out.instruction;
  if ((w & kSendPicPMask) == kSendPicPValue) {
    if (index % 2 != 0) reject(index, w, "sendpicp at an odd word index (must be 8-byte aligned)");
    if (index + 1 >= words.size()) reject(index, w, "sendpicp without its payload word");
    const uint32_t payload = words[index + 1];
    in.op = Opcode::SendPicP;
    in.paired_stream = bits(w, 27, 1) != 0;
    in.words = bits(w, 21, 6) + 1;
    in.address = bits(w, 3, 18);
    in.sctl = bits(w, 0, 3);
    in.xpic_paired = bits(payload, 31, 1) != 0;
    in.xpic = bits(payload, 18, 13);
    in.pic = bits(payload, 0, 18);
    out.word_count = 2;
  } else if ((w & kSendMask) == kSendValue) {
    in.op = Opcode::Send;
    in.words = bits(w, 21, 6) + 1;
    in.address = bits(w, 3, 18);
    in.sctl = bits(w, 0, 3);
  } else if ((w & kSendOffMask) == kSendOffValue) {
    in.op = Opcode::SendOff;
    in.words = (bits(w, 21, 6) | (bits(w, 14, 6) << 6)) + 1;
    in.delta = bits(w, 3, 11);
    in.sctl = bits(w, 0, 3);
  } else if ((w & kSendOffMask) == kSendPicValue) {
    in.op = Opcode::SendPic;
    in.words = bits(w, 21, 6) + 1;
    in.selector = bits(w, 18, 2);
    in.value = bits(w, 0, 18);
    // XPIC forms hold a 13-bit value; bits 13-17 set there is not an encoding we know.
    if (in.selector < 2 && in.value >= (1u << 13)) {
      reject(index, w, "sendpic with an XPIC selector and a value wider than 13 bits");
    }
  } else if ((w & kPicMask) == kDelayPicValue) {
    in.op = Opcode::DelayPic;
    in.events = bits(w, 19, 7) + 1;
    in.selector = bits(w, 18, 1);
    in.value = bits(w, 0, 18);
  } else if ((w & kPicMask) == kDelayXpicValue) {
    in.op = Opcode::DelayXpic;
    in.events = bits(w, 14, 12) + 1;
    in.selector = bits(w, 13, 1);
    in.value = bits(w, 0, 13);
  } else if ((w & kDelayMask) == kDelayValue) {
    in.op = Opcode::Delay;
    in.events = bits(w, 0, 19) + 1;
  } else if (w - kSyncBase < kZoneLimit) {
    in.op = Opcode::Sync;
    in.zone = w - kSyncBase;
  } else if (w - kSansBase < kZoneLimit) {
    in.op = Opcode::Sans;
    in.zone = w - kSansBase;
  } else if (w == kReturnWord) {
    in.op = Opcode::Return;
  } else {
    reject(index, w, "not an exchange row instruction");
  }
  return out;
}

std::vector<DecodedInstruction> decode_row(std::span<const uint32_t> words) {
  std::vector<DecodedInstruction> row;
  size_t index = 0;
  for (;;) {
    if (index >= words.size()) {
      throw DecodeError(index * 4, "byte offset " + std::to_string(index * 4) +
                                       ": row runs off the end without br $m10");
    }
    row.push_back(decode(words, index));
    if (row.back().instruction.op == Opcode::Return) return row;
    index += row.back().word_count;
  }
}

}  // namespace lockstep::arch
