// FNV-1a 64: the digest of expectations and payloads (and of machine descriptions); XXH3 64:
// the payload proof's checksums.
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <new>

#include "formats/package.hpp"
#if defined(__x86_64__)
// XXH3_64bits_dispatch, and Xxh3Stream's updates through it: the widest vector unit the CPU
// has (AVX-512, AVX2 or SSE2), chosen at run time; the hash is the same on every path.
#include <xxh_x86dispatch.h>
#endif

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

uint64_t xxh3_64(const uint8_t* data, size_t size) {
#if defined(__x86_64__)
  return XXH3_64bits_dispatch(data, size);
#else
  return XXH3_64bits(data, size);
#endif
}

Xxh3Stream::Xxh3Stream() : state_(XXH3_createState()) {
  if (!state_) throw std::bad_alloc();
  XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}

Xxh3Stream::~Xxh3Stream() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void Xxh3Stream::update(const uint8_t* data, size_t size) {
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), data, size);
}

void Xxh3Stream::update_zeros(size_t size) {
  static constexpr std::array<uint8_t, 4096> kZeros{};
  while (size > 0) {
    const size_t n = std::min(size, kZeros.size());
    update(kZeros.data(), n);
    size -= n;
  }
}

uint64_t Xxh3Stream::digest() const { return XXH3_64bits_digest(static_cast<const XXH3_state_t*>(state_)); }

}  // namespace lockstep::arch
