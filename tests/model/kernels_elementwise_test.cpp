// The element-wise kernels (gelu, add, cast) run on a tile's SRAM and compared bit for bit with
// the deliberately simple references of tests/model/elementwise_reference.hpp; and every
// element-wise and row kernel's check(), ranges and cycles. Fixed seeds.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "numerics/fp16.hpp"
#include "tests/model/elementwise_reference.hpp"

namespace lockstep::model {
namespace {

using namespace elementwise_reference;  // NOLINT(google-build-using-namespace): the tests' own helpers

TEST(ElementwiseKernels, AllFiveAreRegistered) {
  const auto names = kernel_names();
  for (const char* name : {"softmax", "layernorm", "gelu", "add", "cast"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

// --- gelu -----------------------------------------------------------------------------------

TEST(Gelu, EveryFp16InputMatchesTheNineStepReference) {
  Sram m(machine());
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  put(m, kBase, all);
  run("gelu", {kBase + 0x20000, kBase}, {65536}, m);
  const auto got = get16(m, kBase + 0x20000, 65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    ASSERT_EQ(got[i], reference_gelu(static_cast<uint16_t>(i))) << std::hex << "x = 0x" << i;
  }
  // In place (`gelu h, h`) gives the same bits.
  run("gelu", {kBase, kBase}, {65536}, m);
  EXPECT_EQ(get16(m, kBase, 65536), got);
}

// The kernels' exp and tanh tables take the C library's double exp/tanh rounded once to FP16.
// On this platform, for every FP16 input, the double result is more than 2^-30 (relative,
// about 8 x 10^6 double ulps) away from every FP16 rounding boundary, so any libm whose error is
// below that (all mainstream ones are within a few ulps) builds the same tables, and they equal
// the exact function rounded once.
TEST(ElementwiseKernels, ExpAndTanhAreFarFromFp16RoundingBoundaries) {
  for (const auto f : {+[](double x) { return std::exp(x); }, +[](double x) { return std::tanh(x); }}) {
    for (uint32_t code = 0; code < 65536; ++code) {
      const double v = f(arch::fp16_to_float(static_cast<uint16_t>(code)));
      if (std::isnan(v) || std::isinf(v)) continue;
      const uint16_t h = arch::fp16_from_double(v);
      ASSERT_EQ(arch::fp16_from_double(v * (1 + 0x1p-30)), h) << code;
      ASSERT_EQ(arch::fp16_from_double(v * (1 - 0x1p-30)), h) << code;
    }
  }
}

TEST(Gelu, KnownValues) {
  Sram m(machine());
  const std::vector<uint16_t> in{0x0000, 0x8000, 0x3c00, 0xbc00, 0x4400, 0xc880, 0x7c00, 0xfc00, 0x7e00};
  put(m, kBase, in);
  run("gelu", {kBase + 64, kBase}, {static_cast<int64_t>(in.size())}, m);
  const auto out = get16(m, kBase + 64, in.size());
  EXPECT_EQ(out[0], 0x0000);                // gelu(+0) = +0
  EXPECT_EQ(out[1], 0x8000);                // gelu(-0) = -0
  EXPECT_NEAR(v16(out[2]), 0.8412, 1e-3);   // tanh form at 1
  EXPECT_NEAR(v16(out[3]), -0.1588, 1e-3);  // and at -1
  EXPECT_NEAR(v16(out[4]), 3.9999, 1e-2);   // x large: ~x
  EXPECT_EQ(out[5], 0x8000);                // -9: x^3 underflows the tail to -0
  EXPECT_EQ(out[6], 0x7c00);                // +inf
  EXPECT_EQ(out[7], 0x7e00);                // -inf x 0 = NaN
  EXPECT_EQ(out[8], 0x7e00);                // NaN
}

// --- add ------------------------------------------------------------------------------------

TEST(Add, RandomCodesAndValuesMatchTheReferenceAndAliasing) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> code(0, 0xffff);
  constexpr size_t n = 60000;
  std::vector<uint16_t> a = random_fp16(rng, n, 4.0);
  std::vector<uint16_t> b = random_fp16(rng, n, 4.0);
  for (size_t i = 0; i < n; i += 3) a[i] = static_cast<uint16_t>(code(rng));  // every code class
  for (size_t i = 0; i < n; i += 5) b[i] = static_cast<uint16_t>(code(rng));
  b[1] = a[1] ^ 0x8000;  // x + (-x) = +0
  const uint32_t pa = kBase, pb = kBase + 2 * n, po = kBase + 4 * n;
  Sram m(machine());
  put(m, pa, a);
  put(m, pb, b);
  run("add", {po, pa, pb}, {static_cast<int64_t>(n)}, m);
  const auto got = get16(m, po, n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i], r16(v16(a[i]) + v16(b[i]))) << i << ": " << a[i] << " + " << b[i];
  }
  EXPECT_EQ(got[1] & 0x7fff, 0) << "a + (-a)";
  // out == a (the residual `add x, x, attn`) and out == b.
  run("add", {pa, pa, pb}, {static_cast<int64_t>(n)}, m);
  EXPECT_EQ(get16(m, pa, n), got);
  put(m, pa, a);
  run("add", {pb, pa, pb}, {static_cast<int64_t>(n)}, m);
  EXPECT_EQ(get16(m, pb, n), got);
}

// --- cast -----------------------------------------------------------------------------------

TEST(Cast, EveryFp16CodeTo32AndBack) {
  Sram m(machine());
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  const uint32_t p16 = kBase, p32 = kBase + 0x20000, back = kBase + 0x60000;
  put(m, p16, all);
  run("cast", {p32, p16}, {65536, 16, 32}, m);
  run("cast", {back, p32}, {65536, 32, 16}, m);
  const auto wide = get32(m, p32, 65536);
  const auto narrow = get16(m, back, 65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<uint16_t>(i);
    const uint32_t bits = std::bit_cast<uint32_t>(wide[i]);
    if (arch::fp16_is_nan(h)) {
      ASSERT_TRUE(std::isnan(wide[i])) << i;
      ASSERT_EQ(bits >> 31, i >> 15u) << i;              // sign kept
      ASSERT_NE(bits & 0x00400000u, 0u) << i;            // quiet
      ASSERT_EQ((bits >> 13) & 0x1ff, i & 0x1ffu) << i;  // payload kept
      ASSERT_EQ(narrow[i], (h & 0x8000) | 0x7e00) << i;  // canonical, with its sign
    } else {
      ASSERT_EQ(bits, std::bit_cast<uint32_t>(static_cast<float>(v16(h)))) << i;  // exact
      ASSERT_EQ(narrow[i], h) << i;
    }
  }
}

TEST(Cast, RandomFloatsRoundToNearestEven) {
  std::mt19937 rng(12);
  std::uniform_int_distribution<uint32_t> bits;
  std::normal_distribution<double> normal(0, 100);
  constexpr size_t n = 50000;
  std::vector<float> in(n);
  for (size_t i = 0; i < n; ++i) {
    in[i] = i % 2 ? std::bit_cast<float>(bits(rng)) : static_cast<float>(normal(rng));
  }
  in[0] = 65519.996f;       // just below the overflow midpoint
  in[2] = 65520.0f;         // the midpoint: infinity
  in[4] = 0x1p-25f;         // ties to +0
  in[6] = 0x1.000002p-25f;  // just above: the smallest subnormal
  in[8] = 1.0f + 0x1p-11f;  // a tie: to even 1.0
  Sram m(machine());
  put(m, kBase, in);
  run("cast", {kBase + 4 * n, kBase}, {static_cast<int64_t>(n), 32, 16}, m);
  const auto got = get16(m, kBase + 4 * n, n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i], arch::reference::fp16_nearest_even(in[i])) << i << ": " << in[i];
  }
  EXPECT_EQ(got[2], 0x7c00);
  EXPECT_EQ(got[4], 0x0000);
  EXPECT_EQ(got[6], 0x0001);
  EXPECT_EQ(got[8], 0x3c00);
  // In place: out == in.
  run("cast", {kBase, kBase}, {static_cast<int64_t>(n), 32, 16}, m);
  EXPECT_EQ(get16(m, kBase, n), got);
}

