// The value-building sequences of Lockstep's supervisor code and their limits, all derived from
// the codec's field limits (arch/instruction.hpp).
#include "arch/instruction_sequences.hpp"

#include <algorithm>
#include <stdexcept>

namespace lockstep::arch {
namespace {

constexpr uint32_t kWordShift = 12;  // the macro's shl; the low bits go through add

Instruction setzi(uint32_t reg, int64_t value) {
  Instruction in{.op = Opcode::SetZi};
  in.reg = reg;
  in.immediate = static_cast<int32_t>(value);
  return in;
}

Instruction add_or_shl(Opcode op, uint32_t reg, int64_t immediate) {
  Instruction in{.op = op};
  in.dest = reg;
  in.source = reg;
  in.immediate = static_cast<int32_t>(immediate);
  return in;
}

}  // namespace

FieldLimit word_limit() {
  // The high part must fit setzi; registers hold 32 bits.
  const FieldLimit setzi = *field_limit(Opcode::SetZi, Field::Immediate);
  const int64_t reach = ((setzi.max + 1) << kWordShift) - 1;
  return {INT32_MIN, std::min<int64_t>(reach, UINT32_MAX), 32};
}

std::string word_misfit(int64_t value) {
  const FieldLimit limit = word_limit();
  if (value >= limit.min && value <= limit.max) return "";
  return std::to_string(value) + " does not fit a 32-bit word (" + std::to_string(limit.min) + ".." +
         std::to_string(limit.max) + ": setzi, shl " + std::to_string(kWordShift) + ", add)";
}

std::vector<Instruction> load_word(uint32_t reg, int64_t value) {
  if (const std::string why = word_misfit(value); !why.empty()) throw std::invalid_argument(why);
  const uint32_t word = static_cast<uint32_t>(value);
  if (fits(Opcode::SetZi, Field::Immediate, word)) return {setzi(reg, word)};
  return {setzi(reg, word >> kWordShift), add_or_shl(Opcode::Shl, reg, kWordShift),
          add_or_shl(Opcode::Add, reg, word & ((1u << kWordShift) - 1))};
}

std::vector<Instruction> add_constant(uint32_t reg, int64_t value) {
  const FieldLimit add = *field_limit(Opcode::Add, Field::Immediate);
  std::vector<Instruction> out;
  while (value != 0) {
    const int64_t chunk = std::clamp<int64_t>(value, add.min, add.max);
    out.push_back(add_or_shl(Opcode::Add, reg, chunk));
    value -= chunk;
  }
  return out;
}

std::string kernel_arguments_misfit(size_t count) {
  if (count >= 1 && count <= kKernelArguments) return "";
  const uint32_t last = kKernelFirstArgument + kKernelArguments - 1;
  return std::to_string(count) + " operands and scalars; the kernel ABI passes 1 to " +
         std::to_string(kKernelArguments) + ", in $m" + std::to_string(kKernelFirstArgument) + "..$m" +
         std::to_string(last);
}

}  // namespace lockstep::arch
