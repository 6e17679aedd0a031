#pragma once
// The IPU21 exchange instruction codec (IPU21-EXCHANGE.md section 4), bit for bit.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace lockstep::arch {

enum class Opcode : uint8_t {
  Delay,      // delay n
  DelayPic,   // delaypic n, sel, v
  DelayXpic,  // delayxpic n, sel, v
  Send,       // send n, a, sctl
  SendOff,    // sendoff n, delta, sctl
  SendPic,    // sendpic n, sel, v
  SendPicP,   // sendpicp n, a, sctl, ps + payload word (xpic, pic)
  Sync,       // sync z
  Sans,       // sans z
  Return,     // br $m10: the end of a row
};

// Field names follow the spec. Counts are stored as events/items (field value + 1).
struct Instruction {
  Opcode op = Opcode::Delay;
  uint32_t events = 1;    // delay, delaypic, delayxpic: events (n+1)
  uint32_t words = 1;     // send, sendoff, sendpic, sendpicp: items sent (n+1)
  uint32_t address = 0;   // send, sendpicp: item address (byte address / 4 or / 8)
  uint32_t delta = 0;     // sendoff
  uint32_t sctl = 0;      // send, sendoff, sendpicp: bit0 dir1, bit1 dir2, bit2 64-bit items
  uint32_t selector = 0;  // delaypic, delayxpic, sendpic
  uint32_t value = 0;     // delaypic, delayxpic, sendpic
  uint32_t pic = 0;       // sendpicp payload: PIC pointer value (bits 0-17)
  uint32_t xpic = 0;      // sendpicp payload: XPIC value (bits 18-30)
  bool paired_stream = false;  // sendpicp prefix bit 27 (ps)
  bool xpic_paired = false;    // sendpicp payload bit 31 (paired mux stream)
  uint32_t zone = 0;      // sync, sans

  bool operator==(const Instruction&) const = default;
};

// Rejected word: carries the byte offset from the start of the decoded row.
class DecodeError : public std::runtime_error {
 public:
  DecodeError(uint64_t byte_offset, const std::string& what)
      : std::runtime_error(what), byte_offset_(byte_offset) {}
  uint64_t byte_offset() const { return byte_offset_; }

 private:
  uint64_t byte_offset_;
};

// Encodes to one word (two for sendpicp). Throws std::invalid_argument naming the field
// when a field does not fit.
std::vector<uint32_t> encode(const Instruction& instruction);
void encode_into(const Instruction& instruction, std::vector<uint32_t>& out);

struct DecodedInstruction {
  Instruction instruction;
  uint32_t word_count;  // 1, or 2 for sendpicp
};

// Decodes the instruction starting at words[index]. Throws DecodeError with byte offset
// `index * 4` for a word that is none of the spec's instructions, a sendpicp at an odd
// index or missing its payload.
DecodedInstruction decode(std::span<const uint32_t> words, size_t index);

// Decodes a whole row up to and including its Return. Throws DecodeError if it runs off
// the end without one.
std::vector<DecodedInstruction> decode_row(std::span<const uint32_t> words);

std::string mnemonic(Opcode op);

// One field of an instruction as the spec names it ("events", "words", "address", "delta",
// "sctl", "selector", "value", "pic", "xpic", "xpic_paired", "ps", "zone"), in the order
// describe() prints them. `hex` marks addresses and control values.
struct InstructionField {
  const char* name;
  uint32_t value;
  bool hex;
};
// The fields the instruction's encoding has (none for Return). At most 7.
std::vector<InstructionField> fields_of(const Instruction& instruction);

// "send words=64 address=0x18000 sctl=3": mnemonic then the instruction's own fields.
std::string describe(const Instruction& instruction);

}  // namespace lockstep::arch
