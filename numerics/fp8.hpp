#pragma once
// FP8 "F143" = Float8 E4M3 FNUZ: 1 sign, 4 exponent (bias 8), 3 fraction bits; no infinities,
// no negative zero, 0x80 the single NaN. A tensor element's value is decode(byte) * 2^scale,
// scale the tensor's signed exponent. Encoding rounds to nearest even and saturates finite
// values at +-240; NaN and +-inf encode as NaN. Rules and reasons: docs/numerics.md.
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

#include "numerics/binary_rounding.hpp"
#include "numerics/fp16.hpp"

namespace lockstep::arch {

inline constexpr uint8_t kF143NaN = 0x80;
inline constexpr uint8_t kF143MaxFinite = 0x7f;  // 240 = 1.875 * 2^7
inline constexpr int kF143MantissaBits = 3;
inline constexpr int kF143MinExponent = -7;  // smallest normal 2^-7; smallest subnormal 2^-10

namespace detail {
extern const std::array<double, 256> kF143ToDouble;                    // at scale 0; entry 0x80 a quiet NaN
inline constexpr uint64_t kF143MaxFiniteBits = 0x406e000000000000ull;  // 240.0

// 2^exponent for |exponent| <= 1022: always a normal double.
constexpr double power_of_two(int exponent) {
  return std::bit_cast<double>(static_cast<uint64_t>(exponent + 1023) << kDoubleFractionBits);
}

// The F143 code nearest to y (already in units of 2^scale), ties to even, saturating at
// +-240 (infinity too); y not NaN. A result of zero is always 0x00.
inline uint8_t f143_round_saturating(double y) {
  const auto bits = std::bit_cast<uint64_t>(y);
  const auto sign = static_cast<uint8_t>((bits >> 56) & 0x80);
  const uint64_t magnitude = bits & ~kDoubleSignBit;
  if (magnitude >= kF143MaxFiniteBits) return sign | kF143MaxFinite;
  const auto code = static_cast<uint8_t>(round_magnitude_nearest_even(magnitude, kF143MantissaBits, kF143MinExponent));
  return code == 0 ? 0 : static_cast<uint8_t>(sign | code);
}
}  // namespace detail

inline bool f143_is_nan(uint8_t code) { return code == kF143NaN; }

// Exact for every code and scale (a positive quiet NaN for 0x80).
inline double f143_to_double(uint8_t code, int8_t scale) {
  if (code == kF143NaN) return detail::kF143ToDouble[kF143NaN];
  return detail::kF143ToDouble[code] * detail::power_of_two(scale);
}

// Exact when scale <= 120; above, large values round to +-inf (one rounding, from the exact
// value). 0x80 -> a positive quiet NaN.
inline float f143_to_float(uint8_t code, int8_t scale) { return static_cast<float>(f143_to_double(code, scale)); }

// Exact when -14 <= scale <= 8 (so always at the weights' scale -4); otherwise the exact
// value rounded once to FP16, nearest even (overflow to +-inf, underflow to subnormals or a
// signed zero). 0x80 -> kFp16CanonicalNaN.
inline uint16_t f143_to_fp16(uint8_t code, int8_t scale) { return fp16_from_double(f143_to_double(code, scale)); }

// The code whose value decode(code) * 2^scale is nearest to x: ties to even, finite values
// beyond 240 * 2^scale saturate to +-240, NaN and +-inf -> 0x80, zero results -> 0x00.
inline uint8_t f143_from_double(double x, int8_t scale) {
  if (!std::isfinite(x)) return kF143NaN;
  // Exact unless it overflows to infinity (which then saturates) or underflows far below the
  // smallest F143 value (which then rounds to zero either way).
  return detail::f143_round_saturating(x * detail::power_of_two(-scale));
}

// float and fp16 values are exact as doubles, so these round once too.
inline uint8_t f143_from_float(float x, int8_t scale) { return f143_from_double(x, scale); }
inline uint8_t f143_from_fp16(uint16_t h, int8_t scale) { return f143_from_double(fp16_to_float(h), scale); }

// Per-tensor decode tables (the scale is tensor-wide): entry c = f143_to_float / _fp16(c, scale).
std::array<float, 256> f143_float_table(int8_t scale);
std::array<uint16_t, 256> f143_fp16_table(int8_t scale);

}  // namespace lockstep::arch
