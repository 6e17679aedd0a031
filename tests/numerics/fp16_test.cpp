// FP16: every code decoded exactly, round trips, and float/double -> FP16 rounding against an
// independent nearest-even search (tests/numerics/numerics_reference.hpp), at every midpoint.
#include "numerics/fp16.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "numerics_reference.hpp"

namespace lockstep::arch {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

uint16_t canonical(uint16_t h) { return fp16_is_nan(h) ? (h & kFp16SignBit) | kFp16CanonicalNaN : h; }

TEST(Fp16ToFloat, EveryCodeEqualsItsFieldValue) {
  for (uint32_t code = 0; code < 65536; ++code) {
    const auto h = static_cast<uint16_t>(code);
    const float got = fp16_to_float(h);
    const double want = reference::fp16_value(h);
    ASSERT_EQ(std::signbit(got), (h & kFp16SignBit) != 0) << code;
    if (std::isnan(want)) {
      // Quiet, same sign, payload kept in the top fraction bits.
      const uint32_t bits = std::bit_cast<uint32_t>(got);
      ASSERT_TRUE(std::isnan(got)) << code;
      ASSERT_NE(bits & 0x00400000u, 0u) << code;
      ASSERT_EQ((bits >> 13) & 0x1ff, code & 0x1ffu) << code;
    } else {
      ASSERT_EQ(static_cast<double>(got), want) << code;
    }
  }
}

TEST(Fp16RoundTrip, EveryCodeThroughFloatAndDouble) {
  for (uint32_t code = 0; code < 65536; ++code) {
    const auto h = static_cast<uint16_t>(code);
    ASSERT_EQ(fp16_from_float(fp16_to_float(h)), canonical(h)) << code;
    ASSERT_EQ(fp16_from_double(fp16_to_float(h)), canonical(h)) << code;
  }
}

// For every pair of consecutive non-negative codes (the last pair: 65504 and 2^16, the overflow
// boundary), both signs: the midpoint, one float and one double ulp either side, the values.
TEST(Fp16FromFloat, MidpointsAndNeighboursMatchNearestEven) {
  std::vector<double> inputs;
  for (uint32_t code = 0; code < 0x7c00; ++code) {
    const double low = reference::fp16_value(static_cast<uint16_t>(code));
    const double high = code == 0x7bff ? 65536.0 : reference::fp16_value(static_cast<uint16_t>(code + 1));
    const double mid = (low + high) / 2;
    const auto fmid = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(fmid), mid);  // 12 significant bits fit a float
    for (double x : {low, mid, std::nextafter(mid, 0.0), std::nextafter(mid, kInfinity),
                     static_cast<double>(std::nextafter(fmid, 0.0f)), static_cast<double>(std::nextafter(fmid, 1e30f)),
                     std::nextafter(low, kInfinity)}) {
      inputs.push_back(x);
      inputs.push_back(-x);
    }
  }
  for (double x : inputs) {
    const uint16_t want = reference::fp16_nearest_even(x);
    ASSERT_EQ(fp16_from_double(x), want) << x;
    if (static_cast<double>(static_cast<float>(x)) == x) {
      ASSERT_EQ(fp16_from_float(static_cast<float>(x)), want) << x;
    }
  }
}

TEST(Fp16FromFloat, RandomFloatsAndDoublesMatchNearestEven) {
  std::mt19937_64 random(12345);
  for (int i = 0; i < 200000; ++i) {
    // Exponents spread across and beyond FP16's range: |x| in about [2^-40, 2^20).
    const double mantissa = std::ldexp(static_cast<double>(random() >> 11), -53);  // [0, 1)
    const int exponent = static_cast<int>(random() % 60) - 40;
    const double x = std::ldexp(1.0 + mantissa, exponent) * ((random() & 1) ? -1 : 1);
    const auto f = static_cast<float>(x);
    ASSERT_EQ(fp16_from_double(x), reference::fp16_nearest_even(x)) << x;
    ASSERT_EQ(fp16_from_float(f), reference::fp16_nearest_even(f)) << f;
  }
}

TEST(Fp16FromDouble, RoundsOnceNotViaFloat) {
  // 1 + 2^-11 + 2^-40 is above the midpoint of 1 and 1 + 2^-10; as a float it is the midpoint
  // itself, which would tie to 1.
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(fp16_from_double(x), 0x3c01);
  EXPECT_EQ(fp16_from_float(static_cast<float>(x)), 0x3c00);
  // The same around the overflow boundary and the smallest subnormal.
  EXPECT_EQ(fp16_from_double(std::nextafter(65520.0, 0.0)), kFp16MaxFinite);
  EXPECT_EQ(fp16_from_double(std::ldexp(1.0, -25) + std::ldexp(1.0, -60)), 0x0001);
}

