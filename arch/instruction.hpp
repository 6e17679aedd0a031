#pragma once
// The IPU21 instruction codec, bit for bit: the exchange row family (IPU21-EXCHANGE.md
// section 4) and the supervisor words of IPU21-DEVICE.md sections 5.1 and 5.2.
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace lockstep::arch {

// Order matters: the row family comes first and ends at Return (is_row_instruction), and
// Trap stays last.
enum class Opcode : uint8_t {
  // Exchange row family (section 5.3): the words a row may hold.
  Delay,      // delay n
  DelayPic,   // delaypic n, sel, v
  DelayXpic,  // delayxpic n, sel, v
  Send,       // send n, a, sctl
  SendOff,    // sendoff n, delta, sctl
  SendPic,    // sendpic n, sel, v
  SendPicP,   // sendpicp n, a, sctl, ps + payload word (xpic, pic)
  Sync,       // sync z (a row may start with sync 3)
  Sans,       // sans z (supervisor only; rows judge it by position)
  Return,     // br $m10: the end of a row (exactly 0x43a00000)
  // Supervisor code only (sections 5.1, 5.2); never inside a row.
  SetZi,  // setzi $reg, immediate (20 bits)
  Add,    // add $dest, $source, immediate (signed 16 bits)
  And,    // and $dest, $source, immediate (12 bits)
  Shl,    // shl $dest, $source, immediate (12 bits)
  Ld32,   // ld32 $dest, $base, $index, offset
  St32,   // st32 $source, $base, $index, offset
  Put,    // put csr, $reg
  Get,    // get $dest, csr
  Br,     // br $reg, any register but $m10 (that word is Return)
  Call,   // call $reg, target
  Brz,    // brz $reg, target
  Trap,   // trap breakpoint (PBRK0/PBRK1 checkpoints)
};

// Field names follow the spec. Counts are stored as events/items (field value + 1).
// Registers are $m numbers 0..15.
struct Instruction {
  Opcode op = Opcode::Delay;
  uint32_t events = 1;    // delay, delaypic, delayxpic: events (n+1)
  uint32_t words = 1;     // send, sendoff, sendpic, sendpicp: items sent (n+1)
  uint32_t address = 0;   // send, sendpicp: item address (byte address / 4 or / 8)
  uint32_t delta = 0;     // sendoff
  uint32_t sctl = 0;      // send, sendoff, sendpicp: bit0 dir1, bit1 dir2, bit2 64-bit items
  uint32_t selector = 0;  // delaypic, delayxpic, sendpic
  uint32_t value = 0;     // delaypic, delayxpic, sendpic
  uint32_t pic = 0;       // sendpicp payload: PIC value (bits 0-17)
  uint32_t xpic = 0;      // sendpicp payload: XPIC value (bits 18-30)
  // sendpicp prefix bit 27 ("ps"): the PIC selector of the payload's PIC value, 0 = incoming
  // pointer, 1 = incoming format (project decision, docs/ipu21-exchange.md section 4).
  uint32_t pic_selector = 0;
  bool xpic_paired = false;  // sendpicp payload bit 31 (paired mux stream)
  uint32_t zone = 0;         // sync, sans
  uint32_t reg = 0;          // setzi, put, br, call, brz: the $r operand
  uint32_t dest = 0;         // get, ld32, add, and, shl: $d
  uint32_t source = 0;       // add, and, shl: $s; st32: the stored register
  uint32_t base = 0;         // ld32, st32: $b
  uint32_t index = 0;        // ld32, st32: $x
  uint32_t offset = 0;       // ld32, st32: words past $b + $x
  int32_t immediate = 0;     // setzi, add (signed), and, shl
  uint32_t csr = 0;          // put, get: CSR index
  uint32_t target = 0;       // call, brz: absolute byte address, word aligned
  uint32_t breakpoint = 0;   // trap

  bool operator==(const Instruction&) const = default;
};

// Rejected word: carries the byte offset from the start of the decoded row.
class DecodeError : public std::runtime_error {
 public:
  DecodeError(uint64_t byte_offset, const std::string& what) : std::runtime_error(what), byte_offset_(byte_offset) {}
  uint64_t byte_offset() const { return byte_offset_; }

 private:
  uint64_t byte_offset_;
};

// The fields of the encodings, named as the spec (and fields_of()) names them.
enum class Field : uint8_t {
  Events,
  Words,
  Address,
  Delta,
  Sctl,
  Selector,
  Value,
  PicSelector,  // "ps"
  Xpic,
  XpicPaired,
  Pic,
  Zone,
  Reg,
  Dest,
  Source,
  Base,
  Index,
  Offset,
  Immediate,
  Csr,
  Target,
  Breakpoint,
};
const char* field_name(Field field);

// What encode() accepts in one field: min..max, a multiple of `multiple`, held in `bits` bits
// (counts are stored less one, call and brz targets as word addresses; a negative min means
// the field is signed).
struct FieldLimit {
  int64_t min = 0;
  int64_t max = 0;
  uint32_t bits = 0;
  uint32_t multiple = 1;
};

// The limit of `field` in `op`'s encoding, nullopt when `op` has no such field. encode()
// checks every field against exactly these limits; two rules span fields and stay its own:
// sendpic's value is 13 bits wide with an XPIC selector (0, 1), and br takes no $m10 (that
// word is Return). Callers that put a package's values in instructions (the supervisor code)
// check them here first, so that a value that fits encodes.
std::optional<FieldLimit> field_limit(Opcode op, Field field);
bool fits(Opcode op, Field field, int64_t value);
// "" when `value` fits, else one line naming the value and the limit, e.g.
// "0x100000 does not fit setzi's 20-bit immediate (0..0xfffff)" or "0x60002 is not word
// aligned (call's target takes multiples of 4)". Values print in hex where the field's range
// passes 0xffff, else in decimal.
std::string misfit(Opcode op, Field field, int64_t value);

// Encodes to one word (two for sendpicp). Throws std::invalid_argument naming the field
// when a field does not fit (field_limit), or when a field the instruction lacks is not at
// its default.
std::vector<uint32_t> encode(const Instruction& instruction);
void encode_into(const Instruction& instruction, std::vector<uint32_t>& out);

struct DecodedInstruction {
  Instruction instruction;
  uint32_t word_count;  // 1, or 2 for sendpicp
};

// True for the words decode_row accepts: the row family, sync, sans and br $m10.
bool is_row_instruction(Opcode op);

// Decodes the instruction (row or supervisor) starting at words[index]. Throws DecodeError
// with byte offset `index * 4` for a word that is none of the spec's instructions, a
// sendpicp at an odd index or missing its payload.
DecodedInstruction decode(std::span<const uint32_t> words, size_t index);

// As decode(), but a supervisor-only instruction is a DecodeError naming its mnemonic.
DecodedInstruction decode_row_word(std::span<const uint32_t> words, size_t index);

// Decodes a whole row up to and including its Return, with decode_row_word. Throws
// DecodeError if it runs off the end without one.
std::vector<DecodedInstruction> decode_row(std::span<const uint32_t> words);

std::string mnemonic(Opcode op);

// How describe() prints a field: registers as "$m8", mux values with their name.
enum class FieldFormat : uint8_t { Decimal, Hex, Register, MuxValue };

// One field of an instruction as the spec names it ("events", "words", "address", "delta",
// "sctl", "selector", "value", "ps", "xpic", "xpic_paired", "pic", "zone", "reg", "dest",
// "source", "base", "index", "offset", "immediate", "csr", "target", "breakpoint"), in the
// order describe() prints them. Only add's immediate can be negative.
struct InstructionField {
  const char* name;
  int64_t value;
  FieldFormat format;
};
// The fields the instruction's encoding has (none for Return). At most 7.
std::vector<InstructionField> fields_of(const Instruction& instruction);

// "send words=64 address=0x18000 sctl=3": mnemonic then the instruction's own fields.
std::string describe(const Instruction& instruction);

// Names an XPIC (incoming mux) value: "neutral" (0x640), "host endpoint 0x12" (0x600 + x),
// "tile 53" (a physical tile id), or "unknown" (IPU21-DEVICE.md section 4, INCOMING_MUX).
std::string mux_value_name(uint32_t value);

}  // namespace lockstep::arch
