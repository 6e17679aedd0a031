#pragma once
// Optional, deterministic stochastic rounding to FP16 (never the default: round-to-nearest-even
// is). The random bits come from a counter-based generator keyed by (seed, tile, worker, call,
// element), so a result never depends on evaluation order, threads or ranks. Formula and
// rules: docs/numerics.md.
#include <cstdint>

namespace lockstep::arch {

inline constexpr uint64_t kSplitMix64Gamma = 0x9e3779b97f4a7c15ull;

// The SplitMix64 output function (Steele, Lea, Flood 2014).
constexpr uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Output number `index` (from 0) of a SplitMix64 generator whose state starts at `state`.
constexpr uint64_t splitmix64_output(uint64_t state, uint64_t index) {
  return splitmix64_mix(state + (index + 1) * kSplitMix64Gamma);
}

// The random bits of one kernel call (seed, tile, worker, call), per element; the chain of
// SplitMix64 outputs is computed once per call, so an element costs one mix.
class RoundingRandom {
 public:
  constexpr RoundingRandom(uint64_t seed, uint32_t tile, uint32_t worker, uint64_t call)
      : call_state_(splitmix64_output(splitmix64_output(splitmix64_output(seed, tile), worker), call)) {}
  constexpr uint64_t bits(uint64_t element) const { return splitmix64_output(call_state_, element); }

 private:
  uint64_t call_state_;
};

constexpr uint64_t rounding_random_bits(uint64_t seed, uint32_t tile, uint32_t worker, uint64_t call,
                                        uint64_t element) {
  return RoundingRandom(seed, tile, worker, call).bits(element);
}

// x rounded to one of its two neighbouring FP16 values: up (away from zero) with probability
// (|x| - lower) / (upper - lower), decided by random / 2^64 < that fraction. Representable values
// are returned unchanged. Above 65504 the upper neighbour is 2^16, encoded as infinity; |x| >=
// 2^16 -> infinity. NaN -> kFp16CanonicalNaN with x's sign.
uint16_t fp16_from_double_stochastic(double x, uint64_t random);
uint16_t fp16_from_float_stochastic(float x, uint64_t random);  // float -> double is exact

}  // namespace lockstep::arch