TEST(Cast, SameWidthCopiesBitsAndWideningInPlaceWorks) {
  std::mt19937 rng(13);
  std::uniform_int_distribution<uint32_t> bits;
  constexpr size_t n = 1001;
  std::vector<uint32_t> words(n);
  for (auto& w : words) w = bits(rng);
  words[0] = 0x7f800001;  // a signalling NaN stays as it is
  Sram m(machine());
  put(m, kBase, words);
  run("cast", {kBase + 0x10000, kBase}, {static_cast<int64_t>(n), 32, 32}, m);
  EXPECT_EQ(kernels::read_array<uint32_t>(m, kBase + 0x10000, n, "test"), words);
  run("cast", {kBase + 0x20000, kBase}, {static_cast<int64_t>(n), 16, 16}, m);
  EXPECT_EQ(get16(m, kBase + 0x20000, n), get16(m, kBase, n));
  // 16 -> 32 with out == in: the output is twice as long and overwrites the input as it goes.
  const auto halves = get16(m, kBase, n);
  run("cast", {kBase, kBase}, {static_cast<int64_t>(n), 16, 32}, m);
  const auto wide = get32(m, kBase, n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(wide[i]), std::bit_cast<uint32_t>(arch::fp16_to_float(halves[i]))) << i;
  }
}

