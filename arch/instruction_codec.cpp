// Bit-level encoding of the exchange row instructions (IPU21-EXCHANGE.md section 4) and of
// the supervisor words (IPU21-DEVICE.md sections 5.1 and 5.2).
#include <cstdio>
#include <stdexcept>

#include "arch/instruction.hpp"
#include "arch/instruction_fields.hpp"

namespace lockstep::arch {
namespace {

// Fixed bit patterns (mask -> value). No word matches two patterns, except that br $m10
// (Return) is also a br word: Return is tried first.
struct Pattern {
  uint32_t mask;
  uint32_t value;
  Opcode op;
};
constexpr Pattern kPatterns[] = {
    {0xf0000000u, 0xf0000000u, Opcode::SendPicP},
    {0xf8000000u, 0x78000000u, Opcode::Send},
    {0xf8100000u, 0x70000000u, Opcode::SendOff},
    {0xf8100000u, 0x70100000u, Opcode::SendPic},
    {0xfc000000u, 0x60000000u, Opcode::DelayPic},
    {0xfc000000u, 0x64000000u, Opcode::DelayXpic},
    {0xfff80000u, 0x40a00000u, Opcode::Delay},
    {0xfffffff0u, 0x41800000u, Opcode::Sync},  // zone in bits 0-3
    {0xfffffff0u, 0x40c00000u, Opcode::Sans},
    {0xffffffffu, 0x43a00000u, Opcode::Return},
    // nop (0x19e00000) is also setzi $m14, 0 (IPU21-DEVICE.md 5.2); it decodes as setzi.
    {0xff000000u, 0x19000000u, Opcode::SetZi},
    {0xff000000u, 0x22000000u, Opcode::Add},
    // and and shl share 0x42: bits 12-15 tell them apart (0 = and, 0xa = shl).
    {0xff00f000u, 0x42000000u, Opcode::And},
    {0xff00f000u, 0x4200a000u, Opcode::Shl},
    {0xff000000u, 0x01000000u, Opcode::Ld32},
    {0xff000000u, 0x4f000000u, Opcode::St32},
    {0xff0fff00u, 0x43008000u, Opcode::Put},
    // get has bits 20-23 zero, which keeps it apart from sync and trap (bits 20-23 = 8).
    {0xfff0ff00u, 0x41000000u, Opcode::Get},
    {0xff0fffffu, 0x43000000u, Opcode::Br},
    {0xff080000u, 0x18000000u, Opcode::Call},  // bit 19 above the 19-bit word target
    {0xff080000u, 0x13000000u, Opcode::Brz},
    {0xfffffff0u, 0x41801000u, Opcode::Trap},
};

constexpr uint32_t base_of(Opcode op) {
  for (const Pattern& p : kPatterns) {
    if (p.op == op) return p.value;
  }
  return 0;
}

constexpr uint32_t kReturnRegister = 10;

constexpr uint32_t bits(uint32_t word, unsigned low, unsigned count) { return (word >> low) & ((1u << count) - 1u); }

[[noreturn]] void reject(size_t index, uint32_t word, const std::string& why) {
  char text[48];
  std::snprintf(text, sizeof text, "byte offset %zu: word %08x: ", index * 4, word);
  throw DecodeError(index * 4, text + why);
}

// Fields are checked (check_fields) before these pack them.
void encode_row_family(const Instruction& in, std::vector<uint32_t>& out) {
  const uint32_t base = base_of(in.op);
  switch (in.op) {
    case Opcode::Delay:
      out.push_back(base | (in.events - 1));
      return;
    case Opcode::DelayPic:
      out.push_back(base | ((in.events - 1) << 19) | (in.selector << 18) | in.value);
      return;
    case Opcode::DelayXpic:
      out.push_back(base | ((in.events - 1) << 14) | (in.selector << 13) | in.value);
      return;
    case Opcode::Send:
      out.push_back(base | ((in.words - 1) << 21) | (in.address << 3) | in.sctl);
      return;
    case Opcode::SendOff: {
      const uint32_t n = in.words - 1;
      out.push_back(base | ((n & 0x3fu) << 21) | ((n >> 6) << 14) | (in.delta << 3) | in.sctl);
      return;
    }
    case Opcode::SendPic:
      // Selectors 0/1 are the XPIC forms, whose value is as wide as sendpicp's xpic.
      if (in.selector < 2 && !fits(Opcode::SendPicP, Field::Xpic, in.value)) {
        throw std::invalid_argument("sendpic: value = " + std::to_string(in.value) +
                                    " does not fit (allowed 0..8191 with an XPIC selector)");
      }
      out.push_back(base | ((in.words - 1) << 21) | (in.selector << 18) | in.value);
      return;
    case Opcode::SendPicP:
      out.push_back(base | (in.pic_selector << 27) | ((in.words - 1) << 21) | (in.address << 3) | in.sctl);
      out.push_back((uint32_t{in.xpic_paired} << 31) | (in.xpic << 18) | in.pic);
      return;
    case Opcode::Sync:
    case Opcode::Sans:
      out.push_back(base | in.zone);
      return;
    case Opcode::Return:
      out.push_back(base);
      return;
    default:
      throw std::logic_error(mnemonic(in.op) + ": not a row instruction");
  }
}

// ld32 and st32: <value register><<16 | base<<20 | index<<12 | offset.
uint32_t encode_memory(const Instruction& in, uint32_t value_register) {
  return base_of(in.op) | (in.base << 20) | (value_register << 16) | (in.index << 12) | in.offset;
}

// add, and, shl: source<<20 | dest<<16 | immediate field.
uint32_t encode_arithmetic(const Instruction& in) {
  return base_of(in.op) | (in.source << 20) | (in.dest << 16) | (static_cast<uint32_t>(in.immediate) & 0xffffu);
}

uint32_t encode_supervisor(const Instruction& in) {
  const uint32_t base = base_of(in.op);
  switch (in.op) {
    case Opcode::SetZi:
      return base | (in.reg << 20) | static_cast<uint32_t>(in.immediate);
    case Opcode::Add:
    case Opcode::And:
    case Opcode::Shl:
      return encode_arithmetic(in);
    case Opcode::Ld32:
      return encode_memory(in, in.dest);
    case Opcode::St32:
      return encode_memory(in, in.source);
    case Opcode::Put:
      return base | (in.reg << 20) | in.csr;
    case Opcode::Get:
      return base | (in.dest << 16) | in.csr;
    case Opcode::Br:
      if (in.reg == kReturnRegister) {
        throw std::invalid_argument("br: reg = 10 is the row return: use Opcode::Return");
      }
      return base | (in.reg << 20);
    case Opcode::Call:
    case Opcode::Brz:  // reg<<20 | target word address
      return base | (in.reg << 20) | (in.target >> 2);
    case Opcode::Trap:
      return base | in.breakpoint;
    default:
      throw std::logic_error(mnemonic(in.op) + ": not a supervisor instruction");
  }
}

const Pattern* find_pattern(uint32_t word) {
  for (const Pattern& p : kPatterns) {
    if ((word & p.mask) == p.value) return &p;
  }
  return nullptr;
}

bool is_known(Opcode op) { return static_cast<uint8_t>(op) <= static_cast<uint8_t>(Opcode::Trap); }

void decode_row_family(uint32_t w, Instruction& in) {
  switch (in.op) {
    case Opcode::Delay:
      in.events = bits(w, 0, 19) + 1;
      return;
    case Opcode::DelayPic:
      in.events = bits(w, 19, 7) + 1;
      in.selector = bits(w, 18, 1);
      in.value = bits(w, 0, 18);
      return;
    case Opcode::DelayXpic:
      in.events = bits(w, 14, 12) + 1;
      in.selector = bits(w, 13, 1);
      in.value = bits(w, 0, 13);
      return;
    case Opcode::Send:
      in.words = bits(w, 21, 6) + 1;
      in.address = bits(w, 3, 18);
      in.sctl = bits(w, 0, 3);
      return;
    case Opcode::SendOff:
      in.words = (bits(w, 21, 6) | (bits(w, 14, 6) << 6)) + 1;
      in.delta = bits(w, 3, 11);
      in.sctl = bits(w, 0, 3);
      return;
    case Opcode::SendPic:
      in.words = bits(w, 21, 6) + 1;
      in.selector = bits(w, 18, 2);
      in.value = bits(w, 0, 18);
      return;
    case Opcode::Sync:
    case Opcode::Sans:
      in.zone = bits(w, 0, 4);
      return;
    default:
      return;  // Return has no fields; sendpicp is decoded with its payload
  }
}

void decode_supervisor(uint32_t w, Instruction& in) {
  switch (in.op) {
    case Opcode::SetZi:
      in.reg = bits(w, 20, 4);
      in.immediate = static_cast<int32_t>(bits(w, 0, 20));
      return;
    case Opcode::Add:
      in.source = bits(w, 20, 4);
      in.dest = bits(w, 16, 4);
      in.immediate = static_cast<int16_t>(bits(w, 0, 16));
      return;
    case Opcode::And:
    case Opcode::Shl:
      in.source = bits(w, 20, 4);
      in.dest = bits(w, 16, 4);
      in.immediate = static_cast<int32_t>(bits(w, 0, 12));
      return;
    case Opcode::Ld32:
    case Opcode::St32:
      (in.op == Opcode::Ld32 ? in.dest : in.source) = bits(w, 16, 4);
      in.base = bits(w, 20, 4);
      in.index = bits(w, 12, 4);
      in.offset = bits(w, 0, 12);
      return;
    case Opcode::Put:
      in.reg = bits(w, 20, 4);
      in.csr = bits(w, 0, 8);
      return;
    case Opcode::Get:
      in.dest = bits(w, 16, 4);
      in.csr = bits(w, 0, 8);
      return;
    case Opcode::Br:
      in.reg = bits(w, 20, 4);
      return;
    case Opcode::Call:
    case Opcode::Brz:
      in.reg = bits(w, 20, 4);
      in.target = bits(w, 0, 19) << 2;
      return;
    case Opcode::Trap:
      in.breakpoint = bits(w, 0, 4);
      return;
    default:
      return;
  }
}

void decode_send_pic_p(std::span<const uint32_t> words, size_t index, Instruction& in) {
  const uint32_t w = words[index];
  if (index % 2 != 0) reject(index, w, "sendpicp at an odd word index (must be 8-byte aligned)");
  if (index + 1 >= words.size()) reject(index, w, "sendpicp without its payload word");
  const uint32_t payload = words[index + 1];
  in.pic_selector = bits(w, 27, 1);
  in.words = bits(w, 21, 6) + 1;
  in.address = bits(w, 3, 18);
  in.sctl = bits(w, 0, 3);
  in.xpic_paired = bits(payload, 31, 1) != 0;
  in.xpic = bits(payload, 18, 13);
  in.pic = bits(payload, 0, 18);
}

}  // namespace

bool is_row_instruction(Opcode op) { return static_cast<uint8_t>(op) <= static_cast<uint8_t>(Opcode::Return); }

void encode_into(const Instruction& in, std::vector<uint32_t>& out) {
  if (!is_known(in.op)) {
    throw std::invalid_argument("op: unknown opcode " + std::to_string(static_cast<int>(in.op)));
  }
  check_fields(in);
  if (is_row_instruction(in.op)) {
    encode_row_family(in, out);
  } else {
    out.push_back(encode_supervisor(in));
  }
}

std::vector<uint32_t> encode(const Instruction& instruction) {
  std::vector<uint32_t> words;
  words.reserve(2);
  encode_into(instruction, words);
  return words;
}

DecodedInstruction decode(std::span<const uint32_t> words, size_t index) {
  if (index >= words.size()) {
    throw DecodeError(index * 4, "byte offset " + std::to_string(index * 4) + ": past the end of the row (no br $m10)");
  }
  const uint32_t w = words[index];
  const Pattern* match = find_pattern(w);
  if (match == nullptr) reject(index, w, "not an exchange row or supervisor instruction");
  DecodedInstruction out{Instruction{}, 1};
  Instruction& in = out.instruction;
  in.op = match->op;
  if (in.op == Opcode::SendPicP) {
    decode_send_pic_p(words, index, in);
    out.word_count = 2;
  } else if (is_row_instruction(in.op)) {
    decode_row_family(w, in);
  } else {
    decode_supervisor(w, in);
  }
  // XPIC forms hold a 13-bit value; bits 13-17 set there is not an encoding we know.
  if (in.op == Opcode::SendPic && in.selector < 2 && in.value >= (1u << 13)) {
    reject(index, w, "sendpic with an XPIC selector and a value wider than 13 bits");
  }
  return out;
}

DecodedInstruction decode_row_word(std::span<const uint32_t> words, size_t index) {
  const DecodedInstruction out = decode(words, index);
  if (!is_row_instruction(out.instruction.op)) {
    reject(index, words[index], mnemonic(out.instruction.op) + " is supervisor code, not an exchange row instruction");
  }
  return out;
}

std::vector<DecodedInstruction> decode_row(std::span<const uint32_t> words) {
  std::vector<DecodedInstruction> row;
  size_t index = 0;
  for (;;) {
    if (index >= words.size()) {
      throw DecodeError(index * 4,
                        "byte offset " + std::to_string(index * 4) + ": row runs off the end without br $m10");
    }
    row.push_back(decode_row_word(words, index));
    if (row.back().instruction.op == Opcode::Return) return row;
    index += row.back().word_count;
  }
}

}  // namespace lockstep::arch
