// The fields of the encodings and what each accepts: the one table behind encode()'s checks
// and the limits callers check values against first (arch/instruction.hpp, field_limit).
#include "arch/instruction_fields.hpp"

#include <array>
#include <cstdio>
#include <stdexcept>

#include "arch/instruction.hpp"

namespace lockstep::arch {
namespace {

// Every field of every encoding with the values it accepts (IPU21-EXCHANGE.md section 4,
// IPU21-DEVICE.md sections 5.1 and 5.2). An instruction has exactly the fields listed for it.
struct FieldSpec {
  Opcode op;
  Field field;
  FieldLimit limit;
};
constexpr FieldLimit kRegister{0, 15, 4};  // $m0..$m15
constexpr FieldLimit kSctl{0, 7, 3};
constexpr FieldLimit kRowWords{1, 64, 6};
constexpr FieldLimit kItemAddress{0, (1 << 18) - 1, 18};
constexpr FieldLimit kZone{0, 15, 4};  // the spec names sync zones 0..15
constexpr FieldLimit kOffset{0, 4095, 12};
constexpr FieldLimit kUnsigned12{0, 4095, 12};
constexpr FieldLimit kCsr{0, 255, 8};
constexpr FieldLimit kTarget{0, (1 << 21) - 4, 19, 4};  // a 19-bit word address
constexpr FieldSpec kFields[] = {
    {Opcode::Delay, Field::Events, {1, 1 << 19, 19}},
    {Opcode::DelayPic, Field::Events, {1, 128, 7}},
    {Opcode::DelayPic, Field::Selector, {0, 1, 1}},
    {Opcode::DelayPic, Field::Value, {0, (1 << 18) - 1, 18}},
    {Opcode::DelayXpic, Field::Events, {1, 4096, 12}},
    {Opcode::DelayXpic, Field::Selector, {0, 1, 1}},
    {Opcode::DelayXpic, Field::Value, {0, (1 << 13) - 1, 13}},
    {Opcode::Send, Field::Words, kRowWords},
    {Opcode::Send, Field::Address, kItemAddress},
    {Opcode::Send, Field::Sctl, kSctl},
    {Opcode::SendOff, Field::Words, {1, 4096, 12}},
    {Opcode::SendOff, Field::Delta, {0, (1 << 11) - 1, 11}},
    {Opcode::SendOff, Field::Sctl, kSctl},
    {Opcode::SendPic, Field::Words, kRowWords},
    {Opcode::SendPic, Field::Selector, {0, 3, 2}},
    {Opcode::SendPic, Field::Value, {0, (1 << 18) - 1, 18}},
    {Opcode::SendPicP, Field::Words, kRowWords},
    {Opcode::SendPicP, Field::Address, kItemAddress},
    {Opcode::SendPicP, Field::Sctl, kSctl},
    {Opcode::SendPicP, Field::PicSelector, {0, 1, 1}},
    {Opcode::SendPicP, Field::Xpic, {0, (1 << 13) - 1, 13}},
    {Opcode::SendPicP, Field::XpicPaired, {0, 1, 1}},
    {Opcode::SendPicP, Field::Pic, {0, (1 << 18) - 1, 18}},
    {Opcode::Sync, Field::Zone, kZone},
    {Opcode::Sans, Field::Zone, kZone},
    {Opcode::SetZi, Field::Reg, kRegister},
    {Opcode::SetZi, Field::Immediate, {0, (1 << 20) - 1, 20}},
    {Opcode::Add, Field::Dest, kRegister},
    {Opcode::Add, Field::Source, kRegister},
    {Opcode::Add, Field::Immediate, {-32768, 32767, 16}},
    {Opcode::And, Field::Dest, kRegister},
    {Opcode::And, Field::Source, kRegister},
    {Opcode::And, Field::Immediate, kUnsigned12},
    {Opcode::Shl, Field::Dest, kRegister},
    {Opcode::Shl, Field::Source, kRegister},
    {Opcode::Shl, Field::Immediate, kUnsigned12},
    {Opcode::Ld32, Field::Dest, kRegister},
    {Opcode::Ld32, Field::Base, kRegister},
    {Opcode::Ld32, Field::Index, kRegister},
    {Opcode::Ld32, Field::Offset, kOffset},
    {Opcode::St32, Field::Source, kRegister},
    {Opcode::St32, Field::Base, kRegister},
    {Opcode::St32, Field::Index, kRegister},
    {Opcode::St32, Field::Offset, kOffset},
    {Opcode::Put, Field::Reg, kRegister},
    {Opcode::Put, Field::Csr, kCsr},
    {Opcode::Get, Field::Dest, kRegister},
    {Opcode::Get, Field::Csr, kCsr},
    {Opcode::Br, Field::Reg, kRegister},
    {Opcode::Call, Field::Reg, kRegister},
    {Opcode::Call, Field::Target, kTarget},
    {Opcode::Brz, Field::Reg, kRegister},
    {Opcode::Brz, Field::Target, kTarget},
    {Opcode::Trap, Field::Breakpoint, {0, 15, 4}},
};
// The table by opcode and field, built at compile time: encode() looks every field up.
constexpr size_t kOpcodeCount = static_cast<size_t>(Opcode::Trap) + 1;
constexpr size_t kFieldCount = static_cast<size_t>(Field::Breakpoint) + 1;
struct LimitSlot {
  bool present = false;
  FieldLimit limit;
};
using LimitTable = std::array<std::array<LimitSlot, kFieldCount>, kOpcodeCount>;
constexpr LimitTable make_limit_table() {
  LimitTable table{};
  for (const FieldSpec& spec : kFields) {
    table[static_cast<size_t>(spec.op)][static_cast<size_t>(spec.field)] = {true, spec.limit};
  }
  return table;
}
constexpr LimitTable kLimits = make_limit_table();

const LimitSlot& slot_of(Opcode op, Field field) {
  static constexpr LimitSlot kAbsent{};
  const auto o = static_cast<size_t>(op), f = static_cast<size_t>(field);
  return o < kOpcodeCount && f < kFieldCount ? kLimits[o][f] : kAbsent;
}

constexpr bool within(const FieldLimit& limit, int64_t value) {
  return value >= limit.min && value <= limit.max && value % limit.multiple == 0;
}

// Every field's value, in Field's order (the codec's tests name a field by each one's
// misfit, which would catch two swapped here).
using FieldValues = std::array<int64_t, kFieldCount>;
constexpr FieldValues values_of(const Instruction& in) {
  return {in.events,   in.words,     in.address,      in.delta,     in.sctl,
          in.selector, in.value,     in.pic_selector, in.xpic,      in.xpic_paired ? 1 : 0,
          in.pic,      in.zone,      in.reg,          in.dest,      in.source,
          in.base,     in.index,     in.offset,       in.immediate, in.csr,
          in.target,   in.breakpoint};
}
constexpr FieldValues kDefaults = values_of(Instruction{});
static_assert(kDefaults[static_cast<size_t>(Field::Events)] == 1 && kDefaults[static_cast<size_t>(Field::Words)] == 1);

std::string number(int64_t value, bool in_hex) {
  char text[32];
  if (in_hex && value > 0) {
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  } else {
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(value));
  }
  return text;
}

}  // namespace

