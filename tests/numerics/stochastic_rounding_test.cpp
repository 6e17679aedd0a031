// Stochastic rounding to FP16: the generator's formula and determinism, exact values kept,
// results always one of the two neighbours, and the mean over many keys close to x.
#include "numerics/stochastic_rounding.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>

#include "numerics/fp16.hpp"
#include "numerics_reference.hpp"

namespace lockstep::arch {
namespace {

// The textbook SplitMix64 generator, stepped sequentially: a second way to the same bits.
class SequentialSplitMix64 {
 public:
  explicit SequentialSplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// Output `index` (from 0) of the sequential generator seeded with `seed`.
uint64_t nth_output(uint64_t seed, uint64_t index) {
  SequentialSplitMix64 generator(seed);
  uint64_t out = 0;
  for (uint64_t i = 0; i <= index; ++i) out = generator.next();
  return out;
}

TEST(RoundingRandom, FollowsTheDocumentedChainOfSplitMix64Outputs) {
  for (uint64_t seed : {0ull, 1ull, 0xdeadbeefcafef00dull}) {
    for (uint32_t tile : {0u, 5u, 1471u}) {
      for (uint32_t worker : {0u, 5u}) {
        for (uint64_t call : {0ull, 3ull}) {
          for (uint64_t element : {0ull, 1ull, 63ull}) {
            const uint64_t want = nth_output(nth_output(nth_output(nth_output(seed, tile), worker), call), element);
            ASSERT_EQ(rounding_random_bits(seed, tile, worker, call, element), want);
            ASSERT_EQ(RoundingRandom(seed, tile, worker, call).bits(element), want);
          }
        }
      }
    }
  }
  // Pinned, so any change to the formula is seen (it changes every stochastic result).
  EXPECT_EQ(rounding_random_bits(0, 0, 0, 0, 0), 0x2130748aaac80268ull);
  EXPECT_EQ(rounding_random_bits(1, 2, 3, 4, 5), 0xc273bcd50b53c863ull);
  static_assert(rounding_random_bits(1, 2, 3, 4, 5) == RoundingRandom(1, 2, 3, 4).bits(5));
}

TEST(RoundingRandom, EveryKeyMatters) {
  std::set<uint64_t> seen;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    for (uint32_t tile = 0; tile < 4; ++tile) {
      for (uint32_t worker = 0; worker < 4; ++worker) {
        for (uint64_t call = 0; call < 4; ++call) {
          for (uint64_t element = 0; element < 16; ++element) {
            EXPECT_TRUE(seen.insert(rounding_random_bits(seed, tile, worker, call, element)).second);
          }
        }
      }
    }
  }
}

TEST(StochasticRounding, RepresentableValuesAreUnchanged) {
  const RoundingRandom random(42, 7, 3, 1);
  for (uint32_t code = 0; code < 65536; ++code) {
    const auto h = static_cast<uint16_t>(code);
    if (fp16_is_nan(h)) continue;
    const double x = reference::fp16_value(h);
    for (uint64_t bits : {uint64_t{0}, ~uint64_t{0}, random.bits(code)}) {
      ASSERT_EQ(fp16_from_double_stochastic(x, bits), h) << code;
      ASSERT_EQ(fp16_from_float_stochastic(static_cast<float>(x), bits), h) << code;
    }
  }
}

TEST(StochasticRounding, ResultIsAlwaysOneOfTheTwoNeighbours) {
  std::mt19937_64 inputs(2024);
  const RoundingRandom random(9, 0, 0, 0);
  for (uint64_t i = 0; i < 300000; ++i) {
    const double mantissa = std::ldexp(static_cast<double>(inputs() >> 11), -53);
    const int exponent = static_cast<int>(inputs() % 56) - 40;  // about 2^-40 .. 2^16
    const double x = std::ldexp(1.0 + mantissa, exponent) * ((inputs() & 1) ? -1 : 1);
    const uint16_t got = fp16_from_double_stochastic(x, random.bits(i));
    if (std::fabs(x) >= 65536.0) {
      ASSERT_EQ(got, std::signbit(x) ? 0xfc00 : 0x7c00) << x;
      continue;
    }
    const reference::Neighbours n = reference::fp16_neighbours(x);
    ASSERT_TRUE(got == n.lower || got == n.upper) << x;
    // Up iff random / 2^64 < the distance fraction: random 0 always rounds an inexact x up,
    // all ones never does.
    ASSERT_EQ(fp16_from_double_stochastic(x, 0), n.upper) << x;
    ASSERT_EQ(fp16_from_double_stochastic(x, ~uint64_t{0}), n.lower) << x;
  }
}

// The fraction of results that round up, over many element keys, is the distance fraction.
double up_fraction(double x, uint64_t seed, int samples) {
  const RoundingRandom random(seed, 3, 1, 0);
  const reference::Neighbours n = reference::fp16_neighbours(x);
  int up = 0;
  for (int e = 0; e < samples; ++e) {
    const uint16_t got = fp16_from_double_stochastic(x, random.bits(static_cast<uint64_t>(e)));
    EXPECT_TRUE(got == n.lower || got == n.upper) << x;
    up += got == n.upper;
  }
  return static_cast<double>(up) / samples;
}

TEST(StochasticRounding, MeanOverManyKeysIsCloseToX) {
  constexpr int kSamples = 100000;
  const double tiny = std::ldexp(1.5, -37);  // far below the smallest subnormal: shift > 64
  for (double x : {1.0 + std::ldexp(0.3, -10), -1.0 / 3, 1000.7, std::ldexp(0.7, -24), std::ldexp(5.25, -24), 65510.0,
                   -0.1, tiny}) {
    const reference::Neighbours n = reference::fp16_neighbours(x);
    const double lower = reference::fp16_value(n.lower);
    const double upper = n.upper == 0x7c00 ? 65536.0 : reference::fp16_value(n.upper);
    const double p = (x - lower) / (upper - lower);
    const double sigma = std::sqrt(p * (1 - p) / kSamples);
    for (uint64_t seed : {1ull, 2ull}) {
      const double fraction = up_fraction(x, seed, kSamples);
      EXPECT_NEAR(fraction, p, 5 * sigma + 1e-9) << x << " seed " << seed;
      // The mean of the results, in FP16 ulps of x, is within the same bound of x.
      if (n.upper != 0x7c00) {
        const double mean = lower + fraction * (upper - lower);
        EXPECT_NEAR((mean - x) / (upper - lower), 0.0, 5 * sigma + 1e-9) << x;
      }
    }
  }
}

TEST(StochasticRounding, OverflowNaNAndSignedZero) {
  EXPECT_EQ(fp16_from_double_stochastic(65536.0, 0), 0x7c00);
  EXPECT_EQ(fp16_from_double_stochastic(-1e10, 0), 0xfc00);
  EXPECT_EQ(fp16_from_double_stochastic(std::numeric_limits<double>::infinity(), 123), 0x7c00);
  EXPECT_EQ(fp16_from_double_stochastic(65505.0, ~uint64_t{0}), 0x7bff);
  EXPECT_EQ(fp16_from_double_stochastic(65505.0, 0), 0x7c00);  // up past 65504: infinity
  EXPECT_EQ(fp16_from_double_stochastic(std::numeric_limits<double>::quiet_NaN(), 0), 0x7e00);
  EXPECT_EQ(fp16_from_double_stochastic(-std::numeric_limits<double>::quiet_NaN(), 0), 0xfe00);
  EXPECT_EQ(fp16_from_double_stochastic(-std::ldexp(1.0, -30), ~uint64_t{0}), 0x8000);
  EXPECT_EQ(fp16_from_double_stochastic(-std::ldexp(1.0, -30), 0), 0x8001);
  // 2^-1074 is 2^-1050 of the smallest subnormal: only random 0 (probability 2^-64) rounds up.
  EXPECT_EQ(fp16_from_double_stochastic(std::numeric_limits<double>::denorm_min(), 1), 0x0000);
  EXPECT_EQ(fp16_from_double_stochastic(std::numeric_limits<double>::denorm_min(), 0), 0x0001);
}

}  // namespace
}  // namespace lockstep::arch
