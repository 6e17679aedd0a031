#include "io/hex.hpp"

#include <cstdio>

namespace lockstep::arch {

std::string hex(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string hex_range(uint64_t begin, uint64_t end) { return "[" + hex(begin) + ", " + hex(end) + ")"; }

}  // namespace lockstep::arch