// --- check(), ranges, cycles ----------------------------------------------------------------

TEST(ElementwiseKernels, CheckAcceptsTheLoweringsShapes) {
  EXPECT_EQ(check("softmax", 2, {51, 729, 72}), "");
  EXPECT_EQ(check("layernorm", 2, {26, 1152}), "");
  EXPECT_EQ(check("layernorm", 4, {26, 1152}), "");
  EXPECT_EQ(check("gelu", 2, {26 * 4304}), "");
  EXPECT_EQ(check("add", 3, {26 * 1152}), "");
  EXPECT_EQ(check("cast", 2, {26 * 1152, 16, 32}), "");
  EXPECT_EQ(check("cast", 2, {1, 32, 32}), "");
}

TEST(ElementwiseKernels, CheckMessages) {
  EXPECT_EQ(check("softmax", 3, {1, 1, 1}), "kernel softmax takes 2 operand(s), got 3");
  EXPECT_EQ(check("softmax", 2, {1, 1}), "kernel softmax takes 3 scalar(s), got 2");
  EXPECT_EQ(check("softmax", 2, {0, 4, 64}), "softmax: scalars[0] rows = 0 (expected 1 to 638976)");
  EXPECT_EQ(check("softmax", 2, {4, -3, 64}), "softmax: scalars[1] columns = -3 (expected 1 to 638976)");
  EXPECT_EQ(check("softmax", 2, {4, 4, 0}), "softmax: scalars[2] head_dim = 0 (expected 1 to 638976)");
  EXPECT_EQ(check("softmax", 2, {400, 400, 64}),
            "softmax: in spans rows x columns x 4 = 640000 bytes, more than SRAM's 638976");
  EXPECT_EQ(check("layernorm", 3, {1, 1}), "kernel layernorm takes 2 or 4 operand(s), got 3");
  EXPECT_EQ(check("layernorm", 4, {1, 1, 1}), "kernel layernorm takes 2 scalar(s), got 3");
  EXPECT_EQ(check("layernorm", 2, {1, 0}), "layernorm: scalars[1] columns = 0 (expected 1 to 638976)");
  EXPECT_EQ(check("layernorm", 2, {600, 600}),
            "layernorm: in spans rows x columns x 2 = 720000 bytes, more than SRAM's 638976");
  EXPECT_EQ(check("gelu", 1, {4}), "kernel gelu takes 2 operand(s), got 1");
  EXPECT_EQ(check("gelu", 2, {0}), "gelu: scalars[0] count = 0 (expected 1 to 319488: 2 bytes each within SRAM)");
  EXPECT_EQ(check("add", 3, {319489}),
            "add: scalars[0] count = 319489 (expected 1 to 319488: 2 bytes each within SRAM)");
  EXPECT_EQ(check("add", 2, {4}), "kernel add takes 3 operand(s), got 2");
  EXPECT_EQ(check("cast", 2, {4, 8, 16}), "cast: scalars[1] in_bits = 8 (expected 16 or 32)");
  EXPECT_EQ(check("cast", 2, {4, 16, 64}), "cast: scalars[2] out_bits = 64 (expected 16 or 32)");
  EXPECT_EQ(check("cast", 2, {-1, 16, 32}), "cast: scalars[0] count = -1 (expected 1 to 319488)");
  EXPECT_EQ(check("cast", 2, {200000, 16, 32}),
            "cast: a 32-bit span of 200000 elements is 800000 bytes, more than SRAM's 638976");
  EXPECT_EQ(check("cast", 2, {200000, 16, 16}), "");
}