TEST(Fp16FromDouble, SpecialValues) {
  EXPECT_EQ(fp16_from_double(0.0), 0x0000);
  EXPECT_EQ(fp16_from_double(-0.0), 0x8000);
  EXPECT_EQ(fp16_from_double(65504.0), 0x7bff);
  EXPECT_EQ(fp16_from_double(65519.0), 0x7bff);
  EXPECT_EQ(fp16_from_double(65520.0), 0x7c00);
  EXPECT_EQ(fp16_from_double(-65520.0), 0xfc00);
  EXPECT_EQ(fp16_from_double(std::numeric_limits<double>::max()), 0x7c00);
  EXPECT_EQ(fp16_from_double(kInfinity), 0x7c00);
  EXPECT_EQ(fp16_from_double(-kInfinity), 0xfc00);
  EXPECT_EQ(fp16_from_float(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(fp16_from_double(std::numeric_limits<double>::quiet_NaN()), 0x7e00);
  EXPECT_EQ(fp16_from_double(-std::numeric_limits<double>::quiet_NaN()), 0xfe00);
  EXPECT_EQ(fp16_from_double(std::bit_cast<double>(0x7ff0000000000001ull)), 0x7e00);  // signalling
  EXPECT_EQ(fp16_from_float(std::bit_cast<float>(0xffbfffffu)), 0xfe00);
  EXPECT_EQ(fp16_from_double(std::ldexp(1.0, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(fp16_from_double(std::ldexp(1.0, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(fp16_from_double(-std::ldexp(1.0, -25)), 0x8000);
  EXPECT_EQ(fp16_from_double(std::ldexp(3.0, -25)), 0x0002);     // tie to even: 2 * 2^-24
  EXPECT_EQ(fp16_from_double(std::ldexp(1023.5, -24)), 0x0400);  // carries into the normals
  EXPECT_EQ(fp16_from_double(std::numeric_limits<double>::denorm_min()), 0x0000);
  EXPECT_EQ(fp16_from_float(-std::numeric_limits<float>::denorm_min()), 0x8000);
}

// Values to combine every code with: zeros, extremes, subnormals, infinities, NaN, ordinary.
std::vector<uint16_t> operand_sample() {
  std::vector<uint16_t> sample = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x3c01, 0x3555,
                                  0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x4000, 0x1400, 0x5bff, 0xc2aa, 0x0155};
  for (uint32_t code = 0x0013; code < 0x10000; code += 0x0fb7) sample.push_back(static_cast<uint16_t>(code));
  return sample;
}

// The reference sum and product: exact in double (checked), rounded by the reference search;
// a NaN result is the positive canonical NaN.
uint16_t reference_round(double exact) {
  return std::isnan(exact) ? kFp16CanonicalNaN : reference::fp16_nearest_even(exact);
}

TEST(Fp16Arithmetic, AddAndMulAreTheExactResultRoundedOnce) {
  for (uint16_t b : operand_sample()) {
    const double vb = reference::fp16_value(b);
    for (uint32_t code = 0; code < 65536; ++code) {
      const auto a = static_cast<uint16_t>(code);
      const double va = reference::fp16_value(a);
      const double sum = va + vb;
      const double product = va * vb;
      if (std::isfinite(sum)) {
        const double recovered = sum - va;  // TwoSum's error term is zero: the sum is exact
        ASSERT_EQ(recovered, vb);
        ASSERT_EQ(sum - recovered, va);
      }
      ASSERT_EQ(fp16_add(a, b), reference_round(sum)) << code << " + " << b;
      ASSERT_EQ(fp16_add(b, a), reference_round(sum)) << b << " + " << code;
      ASSERT_EQ(fp16_mul(a, b), reference_round(product)) << code << " * " << b;
      if (std::isfinite(product)) {
        ASSERT_EQ(static_cast<double>(static_cast<float>(product)), product);  // exact in float
      }
    }
  }
}

TEST(Fp16Arithmetic, RandomPairs) {
  std::mt19937 random(7);
  for (int i = 0; i < 300000; ++i) {
    const auto a = static_cast<uint16_t>(random());
    const auto b = static_cast<uint16_t>(random());
    const double va = reference::fp16_value(a);
    const double vb = reference::fp16_value(b);
    ASSERT_EQ(fp16_add(a, b), reference_round(va + vb)) << a << " + " << b;
    ASSERT_EQ(fp16_mul(a, b), reference_round(va * vb)) << a << " * " << b;
  }
}

TEST(Fp16Arithmetic, NaNOverflowAndSignedZeros) {
  EXPECT_EQ(fp16_add(0x7c00, 0xfc00), kFp16CanonicalNaN);
  EXPECT_EQ(fp16_mul(0x0000, 0xfc00), kFp16CanonicalNaN);
  EXPECT_EQ(fp16_add(0xfe00, 0x3c00), kFp16CanonicalNaN);
  EXPECT_EQ(fp16_add(0x7bff, 0x7bff), 0x7c00);  // overflow
  EXPECT_EQ(fp16_add(0x3c00, 0xbc00), 0x0000);  // exact zero sum is +0 (round to nearest)
  EXPECT_EQ(fp16_add(0x8000, 0x8000), 0x8000);
  EXPECT_EQ(fp16_mul(0x8000, 0x3c00), 0x8000);
  EXPECT_EQ(fp16_mul(0x0001, 0x0001), 0x0000);  // 2^-48 underflows to zero
  EXPECT_EQ(fp16_mul(0x8001, 0x0001), 0x8000);
}

}  // namespace
}  // namespace lockstep::arch
