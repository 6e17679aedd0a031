#pragma once
// "0x4c000": how addresses and values appear in messages, traces and the YAML forms.
#include <cstdint>
#include <string>

namespace lockstep::arch {

std::string hex(uint64_t value);  // lower-case hex with a 0x prefix

}  // namespace lockstep::arch
