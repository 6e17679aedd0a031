// Names and printed form of the exchange instructions, with the spec's field names.
#include <cstdio>

#include "arch/instruction.hpp"

namespace lockstep::arch {

std::string mnemonic(Opcode op) {
  switch (op) {
    case Opcode::Delay: return "delay";
    case Opcode::DelayPic: return "delaypic";
    case Opcode::DelayXpic: return "delayxpic";
    case Opcode::Send: return "send";
    case Opcode::SendOff: return "sendoff";
    case Opcode::SendPic: return "sendpic";
    case Opcode::SendPicP: return "sendpicp";
    case Opcode::Sync: return "sync";
    case Opcode::Sans: return "sans";
    case Opcode::Return: return "br";
  }
  return "unknown";
}

std::vector<InstructionField> fields_of(const Instruction& in) {
  switch (in.op) {
    case Opcode::Delay:
      return {{"events", in.events, false}};
    case Opcode::DelayPic:
    case Opcode::DelayXpic:
      return {{"events", in.events, false},
              {"selector", in.selector, false},
              {"value", in.value, true}};
    case Opcode::Send:
      return {{"words", in.words, false}, {"address", in.address, true}, {"sctl", in.sctl, false}};
    case Opcode::SendOff:
      return {{"words", in.words, false}, {"delta", in.delta, false}, {"sctl", in.sctl, false}};
    case Opcode::SendPic:
      return {{"words", in.words, false},
              {"selector", in.selector, false},
              {"value", in.value, true}};
    case Opcode::SendPicP:
      return {{"words", in.words, false},
              {"address", in.address, true},
              {"sctl", in.sctl, false},
              {"ps", in.paired_stream ? 1u : 0u, false},
              {"xpic", in.xpic, true},
              {"xpic_paired", in.xpic_paired ? 1u : 0u, false},
              {"pic", in.pic, true}};
    case Opcode::Sync:
    case Opcode::Sans:
      return {{"zone", in.zone, false}};
    case Opcode::Return:
      return {};
  }
  return {};
}

std::string describe(const Instruction& in) {
  std::string text = mnemonic(in.op);
  if (in.op == Opcode::Return) return text + " $m10";
  for (const auto& field : fields_of(in)) {
    char value[16];
    std::snprintf(value, sizeof value, field.hex ? "0x%x" : "%u", field.value);
    text += ' ';
    text += field.name;
    text += '=';
    text += value;
  }
  return text;
}

}  // namespace lockstep::arch
