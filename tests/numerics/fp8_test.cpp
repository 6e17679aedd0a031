// F143 (E4M3 FNUZ): every code decoded at several scales against its field formula, round
// trips, ties to even at every midpoint, saturation, and every FP16 code encoded against an
// independent nearest-candidate search (tests/numerics/numerics_reference.hpp).
#include "numerics/fp8.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "numerics/fp16.hpp"
#include "numerics_reference.hpp"

namespace lockstep::arch {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

int8_t scale_of(int s) { return static_cast<int8_t>(s); }

TEST(F143Decode, EveryCodeAtScalesZeroAndMinusFourEqualsItsFieldValue) {
  for (int scale : {0, -4}) {
    for (uint32_t c = 0; c < 256; ++c) {
      const auto code = static_cast<uint8_t>(c);
      const double want = reference::f143_value(code, scale);
      if (c == 0x80) {
        EXPECT_TRUE(std::isnan(f143_to_double(code, scale_of(scale))));
        EXPECT_TRUE(std::isnan(f143_to_float(code, scale_of(scale))));
        EXPECT_EQ(f143_to_fp16(code, scale_of(scale)), kFp16CanonicalNaN);
        continue;
      }
      EXPECT_EQ(f143_to_double(code, scale_of(scale)), want) << c;
      EXPECT_EQ(static_cast<double>(f143_to_float(code, scale_of(scale))), want) << c;
      // Exact in FP16 at both scales (values 2^-14 .. 240 at most 4 significant bits).
      EXPECT_EQ(reference::fp16_value(f143_to_fp16(code, scale_of(scale))), want) << c;
      EXPECT_FALSE(std::signbit(f143_to_double(code, scale_of(scale))) && want == 0) << c;
    }
  }
  EXPECT_EQ(f143_to_double(0x7f, 0), 240.0);
  EXPECT_EQ(f143_to_double(0xff, 0), -240.0);
  EXPECT_EQ(f143_to_double(0x01, 0), std::ldexp(1.0, -10));
  EXPECT_EQ(f143_to_double(0x08, 0), std::ldexp(1.0, -7));
  EXPECT_EQ(f143_to_double(0x40, 0), 1.0);
  EXPECT_EQ(f143_to_double(0x01, -4), std::ldexp(1.0, -14));  // FP16's smallest normal
  EXPECT_EQ(f143_to_fp16(0x7f, -4), 0x4b80);                  // 15
}

// Double is exact at every scale; float from the exact value rounded once (exact up to 120);
// FP16 exact for -14 <= scale <= 8, otherwise the exact value rounded to nearest even.
TEST(F143Decode, EveryCodeAtEveryScale) {
  for (int scale = -128; scale <= 127; ++scale) {
    for (uint32_t c = 0; c < 256; ++c) {
      if (c == 0x80) continue;
      const auto code = static_cast<uint8_t>(c);
      const double want = reference::f143_value(code, scale);
      ASSERT_EQ(f143_to_double(code, scale_of(scale)), want) << c << " " << scale;
      const float as_float = f143_to_float(code, scale_of(scale));
      ASSERT_EQ(as_float, static_cast<float>(want)) << c << " " << scale;
      if (scale <= 120) {
        ASSERT_EQ(static_cast<double>(as_float), want) << c << " " << scale;
      }
      const uint16_t as_fp16 = f143_to_fp16(code, scale_of(scale));
      ASSERT_EQ(as_fp16, reference::fp16_nearest_even(want)) << c << " " << scale;
      if (scale >= -14 && scale <= 8) {
        ASSERT_EQ(reference::fp16_value(as_fp16), want) << c << " " << scale;
      }
    }
  }
  EXPECT_EQ(f143_to_fp16(0x7f, 9), 0x7c00);    // 240 * 512 overflows FP16
  EXPECT_EQ(f143_to_fp16(0x01, -15), 0x0000);  // 2^-25: a tie, to even zero
  EXPECT_EQ(f143_to_fp16(0x81, -15), 0x8000);
}

TEST(F143Decode, PerScaleTablesEqualTheFunctions) {
  for (int scale : {-128, -20, -4, 0, 5, 127}) {
    const auto floats = f143_float_table(scale_of(scale));
    const auto halves = f143_fp16_table(scale_of(scale));
    for (uint32_t c = 0; c < 256; ++c) {
      const auto code = static_cast<uint8_t>(c);
      EXPECT_EQ(std::bit_cast<uint32_t>(floats[c]), std::bit_cast<uint32_t>(f143_to_float(code, scale_of(scale))));
      EXPECT_EQ(halves[c], f143_to_fp16(code, scale_of(scale)));
    }
  }
}

TEST(F143Encode, EveryCodeRoundTripsThroughDoubleFloatAndFp16) {
  for (int scale : {-128, -14, -4, 0, 3, 8, 100}) {
    for (uint32_t c = 0; c < 256; ++c) {
      if (c == 0x80) continue;
      const auto code = static_cast<uint8_t>(c);
      const double value = f143_to_double(code, scale_of(scale));
      ASSERT_EQ(f143_from_double(value, scale_of(scale)), code) << c << " " << scale;
      ASSERT_EQ(f143_from_float(static_cast<float>(value), scale_of(scale)), code) << c << " " << scale;
      if (scale >= -14 && scale <= 8) {
        ASSERT_EQ(f143_from_fp16(f143_to_fp16(code, scale_of(scale)), scale_of(scale)), code) << c;
      }
    }
  }
}

// Between every two consecutive values (both signs, via zero): the midpoint ties to the even
// code, one double ulp either side goes to the nearer value; the values themselves are exact.
TEST(F143Encode, MidpointsTieToEvenAndNeighboursRoundToNearer) {
  const auto& sorted = reference::f143_candidates();
  for (int scale : {0, -4, 7}) {
    for (size_t i = 0; i + 1 < sorted.size(); ++i) {
      const double low = std::ldexp(sorted[i].value, scale);
      const double high = std::ldexp(sorted[i + 1].value, scale);
      const double mid = (low + high) / 2;
      const uint32_t even = (sorted[i].code & 1) == 0 ? sorted[i].code : sorted[i + 1].code;
      ASSERT_NE(sorted[i].code & 1, sorted[i + 1].code & 1) << i;
      EXPECT_EQ(f143_from_double(mid, scale_of(scale)), even) << mid;
      EXPECT_EQ(f143_from_double(std::nextafter(mid, -kInfinity), scale_of(scale)), sorted[i].code) << mid;
      EXPECT_EQ(f143_from_double(std::nextafter(mid, kInfinity), scale_of(scale)), sorted[i + 1].code) << mid;
      EXPECT_EQ(f143_from_float(static_cast<float>(mid), scale_of(scale)), even) << mid;
      EXPECT_EQ(f143_from_double(std::nextafter(low, kInfinity), scale_of(scale)), sorted[i].code) << low;
      EXPECT_EQ(f143_from_double(std::nextafter(high, -kInfinity), scale_of(scale)), sorted[i + 1].code) << high;
    }
  }
}

TEST(F143Encode, SaturationNaNAndZero) {
  EXPECT_EQ(f143_from_double(240.0, 0), 0x7f);
  EXPECT_EQ(f143_from_double(247.9, 0), 0x7f);
  EXPECT_EQ(f143_from_double(248.0, 0), 0x7f);  // would round to 256: saturates
  EXPECT_EQ(f143_from_double(1e30, 0), 0x7f);
  EXPECT_EQ(f143_from_double(-1e30, 0), 0xff);
  EXPECT_EQ(f143_from_double(std::numeric_limits<double>::max(), -128), 0x7f);  // scaling overflows
  EXPECT_EQ(f143_from_double(-std::numeric_limits<double>::max(), -128), 0xff);
  EXPECT_EQ(f143_from_float(65504.0f, -4), 0x7f);
  EXPECT_EQ(f143_from_double(15.0, -4), 0x7f);
  EXPECT_EQ(f143_from_double(kInfinity, 0), 0x80);
  EXPECT_EQ(f143_from_double(-kInfinity, 0), 0x80);
  EXPECT_EQ(f143_from_float(std::numeric_limits<float>::quiet_NaN(), 0), 0x80);
  EXPECT_EQ(f143_from_double(-std::numeric_limits<double>::quiet_NaN(), -4), 0x80);
  EXPECT_EQ(f143_from_fp16(0x7c00, 0), 0x80);
  EXPECT_EQ(f143_from_fp16(0xfc00, 0), 0x80);
  EXPECT_EQ(f143_from_fp16(0xfe00, 0), 0x80);
  // Tiny values: never negative zero.
  EXPECT_EQ(f143_from_double(0.0, 0), 0x00);
  EXPECT_EQ(f143_from_double(-0.0, 0), 0x00);
  EXPECT_EQ(f143_from_double(-std::ldexp(1.0, -11), 0), 0x00);  // tie with zero: even
  EXPECT_EQ(f143_from_double(-std::ldexp(1.0, -12), 0), 0x00);
  EXPECT_EQ(f143_from_double(-std::ldexp(1.5, -11), 0), 0x81);
  EXPECT_EQ(f143_from_double(std::nextafter(std::ldexp(1.0, -11), 1.0), 0), 0x01);
  EXPECT_EQ(f143_from_double(-1e-300, 127), 0x00);
  EXPECT_EQ(f143_from_fp16(0x8001, 0), 0x00);    // -2^-24
  EXPECT_EQ(f143_from_fp16(0x8001, -14), 0x81);  // -2^-24 = -2^-10 * 2^-14
}

// Every FP16 code at several scales against the nearest-candidate search.
TEST(F143Encode, EveryFp16CodeMatchesTheNearestCandidate) {
  for (int scale : {0, -4, -14, 5, -20}) {
    for (uint32_t code = 0; code < 65536; ++code) {
      const auto h = static_cast<uint16_t>(code);
      const uint8_t want = reference::f143_nearest_even_saturating(reference::fp16_value(h), scale);
      ASSERT_EQ(f143_from_fp16(h, scale_of(scale)), want) << code << " " << scale;
    }
  }
}

TEST(F143Encode, RandomFloatsAndDoublesMatchTheNearestCandidate) {
  std::mt19937_64 random(99);
  for (int i = 0; i < 200000; ++i) {
    const double mantissa = std::ldexp(static_cast<double>(random() >> 11), -53);
    const int exponent = static_cast<int>(random() % 40) - 24;  // about 2^-24 .. 2^16
    const double x = std::ldexp(1.0 + mantissa, exponent) * ((random() & 1) ? -1 : 1);
    const int scale = static_cast<int>(random() % 17) - 10;
    const auto f = static_cast<float>(x);
    ASSERT_EQ(f143_from_double(x, scale_of(scale)), reference::f143_nearest_even_saturating(x, scale)) << x;
    ASSERT_EQ(f143_from_float(f, scale_of(scale)), reference::f143_nearest_even_saturating(f, scale)) << f;
  }
}

}  // namespace
}  // namespace lockstep::arch
