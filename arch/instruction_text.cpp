// Names and printed form of the instructions, with the spec's field names.
#include <cstdio>

#include "arch/instruction.hpp"

namespace lockstep::arch {
namespace {

// XPIC values (IPU21-DEVICE.md section 4, INCOMING_MUX; IPU21-EXCHANGE.md section 5).
constexpr uint32_t kChipTiles = 1472;  // physical ids 0..1471 of the C600
constexpr uint32_t kHostEndpointBase = 0x600, kHostEndpoints = 0x40;
constexpr uint32_t kNeutralMux = 0x640;

using F = FieldFormat;

std::vector<InstructionField> row_fields(const Instruction& in) {
  switch (in.op) {
    case Opcode::Delay:
      return {{"events", in.events, F::Decimal}};
    case Opcode::DelayPic:
      return {{"events", in.events, F::Decimal}, {"selector", in.selector, F::Decimal}, {"value", in.value, F::Hex}};
    case Opcode::DelayXpic:
      return {
          {"events", in.events, F::Decimal}, {"selector", in.selector, F::Decimal}, {"value", in.value, F::MuxValue}};
    case Opcode::Send:
      return {{"words", in.words, F::Decimal}, {"address", in.address, F::Hex}, {"sctl", in.sctl, F::Decimal}};
    case Opcode::SendOff:
      return {{"words", in.words, F::Decimal}, {"delta", in.delta, F::Decimal}, {"sctl", in.sctl, F::Decimal}};
    case Opcode::SendPic:
      // Selectors 0/1 carry an XPIC value, 2/3 a PIC value.
      return {{"words", in.words, F::Decimal},
              {"selector", in.selector, F::Decimal},
              {"value", in.value, in.selector < 2 ? F::MuxValue : F::Hex}};
    case Opcode::SendPicP:
      return {{"words", in.words, F::Decimal}, {"address", in.address, F::Hex},
              {"sctl", in.sctl, F::Decimal},   {"ps", in.pic_selector, F::Decimal},
              {"xpic", in.xpic, F::MuxValue},  {"xpic_paired", in.xpic_paired ? 1 : 0, F::Decimal},
              {"pic", in.pic, F::Hex}};
    case Opcode::Sync:
    case Opcode::Sans:
      return {{"zone", in.zone, F::Decimal}};
    default:
      return {};
  }
}

std::vector<InstructionField> supervisor_fields(const Instruction& in) {
  switch (in.op) {
    case Opcode::SetZi:
      return {{"reg", in.reg, F::Register}, {"immediate", in.immediate, F::Hex}};
    case Opcode::Add:
    case Opcode::And:
    case Opcode::Shl:
      return {
          {"dest", in.dest, F::Register}, {"source", in.source, F::Register}, {"immediate", in.immediate, F::Decimal}};
    case Opcode::Ld32:
      return {{"dest", in.dest, F::Register},
              {"base", in.base, F::Register},
              {"index", in.index, F::Register},
              {"offset", in.offset, F::Decimal}};
    case Opcode::St32:
      return {{"source", in.source, F::Register},
              {"base", in.base, F::Register},
              {"index", in.index, F::Register},
              {"offset", in.offset, F::Decimal}};
    case Opcode::Put:
      return {{"csr", in.csr, F::Hex}, {"reg", in.reg, F::Register}};
    case Opcode::Get:
      return {{"dest", in.dest, F::Register}, {"csr", in.csr, F::Hex}};
    case Opcode::Br:
      return {{"reg", in.reg, F::Register}};
    case Opcode::Call:
    case Opcode::Brz:
      return {{"reg", in.reg, F::Register}, {"target", in.target, F::Hex}};
    case Opcode::Trap:
      return {{"breakpoint", in.breakpoint, F::Decimal}};
    default:
      return {};
  }
}

std::string field_text(const InstructionField& field) {
  char text[48];
  switch (field.format) {
    case F::Decimal:
      std::snprintf(text, sizeof text, "%lld", static_cast<long long>(field.value));
      break;
    case F::Hex:
      std::snprintf(text, sizeof text, "0x%llx", static_cast<long long>(field.value));
      break;
    case F::Register:
      std::snprintf(text, sizeof text, "$m%lld", static_cast<long long>(field.value));
      break;
    case F::MuxValue:
      std::snprintf(text, sizeof text, "0x%llx (%s)", static_cast<long long>(field.value),
                    mux_value_name(static_cast<uint32_t>(field.value)).c_str());
      break;
  }
  return text;
}

}  // namespace

std::string mnemonic(Opcode op) {
  switch (op) {
    case Opcode::Delay:
      return "delay";
    case Opcode::DelayPic:
      return "delaypic";
    case Opcode::DelayXpic:
      return "delayxpic";
    case Opcode::Send:
      return "send";
    case Opcode::SendOff:
      return "sendoff";
    case Opcode::SendPic:
      return "sendpic";
    case Opcode::SendPicP:
      return "sendpicp";
    case Opcode::Sync:
      return "sync";
    case Opcode::Sans:
      return "sans";
    case Opcode::Return:
      return "br";
    case Opcode::SetZi:
      return "setzi";
    case Opcode::Add:
      return "add";
    case Opcode::And:
      return "and";
    case Opcode::Shl:
      return "shl";
    case Opcode::Ld32:
      return "ld32";
    case Opcode::St32:
      return "st32";
    case Opcode::Put:
      return "put";
    case Opcode::Get:
      return "get";
    case Opcode::Br:
      return "br";
    case Opcode::Call:
      return "call";
    case Opcode::Brz:
      return "brz";
    case Opcode::Trap:
      return "trap";
  }
  return "unknown";
}

std::vector<InstructionField> fields_of(const Instruction& in) {
  return is_row_instruction(in.op) ? row_fields(in) : supervisor_fields(in);
}

std::string describe(const Instruction& in) {
  std::string text = mnemonic(in.op);
  if (in.op == Opcode::Return) return text + " $m10";
  for (const auto& field : fields_of(in)) {
    text += ' ';
    text += field.name;
    text += '=';
    text += field_text(field);
  }
  return text;
}

std::string mux_value_name(uint32_t value) {
  if (value == kNeutralMux) return "neutral";
  if (value - kHostEndpointBase < kHostEndpoints) {
    char text[32];
    std::snprintf(text, sizeof text, "host endpoint 0x%x", value - kHostEndpointBase);
    return text;
  }
  if (value < kChipTiles) return "tile " + std::to_string(value);
  return "unknown";
}

}  // namespace lockstep::arch
