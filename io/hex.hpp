#pragma once
// "0x4c000": how addresses and values appear in messages, traces and the YAML forms.
#include <cstdint>
#include <string>

namespace lockstep::arch {

std::string hex(uint64_t value);                      // lower-case hex with a 0x prefix
std::string hex_range(uint64_t begin, uint64_t end);  // "[0x60000, 0x60010)": begin in, end out

}  // namespace lockstep::arch