// Every field against its limit; a field the instruction does not have must keep its
// default, so that a caller who sets `events` on a send (instead of `words`) hears about it
// instead of sending one word.
void check_fields(const Instruction& in) {
  const FieldValues values = values_of(in);
  for (size_t f = 0; f < kFieldCount; ++f) {
    const LimitSlot& slot = slot_of(in.op, static_cast<Field>(f));
    if (slot.present ? within(slot.limit, values[f]) : values[f] == kDefaults[f]) continue;
    const Field field = static_cast<Field>(f);
    if (!slot.present) {
      throw std::invalid_argument(mnemonic(in.op) + ": field " + field_name(field) +
                                  " is not part of this instruction and must keep its default");
    }
    throw std::invalid_argument(mnemonic(in.op) + ": " + field_name(field) + " = " + misfit(in.op, field, values[f]));
  }
}

const char* field_name(Field field) {
  static constexpr const char* kNames[] = {"events",    "words", "address", "delta",       "sctl",  "selector",
                                           "value",     "ps",    "xpic",    "xpic_paired", "pic",   "zone",
                                           "reg",       "dest",  "source",  "base",        "index", "offset",
                                           "immediate", "csr",   "target",  "breakpoint"};
  return kNames[static_cast<size_t>(field)];
}

std::optional<FieldLimit> field_limit(Opcode op, Field field) {
  const LimitSlot& slot = slot_of(op, field);
  if (!slot.present) return std::nullopt;
  return slot.limit;
}

bool fits(Opcode op, Field field, int64_t value) {
  const LimitSlot& slot = slot_of(op, field);
  return slot.present && within(slot.limit, value);
}

std::string misfit(Opcode op, Field field, int64_t value) {
  const std::optional<FieldLimit> limit = field_limit(op, field);
  if (!limit) throw std::logic_error(mnemonic(op) + " has no field " + field_name(field));
  if (within(*limit, value)) return "";
  const bool in_hex = limit->max > 0xffff;
  const std::string whose = mnemonic(op) + "'s " + (limit->min < 0 ? "signed " : "") + std::to_string(limit->bits) +
                            "-bit " + field_name(field);
  if (value < limit->min || value > limit->max) {
    return number(value, in_hex) + " does not fit " + whose + " (" + number(limit->min, in_hex) + ".." +
           number(limit->max, in_hex) + ")";
  }
  if (value % limit->multiple != 0) {  // only call and brz targets: word addresses
    return number(value, in_hex) + " is not word aligned (" + mnemonic(op) + "'s " + field_name(field) +
           " takes multiples of " + std::to_string(limit->multiple) + ")";
  }
  return "";
}

}  // namespace lockstep::arch
