#pragma once
// Rounding a double's magnitude to a narrower binary floating-point format (FP16, F143) with
// integer operations only, so the result never depends on the FPU's mode or a second rounding.
#include <cstdint>

namespace lockstep::arch {

inline constexpr uint64_t kDoubleSignBit = uint64_t{1} << 63;
inline constexpr uint64_t kDoubleInfinityBits = 0x7ff0000000000000ull;
inline constexpr int kDoubleFractionBits = 52;

// A finite magnitude as significand / 2^shift quanta of the target format: the truncated
// target code is (significand >> shift) + exponent_code, and adding 1 to it gives the next value
// up (a carry into the exponent field is the right code, also from the largest subnormal).
struct TargetQuanta {
  uint64_t significand;    // < 2^53
  int shift;               // >= 52 - target mantissa bits
  uint32_t exponent_code;  // the target's exponent field minus one, in place; 0 when subnormal
};

// magnitude: the bits of a finite double without its sign, below 2^(max_exponent + 1) of the
// target. mantissa_bits: the target's stored fraction bits. min_exponent: that of its smallest
// normal value.
constexpr TargetQuanta to_target_quanta(uint64_t magnitude, int mantissa_bits, int min_exponent) {
  const int field = static_cast<int>(magnitude >> kDoubleFractionBits);
  const uint64_t fraction = magnitude & ((uint64_t{1} << kDoubleFractionBits) - 1);
  const uint64_t significand = field == 0 ? fraction : fraction | (uint64_t{1} << kDoubleFractionBits);
  const int exponent = field == 0 ? -1022 : field - 1023;
  const int base_shift = kDoubleFractionBits - mantissa_bits;
  if (exponent < min_exponent) return {significand, base_shift + (min_exponent - exponent), 0};
  return {significand, base_shift, static_cast<uint32_t>(exponent - min_exponent) << mantissa_bits};
}

// value / 2^shift rounded to nearest, ties to even; 1 <= shift <= 63, value < 2^63.
constexpr uint64_t shift_right_nearest_even(uint64_t value, int shift) {
  const uint64_t half_minus_one = (uint64_t{1} << (shift - 1)) - 1;
  return (value + half_minus_one + ((value >> shift) & 1)) >> shift;
}

// The target code (exponent and fraction fields, no sign) nearest to the magnitude, ties to
// even. Preconditions as for to_target_quanta, and the caller handles overflow.
constexpr uint32_t round_magnitude_nearest_even(uint64_t magnitude, int mantissa_bits, int min_exponent) {
  const TargetQuanta q = to_target_quanta(magnitude, mantissa_bits, min_exponent);
  // significand < 2^53 <= 2^(shift - 1): below half the smallest subnormal, so zero.
  if (q.shift > kDoubleFractionBits + 1) return 0;
  return static_cast<uint32_t>(shift_right_nearest_even(q.significand, q.shift)) + q.exponent_code;
}

}  // namespace lockstep::arch
