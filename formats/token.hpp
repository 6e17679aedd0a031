#pragma once
// Payload tokens: a unique 32-bit value per (tile, word address) for a given seed, so a
// replay can tell exactly which source word landed where.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace lockstep::arch {

inline uint32_t token_seed_mix(uint64_t seed) {
  uint64_t x = seed + 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return static_cast<uint32_t>(x ^ (x >> 31)) & 0xe0000000u;
}

// Bijective in (tile < 2048, word address < 2^18) for a fixed seed: tile in bits 18-28,
// word address in bits 0-17, the seed only flips the top three bits.
inline uint32_t payload_token(uint64_t seed, uint32_t tile, uint32_t byte_address) {
  return token_seed_mix(seed) ^ ((tile << 18) | ((byte_address >> 2) & 0x3ffffu));
}

// The token of Repeat iteration `iteration` (0: payload_token). XOR with a constant keeps the
// tokens of one iteration unique; the salt `iteration << 18` makes consecutive iterations
// differ in bits 18 and up, while two words of one source tile differ only in bits 0-17, so
// a word left from the previous iteration never equals the one expected now, even when
// every iteration reads the same source addresses.
inline uint32_t payload_token(uint64_t seed, uint32_t tile, uint32_t byte_address, uint32_t iteration) {
  return payload_token(seed, tile, byte_address) ^ (iteration << 18);
}

// The token `words` words after token `first` of one run: the word address (bits 0-17) goes
// on, wrapping as payload_token's does, and the tile, iteration and seed bits stay.
inline uint32_t token_after(uint32_t first, uint32_t words) {
  return (first & ~0x3ffffu) | ((first + words) & 0x3ffffu);
}

// The tokens of out.size() consecutive words from token `first` on.
inline void tokens_following(uint32_t first, std::span<uint32_t> out) {
  const uint32_t word = first & 0x3ffffu, base = first & ~0x3ffffu;
  const size_t n = out.size();
  size_t k = 0;
  // Blocks of eight independent lanes, which the compiler turns into vector instructions.
  for (; k + 8 <= n; k += 8) {
    for (uint32_t j = 0; j < 8; ++j) out[k + j] = base | ((word + uint32_t(k) + j) & 0x3ffffu);
  }
  for (; k < n; ++k) out[k] = base | ((word + uint32_t(k)) & 0x3ffffu);
}

// Whether the `words` little-endian words at `bytes` are the tokens following `first`: compared
// a block of made tokens at a time, so no buffer grows with the run.
inline bool holds_tokens_following(const uint8_t* bytes, size_t words, uint32_t first) {
  std::array<uint32_t, 256> made;
  for (size_t done = 0; done < words; done += made.size()) {
    const size_t n = std::min(made.size(), words - done);
    tokens_following(token_after(first, static_cast<uint32_t>(done)), {made.data(), n});
    if (std::memcmp(bytes + 4 * done, made.data(), 4 * n) != 0) return false;
  }
  return true;
}

// The tokens of out.size() consecutive words from byte_address on.
inline void payload_tokens(uint64_t seed, uint32_t tile, uint32_t byte_address, uint32_t iteration,
                           std::span<uint32_t> out) {
  tokens_following(payload_token(seed, tile, byte_address, iteration), out);
}

}  // namespace lockstep::arch
