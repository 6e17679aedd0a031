#include "numerics/stochastic_rounding.hpp"

#include <bit>

#include "numerics/binary_rounding.hpp"
#include "numerics/fp16.hpp"

namespace lockstep::arch {
namespace {

constexpr uint64_t kTwoToThe16Bits = 0x40f0000000000000ull;  // 65536.0
static_assert(std::bit_cast<uint64_t>(65536.0) == kTwoToThe16Bits);

// ceil(value / 2^shift) for any shift >= 0.
constexpr uint64_t shift_right_ceiling(uint64_t value, int shift) {
  if (shift == 0) return value;
  if (shift >= 64) return value != 0;
  const uint64_t dropped = value & ((uint64_t{1} << shift) - 1);
  return (value >> shift) + (dropped != 0);
}

// random / 2^64 < fraction, fraction = (significand mod 2^shift) / 2^shift (exact for
// shift <= 64; for a larger shift the probability is within 2^-64 of the fraction).
constexpr bool rounds_up(uint64_t significand, int shift, uint64_t random) {
  if (shift < 64) {
    const uint64_t dropped = significand & ((uint64_t{1} << shift) - 1);
    return (random >> (64 - shift)) < dropped;
  }
  // Only zero remains after truncation; compare random < significand * 2^(64 - shift).
  return random < shift_right_ceiling(significand, shift - 64);
}

}  // namespace

uint16_t fp16_from_double_stochastic(double x, uint64_t random) {
  const auto bits = std::bit_cast<uint64_t>(x);
  const auto sign = static_cast<uint16_t>((bits >> 48) & kFp16SignBit);
  const uint64_t magnitude = bits & ~kDoubleSignBit;
  if (magnitude >= kTwoToThe16Bits) {
    return sign | (magnitude > kDoubleInfinityBits ? kFp16CanonicalNaN : kFp16Infinity);
  }
  const TargetQuanta q = to_target_quanta(magnitude, kFp16MantissaBits, kFp16MinExponent);
  const uint64_t truncated = q.shift < 64 ? q.significand >> q.shift : 0;
  const uint64_t code = truncated + q.exponent_code + rounds_up(q.significand, q.shift, random);
  return sign | static_cast<uint16_t>(code);
}

uint16_t fp16_from_float_stochastic(float x, uint64_t random) { return fp16_from_double_stochastic(x, random); }

}  // namespace lockstep::arch
