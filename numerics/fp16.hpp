#pragma once
// IEEE binary16 ("FP16") as raw bits: conversions with round-to-nearest-even and the two
// arithmetic operations whose exact results fit a wider type. Portable bit code, no _Float16.
// Rules and reasons: docs/numerics.md.
#include <bit>
#include <cmath>
#include <cstdint>

#include "numerics/binary_rounding.hpp"

namespace lockstep::arch {

inline constexpr uint16_t kFp16SignBit = 0x8000;
inline constexpr uint16_t kFp16Infinity = 0x7c00;      // +inf; -inf is kFp16SignBit | this
inline constexpr uint16_t kFp16CanonicalNaN = 0x7e00;  // quiet, payload 0; a sign may be added
inline constexpr uint16_t kFp16MaxFinite = 0x7bff;     // 65504
inline constexpr int kFp16MantissaBits = 10;
inline constexpr int kFp16MinExponent = -14;  // of the smallest normal, 2^-14

namespace detail {
struct Fp16FloatTable {
  float value[65536];
};
extern const Fp16FloatTable kFp16ToFloat;
// |x| at or above 65520 (halfway between 65504 and 2^16) rounds to infinity.
inline constexpr uint64_t kFp16OverflowBits = 0x40effe0000000000ull;  // 65520.0
}  // namespace detail

inline bool fp16_is_nan(uint16_t h) { return (h & 0x7fff) > kFp16Infinity; }

// Exact. A NaN keeps its sign and payload and becomes quiet.
inline float fp16_to_float(uint16_t h) { return detail::kFp16ToFloat.value[h]; }

// One rounding (nearest, ties to even) from the double itself. NaN -> kFp16CanonicalNaN with
// the input's sign; |x| >= 65520 -> infinity; subnormal results exact.
inline uint16_t fp16_from_double(double x) {
  const auto bits = std::bit_cast<uint64_t>(x);
  const auto sign = static_cast<uint16_t>((bits >> 48) & kFp16SignBit);
  const uint64_t magnitude = bits & ~kDoubleSignBit;
  if (magnitude >= detail::kFp16OverflowBits) {
    return sign | (magnitude > kDoubleInfinityBits ? kFp16CanonicalNaN : kFp16Infinity);
  }
  return sign | static_cast<uint16_t>(round_magnitude_nearest_even(magnitude, kFp16MantissaBits, kFp16MinExponent));
}

// float -> double is exact, so this is still a single rounding.
// In FP16's normal range 2^-14 <= |x| < 65520 the float's exponent field maps to FP16's by a
// constant, so the same integer rounding (add half a quantum less one plus the kept lowest bit,
// truncate) works on the float's bits directly: the kernels' per-element fast path.
inline uint16_t fp16_from_float(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t a = bits & 0x7fffffffu;
  if (a - 0x38800000u < 0x477ff000u - 0x38800000u) {
    return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | ((a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13));
  }
  return fp16_from_double(x);
}

// fl16(a + b). Exact in double first: both are multiples of 2^-24 below 2^16, so the sum is
// an integer below 2^41 times 2^-24, which fits double's 53-bit significand. A NaN result is
// the positive kFp16CanonicalNaN (the sign of a NaN made by arithmetic differs between CPUs).
inline uint16_t fp16_add(uint16_t a, uint16_t b) {
  const double sum = static_cast<double>(fp16_to_float(a)) + fp16_to_float(b);
  return std::isnan(sum) ? kFp16CanonicalNaN : fp16_from_double(sum);
}

// fl16(a * b). Exact in float first: 11-bit x 11-bit significands give at most 22 bits (float
// has 24), and |product| lies in [2^-48, 65504^2], inside float's normal range.
inline uint16_t fp16_mul(uint16_t a, uint16_t b) {
  const float product = fp16_to_float(a) * fp16_to_float(b);
  return std::isnan(product) ? kFp16CanonicalNaN : fp16_from_float(product);
}

}  // namespace lockstep::arch
