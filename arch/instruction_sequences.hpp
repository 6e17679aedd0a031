#pragma once
// The sequences Lockstep's supervisor code builds values with (docs/supervisor-code.md), each
// with what it can express. supervisor/supervisor_emitter.cpp writes exactly these, and
// validate_package checks a package's values against the same limits (with field_limit and
// misfit of arch/instruction.hpp for the values that go in one instruction's field), so a
// package that validates lowers.
#include <cstdint>
#include <string>
#include <vector>

#include "arch/instruction.hpp"

namespace lockstep::arch {

// A 32-bit word into a register (IPU21-DEVICE.md 5.1's setzi macro): setzi alone where the
// value fits its immediate, else setzi value >> 12; shl 12; add value & 0xfff. That reaches
// every register value, so the macro takes word_limit(): -2^31 .. 2^32 - 1, a negative
// value as its two's complement (a kernel's signed scalar).
FieldLimit word_limit();
// "" when load_word takes `value`, else one line: "4294967296 does not fit a 32-bit word
// (-2147483648..4294967295: setzi, shl 12, add)".
std::string word_misfit(int64_t value);
// Throws std::invalid_argument (word_misfit's line) outside word_limit().
std::vector<Instruction> load_word(uint32_t reg, int64_t value);

// reg += value as adds of at most add's immediate each: every value is expressible, one
// instruction per 32767 (a stride of -2^31 takes 65,536 adds).
std::vector<Instruction> add_constant(uint32_t reg, int64_t value);

// The kernel ABI: operand i in $m(2 + i), then the scalars; 1 to 8 values in $m2..$m9.
inline constexpr uint32_t kKernelFirstArgument = 2;
inline constexpr uint32_t kKernelArguments = 8;
// "" when a kernel step's `count` operands and scalars fit, else one line: "9 operands and
// scalars; the kernel ABI passes 1 to 8, in $m2..$m9".
std::string kernel_arguments_misfit(size_t count);

}  // namespace lockstep::arch
