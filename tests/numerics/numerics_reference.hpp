#pragma once
// Second-method references for the numerics tests: values from the format fields with
// std::ldexp, and rounding by searching sorted tables of all representable values (comparing
// with the exact midpoint of the two neighbours), independent of arch/'s bit manipulation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace lockstep::arch::reference {

// The value of an FP16 code from its fields.
inline double fp16_value(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int fraction = h & 0x3ff;
  double magnitude = 0;
  if (exponent == 0x1f) {
    magnitude = fraction == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(fraction, -24);
  } else {
    magnitude = std::ldexp(1024 + fraction, exponent - 25);
  }
  return (h & 0x8000) ? -magnitude : magnitude;
}

// The value of an F143 code times 2^scale from its fields (0x80: NaN).
inline double f143_value(uint8_t c, int scale) {
  if (c == 0x80) return std::numeric_limits<double>::quiet_NaN();
  const int exponent = (c >> 3) & 0xf;
  const int fraction = c & 7;
  const double magnitude =
      exponent == 0 ? std::ldexp(fraction, -10 + scale) : std::ldexp(8 + fraction, exponent - 11 + scale);
  return (c & 0x80) ? -magnitude : magnitude;
}

struct Candidate {
  double value;
  uint32_t code;
};

// Nearest candidate to x in a list sorted by value; x inside [front, back]. Ties: even code.
inline uint32_t nearest_even(const std::vector<Candidate>& sorted, double x) {
  auto above =
      std::upper_bound(sorted.begin(), sorted.end(), x, [](double v, const Candidate& c) { return v < c.value; });
  if (above == sorted.begin()) return above->code;
  const Candidate& lower = *(above - 1);
  if (above == sorted.end() || lower.value == x) return lower.code;
  const double midpoint = (lower.value + above->value) / 2;  // exact: few significant bits
  if (x < midpoint) return lower.code;
  if (x > midpoint) return above->code;
  return (lower.code & 1) == 0 ? lower.code : above->code;
}

// All non-negative finite FP16 values, then 2^16 with the code of +infinity (the next value up
// if the exponent range went on: IEEE rounds to infinity exactly when that would be chosen).
inline const std::vector<Candidate>& fp16_candidates() {
  static const std::vector<Candidate> list = [] {
    std::vector<Candidate> v;
    for (uint32_t h = 0; h < 0x7c00; ++h) v.push_back({fp16_value(static_cast<uint16_t>(h)), h});
    v.push_back({65536.0, 0x7c00});
    return v;
  }();
  return list;
}

// IEEE round-to-nearest-even of x to FP16 (NaN: 0x7e00 with x's sign).
inline uint16_t fp16_nearest_even(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7e00;
  const double magnitude = std::fabs(x);
  if (magnitude >= 65536.0) return sign | 0x7c00;
  return sign | static_cast<uint16_t>(nearest_even(fp16_candidates(), magnitude));
}

// The two FP16 neighbours of a finite |x| < 2^16: largest <= |x| and smallest >= |x| (codes,
// with x's sign; equal when x is representable).
struct Neighbours {
  uint16_t lower;
  uint16_t upper;
};
inline Neighbours fp16_neighbours(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const std::vector<Candidate>& list = fp16_candidates();
  const double magnitude = std::fabs(x);
  auto above =
      std::upper_bound(list.begin(), list.end(), magnitude, [](double v, const Candidate& c) { return v < c.value; });
  const Candidate& lower = *(above - 1);
  const uint32_t upper = lower.value == magnitude ? lower.code : above->code;
  return {static_cast<uint16_t>(sign | lower.code), static_cast<uint16_t>(sign | upper)};
}

// Every finite F143 value at scale 0, sorted (zero once, as 0x00).
inline const std::vector<Candidate>& f143_candidates() {
  static const std::vector<Candidate> list = [] {
    std::vector<Candidate> v;
    for (uint32_t c = 0; c < 256; ++c) {
      if (c != 0x80) v.push_back({f143_value(static_cast<uint8_t>(c), 0), c});
    }
    std::sort(v.begin(), v.end(), [](const Candidate& a, const Candidate& b) { return a.value < b.value; });
    return v;
  }();
  return list;
}

// The F143 code nearest to x / 2^scale, ties to even, saturating at +-240; NaN and +-inf -> 0x80.
inline uint8_t f143_nearest_even_saturating(double x, int scale) {
  if (!std::isfinite(x)) return 0x80;
  const double units = std::ldexp(x, -scale);
  return static_cast<uint8_t>(nearest_even(f143_candidates(), units));
}

}  // namespace lockstep::arch::reference
