#pragma once
// Inside the codec: the field checks encode() runs before it packs an instruction's bits.
#include "arch/instruction.hpp"

namespace lockstep::arch {

// Every field against its limit (field_limit); a field the instruction does not have must keep
// its default. Throws std::invalid_argument naming the instruction and the field.
void check_fields(const Instruction& instruction);

}  // namespace lockstep::arch