TEST(ElementwiseKernels, SpansOutsideSramThrowBeforeWriting) {
  struct Case {
    const char* name;
    std::vector<int64_t> scalars;
    size_t operands;
  };
  const uint32_t last = kEnd - 2;  // room for one FP16 value only
  for (const Case& c : {Case{"softmax", {1, 2, 4}, 2}, Case{"layernorm", {1, 2}, 2}, Case{"layernorm", {1, 2}, 4},
                        Case{"gelu", {2}, 2}, Case{"add", {2}, 3}, Case{"cast", {2, 16, 32}, 2},
                        Case{"cast", {2, 32, 16}, 2}, Case{"cast", {2, 16, 16}, 2}}) {
    // Each operand in turn: at the end of SRAM, then below it; the others valid.
    for (size_t bad = 0; bad < c.operands; ++bad) {
      for (const uint32_t where : {last, uint32_t{0x1000}}) {
        Sram m(machine());
        std::vector<uint32_t> operands;
        for (size_t i = 0; i < c.operands; ++i)
          operands.push_back(i == bad ? where : kBase + 0x100 * static_cast<uint32_t>(i + 1));
        EXPECT_THROW(run(c.name, operands, c.scalars, m), std::out_of_range) << c.name << " operand " << bad;
        if (bad != 0) {
          EXPECT_EQ(get16(m, operands[0], 2), std::vector<uint16_t>(2, 0)) << c.name << " wrote before throwing";
        }
      }
    }
  }
}

TEST(ElementwiseKernels, CycleModels) {
  // [S] IPU21-KERNELS.md 11.4.
  EXPECT_EQ(cycles("gelu", {1000}), 10u * 1000 + 11);
  EXPECT_EQ(cycles("add", {32}), 2u + 11);
  EXPECT_EQ(cycles("add", {33}), 3u + 11);
  EXPECT_EQ(cycles("cast", {100, 16, 32}), (200u + 400) / 8 + 11);
  EXPECT_EQ(cycles("cast", {3, 16, 16}), 2u + 11);  // ceil(12 / 8)
  // [decision] rows over 6 workers, 6 cycles per worker instruction.
  // softmax's schedule: per row three waves of 11 cycles and worker 0's instructions at 6
  // cycles each: 2 + 8 + 5 per f32v2 pair of its slice (2 x ceil(C / 12) values), 4 + 17 + 22
  // per row (docs/kernels-elementwise.md).
  for (const auto& [rows, columns] :
       std::vector<std::pair<int64_t, int64_t>>{{7, 197}, {6, 729}, {8, 729}, {1, 1}, {2, 13}}) {
    const uint64_t pairs = (static_cast<uint64_t>(columns) + 11) / 12;
    EXPECT_EQ(cycles("softmax", {rows, columns, 72}), static_cast<uint64_t>(rows) * (6 * (15 * pairs + 43) + 3 * 11))
        << rows << " x " << columns;
  }
  EXPECT_EQ(cycles("softmax", {8, 729, 72}), 46248u);  // SigLIP's rows on a tile: 61 pairs a worker
  // layernorm's schedule: per row three launches of 11 cycles and worker 0's instructions at
  // 6 cycles each: 5 + 9 + 9 per f16v4 quad of its slice (4 x ceil(H / 24) values), 5 + 24 + 39
  // per row (docs/kernels-elementwise.md).
  for (const auto& [rows, columns] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1152}, {5, 1152}, {13, 1152}, {1, 4}, {2, 25}, {3, 192}}) {
    const uint64_t quads = (static_cast<uint64_t>(columns) + 23) / 24;
    EXPECT_EQ(cycles("layernorm", {rows, columns}), static_cast<uint64_t>(rows) * (6 * (23 * quads + 68) + 3 * 11))
        << rows << " x " << columns;
  }
  EXPECT_EQ(cycles("layernorm", {1, 1152}), 7065u);  // SigLIP's rows: 48 quads a worker
}

}  // namespace
}  // namespace lockstep::model
