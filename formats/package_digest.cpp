// FNV-1a 64: the digest of expectations and payloads (and of machine descriptions).
#include "formats/package.hpp"

namespace lockstep::arch {

uint64_t fnv1a64(const uint8_t* data, size_t size, uint64_t seed) {
  constexpr uint64_t kPrime = 0x100000001b3ull;
  uint64_t hash = seed;
  for (size_t i = 0; i < size; ++i) {
    hash ^= data[i];
    hash *= kPrime;
  }
  return hash;
}

}  // namespace lockstep::arch
