#pragma once
// The instruction builders the supervisor emitter's files share (supervisor/supervisor_emitter.cpp,
// supervisor/supervisor_emitter_host.cpp); internal.
#include <cstdint>

#include "arch/instruction.hpp"
#include "arch/registers.hpp"

namespace lockstep::arch::emitter {

using namespace registers;                   // kM0 .. kZero, the exchange CSRs
inline constexpr uint32_t kGuardWords = 16;  // the supervisor's 64-byte fetch look-ahead (section 1)
inline constexpr uint32_t kFrameBytes = 8;   // a Repeat's frame: the remaining count, 8-aligned

inline Instruction op(Opcode code) {
  Instruction in;
  in.op = code;
  return in;
}
inline Instruction setzi(uint32_t reg, uint32_t value) {
  Instruction in = op(Opcode::SetZi);
  in.reg = reg;
  in.immediate = static_cast<int32_t>(value);
  return in;
}
inline Instruction arithmetic(Opcode code, uint32_t dest, uint32_t source, int32_t immediate) {
  Instruction in = op(code);
  in.dest = dest;
  in.source = source;
  in.immediate = immediate;
  return in;
}
inline Instruction ld32(uint32_t dest, uint32_t base, uint32_t offset) {
  Instruction in = op(Opcode::Ld32);
  in.dest = dest;
  in.base = base;
  in.index = kZero;
  in.offset = offset;
  return in;
}
inline Instruction ld32_indexed(uint32_t dest, uint32_t base, uint32_t index) {
  Instruction in = ld32(dest, base, 0);
  in.index = index;
  return in;
}
inline Instruction st32(uint32_t source, uint32_t base, uint32_t index = kZero) {
  Instruction in = op(Opcode::St32);
  in.source = source;
  in.base = base;
  in.index = index;
  return in;
}
inline Instruction put(uint32_t csr, uint32_t reg) {
  Instruction in = op(Opcode::Put);
  in.csr = csr;
  in.reg = reg;
  return in;
}
inline Instruction br(uint32_t reg) {
  if (reg == kM10) return op(Opcode::Return);
  Instruction in = op(Opcode::Br);
  in.reg = reg;
  return in;
}
inline Instruction branch(Opcode code, uint32_t reg) {
  Instruction in = op(code);
  in.reg = reg;
  return in;
}
inline Instruction sync(Opcode code, uint32_t zone) {
  Instruction in = op(code);
  in.zone = zone;
  return in;
}

}  // namespace lockstep::arch::emitter
