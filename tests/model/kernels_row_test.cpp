// The row kernels (softmax, layernorm) run on a tile's SRAM and compared bit for bit with the
// deliberately simple references of tests/model/elementwise_reference.hpp. Fixed seeds.
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

// --- softmax --------------------------------------------------------------------------------

TEST(Softmax, BitExactAgainstTheReferenceRowsSumToOneArgmaxKept) {
  std::mt19937 rng(21);
  struct Shape {
    size_t rows, columns;
    int64_t head_dim;
    double sigma;
  };
  for (const Shape& shape :
       {Shape{7, 197, 64, 8.0}, Shape{3, 729, 72, 30.0}, Shape{13, 5, 1, 2.0}, Shape{1, 1, 16, 1.0}}) {
    const size_t n = shape.rows * shape.columns;
    const auto scores = random_scores(rng, n, shape.sigma);
    Sram m(machine());
    const uint32_t in = kBase, out = kBase + static_cast<uint32_t>(4 * n);
    put(m, in, scores);
    const std::vector<int64_t> scalars{static_cast<int64_t>(shape.rows), static_cast<int64_t>(shape.columns),
                                       shape.head_dim};
    run("softmax", {out, in}, scalars, m);
    const auto got = get16(m, out, n);
    ASSERT_EQ(got, reference_softmax(scores, shape.rows, shape.columns, shape.head_dim)) << shape.columns;
    for (size_t r = 0; r < shape.rows; ++r) {
      double sum = 0;
      size_t argmax = 0;
      for (size_t c = 0; c < shape.columns; ++c) {
        sum += v16(got[r * shape.columns + c]);
        if (scores[r * shape.columns + c] > scores[r * shape.columns + argmax]) argmax = c;
      }
      EXPECT_NEAR(sum, 1.0, 4e-3) << "row " << r;
      const uint16_t top = got[r * shape.columns + argmax];
      for (size_t c = 0; c < shape.columns; ++c) ASSERT_LE(v16(got[r * shape.columns + c]), v16(top));
    }
    // In place: out == in (FP16 output over the FP32 input).
    run("softmax", {in, in}, scalars, m);
    EXPECT_EQ(get16(m, in, n), got);
  }
}

TEST(Softmax, ManyRowsCoverSubnormalZeroAndNormalProbabilities) {
  // Rows of every length 1..200 with spreads from flat to peaked: the outputs must include
  // zeros, FP16 subnormals and normals, and z values that are FP16 subnormals (scores within
  // 2^-14 / s of the row maximum).
  std::mt19937 rng(22);
  std::uniform_real_distribution<double> spread(0.1, 60.0);
  std::vector<float> scores;
  std::vector<uint16_t> want;
  Sram m(machine());
  size_t zeros = 0, subnormals = 0, normals = 0;
  for (size_t columns = 1; columns <= 200; ++columns) {
    auto row = random_scores(rng, columns, spread(rng));
    if (columns % 3 == 0) row[columns / 2] = row[0] + 1e-5f;  // z subnormal for one of them
    const int64_t head_dim = static_cast<int64_t>(1 + columns % 97);
    put(m, kBase, row);
    run("softmax", {kBase + 0x1000, kBase}, {1, static_cast<int64_t>(columns), head_dim}, m);
    const auto got = get16(m, kBase + 0x1000, columns);
    ASSERT_EQ(got, reference_softmax(row, 1, columns, head_dim)) << columns;
    for (const uint16_t p : got) {
      if (p == 0)
        ++zeros;
      else if (p < 0x0400)
        ++subnormals;
      else
        ++normals;
    }
  }
  EXPECT_GT(zeros, 100u);
  EXPECT_GT(subnormals, 100u);
  EXPECT_GT(normals, 1000u);
}

// The row sum l follows the work split (six worker slices, even and odd lanes): a row whose
// column-order sum would round to other probabilities shows the kernel takes the split's.
TEST(Softmax, TheRowSumFollowsTheWorkersSlicesAndLanes) {
  const auto column_order = [](const std::vector<float>& row, int64_t head_dim) {
    const auto s = static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
    float mx = -65504.0f;
    for (const float v : row) mx = v > mx ? v : mx;
    const float sm = mx * s;
    std::vector<double> e;
    float l = 0.0f;
    for (const float v : row) {
      const float scaled = v * s;
      const float z = scaled - sm;
      e.push_back(v16(r16(std::exp(v16(r16(z))))));
      l += static_cast<float>(e.back());
    }
    std::vector<uint16_t> out;
    for (const double x : e) out.push_back(r16(x / static_cast<double>(l)));
    return out;
  };
  std::mt19937 rng(23);
  constexpr size_t columns = 729;
  std::vector<float> row;
  for (int attempt = 0;
       attempt < 500 && (row.empty() || column_order(row, 72) == reference_softmax(row, 1, columns, 72)); ++attempt) {
    row = random_scores(rng, columns, 20.0);
  }
  ASSERT_NE(column_order(row, 72), reference_softmax(row, 1, columns, 72)) << "no row found whose outputs differ";
  Sram m(machine());
  put(m, kBase, row);
  run("softmax", {kBase + 0x1000, kBase}, {1, static_cast<int64_t>(columns), 72}, m);
  EXPECT_EQ(get16(m, kBase + 0x1000, columns), reference_softmax(row, 1, columns, 72));
}

TEST(Softmax, NanOrInfiniteScoresGiveNanRows) {
  // By the definition: a NaN score makes its z, e and so l NaN; +inf makes mx and sm +inf, so
  // its own z is inf - inf = NaN. Every probability of such a row is the positive 0x7e00;
  // other rows are unaffected.
  Sram m(machine());
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> scores{1.0f, nan, 2.0f, 3.0f, inf, 1.0f, 0.5f, 0.25f, -nan, 7.0f, 7.0f, 7.0f};
  put(m, kBase, scores);
  run("softmax", {kBase + 64, kBase}, {4, 3, 16}, m);
  const auto got = get16(m, kBase + 64, 12);
  EXPECT_EQ(got, reference_softmax(scores, 4, 3, 16));
  EXPECT_EQ(got, (std::vector<uint16_t>{0x7e00, 0x7e00, 0x7e00, 0x7e00, 0x7e00, 0x7e00, 0x7e00, 0x7e00, 0x7e00, 0x3555,
                                        0x3555, 0x3555}));
  put(m, kBase, std::vector<float>{0.0f, -0.0f, 1e-30f});
  run("softmax", {kBase + 64, kBase}, {1, 3, 1}, m);
  EXPECT_EQ(get16(m, kBase + 64, 3), (std::vector<uint16_t>{0x3555, 0x3555, 0x3555}));  // fl16(1/3)
}

TEST(Softmax, TheQuotientIsRoundedOnceFromDouble) {
  // Found by search: with s = 1 these scores give l and e_0 = 1 whose quotient rounds to 0x33e9
  // from double (the exact quotient) but to 0x33ea through a float quotient (double rounding).
  Sram m(machine());
  const std::vector<float> scores{0.0f, -0x1.75cp-2f, -0x1.224p-2f, -0x1.f3p-2f, -0x1.25p-6f};
  put(m, kBase, scores);
  run("softmax", {kBase + 64, kBase}, {1, 5, 1}, m);
  const auto got = get16(m, kBase + 64, 5);
  EXPECT_EQ(got, reference_softmax(scores, 1, 5, 1));
  EXPECT_EQ(got[0], 0x33e9);
}

TEST(Softmax, UniformRowsAndTheFloorAtMinus65504) {
  Sram m(machine());
  // Four equal scores: exactly 1/4 each. A row entirely below -65504 has every exponential 0,
  // so 0/0: the positive NaN (the hardware's merge would divide by l = 0 too).
  put(m, kBase, std::vector<float>{3.5f, 3.5f, 3.5f, 3.5f, -1e6f, -2e6f, -1e6f, -7e5f});
  run("softmax", {kBase + 64, kBase}, {2, 4, 64}, m);
  EXPECT_EQ(get16(m, kBase + 64, 8),
            (std::vector<uint16_t>{0x3400, 0x3400, 0x3400, 0x3400, 0x7e00, 0x7e00, 0x7e00, 0x7e00}));
  // -inf scores (masked keys) give probability 0 next to finite ones.
  const float inf = std::numeric_limits<float>::infinity();
  put(m, kBase, std::vector<float>{-inf, 1.0f, -inf, 1.0f});
  run("softmax", {kBase + 64, kBase}, {1, 4, 4}, m);
  EXPECT_EQ(get16(m, kBase + 64, 4), (std::vector<uint16_t>{0x0000, 0x3800, 0x0000, 0x3800}));
}

// --- layernorm ------------------------------------------------------------------------------

TEST(Layernorm, BitExactMeanZeroVarianceOneAndAliasing) {
  std::mt19937 rng(31);
  for (const auto& [rows, columns] : std::vector<std::pair<size_t, size_t>>{{5, 1152}, {9, 37}, {2, 1}}) {
    const size_t n = rows * columns;
    const auto x = random_fp16(rng, n, 3.0, 5.0);
    Sram m(machine());
    const uint32_t in = kBase, out = kBase + static_cast<uint32_t>(2 * n);
    put(m, in, x);
    const std::vector<int64_t> scalars{static_cast<int64_t>(rows), static_cast<int64_t>(columns)};
    run("layernorm", {out, in}, scalars, m);
    const auto got = get16(m, out, n);
    ASSERT_EQ(got, reference_layernorm(x, rows, columns)) << columns;
    if (columns > 30) {
      for (size_t r = 0; r < rows; ++r) {
        double mean = 0, sq = 0;
        for (size_t c = 0; c < columns; ++c) mean += v16(got[r * columns + c]);
        mean /= static_cast<double>(columns);
        for (size_t c = 0; c < columns; ++c) sq += std::pow(v16(got[r * columns + c]) - mean, 2);
        EXPECT_NEAR(mean, 0.0, 5e-3) << "row " << r;
        EXPECT_NEAR(sq / static_cast<double>(columns), 1.0, 5e-3) << "row " << r;
      }
    }
    run("layernorm", {in, in}, scalars, m);
    EXPECT_EQ(get16(m, in, n), got);
  }
}

TEST(Layernorm, AffineBitExactAndAliasing) {
  std::mt19937 rng(32);
  constexpr size_t rows = 4, columns = 300, n = rows * columns;
  const auto x = random_fp16(rng, n, 2.0, -1.0);
  const auto gamma = random_fp16(rng, columns, 0.5, 1.0);
  const auto beta = random_fp16(rng, columns, 0.2);
  Sram m(machine());
  const uint32_t in = kBase, out = kBase + 0x1000, g = kBase + 0x2000, b = kBase + 0x3000;
  put(m, in, x);
  put(m, g, gamma);
  put(m, b, beta);
  run("layernorm", {out, in, g, b}, {rows, columns}, m);
  const auto got = get16(m, out, n);
  EXPECT_EQ(got, reference_layernorm(x, rows, columns, gamma, beta));
  EXPECT_NE(got, reference_layernorm(x, rows, columns));
  run("layernorm", {in, in, g, b}, {rows, columns}, m);
  EXPECT_EQ(get16(m, in, n), got);
}

TEST(Layernorm, EpsilonIsAddedInDouble) {
  // Found by search: for this row rstd = fl32(1 / sqrt(var + 1e-6)) in double differs from
  // the same with var + 1e-6f added in float, and the difference reaches the FP16 outputs.
  const std::vector<uint16_t> x{0xc57d, 0x3df5, 0x3308, 0xb76c};
  Sram m(machine());
  put(m, kBase, x);
  run("layernorm", {kBase + 64, kBase}, {1, 4}, m);
  EXPECT_EQ(get16(m, kBase + 64, 4), reference_layernorm(x, 1, 4));
}

// The statistics follow the work split: six worker slices, even and odd lanes. A row whose
// plain column-order sums round differently shows the kernel takes the split's.
TEST(Layernorm, StatisticsFollowTheWorkersSlicesAndLanes) {
  // The same formulas with both sums in plain column order.
  const auto column_order = [](const std::vector<uint16_t>& x) {
    const auto n = static_cast<float>(x.size());
    float sum = 0.0f, sum_sq = 0.0f;
    for (const uint16_t v : x) sum += static_cast<float>(v16(v));
    const float mean = sum / n;
    for (const uint16_t v : x) {
      const float d = static_cast<float>(v16(v)) - mean;
      const float square = d * d;
      sum_sq += square;
    }
    const auto rstd = static_cast<float>(1.0 / std::sqrt(static_cast<double>(sum_sq / n) + 1e-6));
    std::vector<uint16_t> out;
    for (const uint16_t v : x) out.push_back(r16((static_cast<float>(v16(v)) - mean) * rstd));
    return out;
  };
  std::mt19937 rng(33);
  constexpr size_t columns = 96;  // slices of 16 values
  std::vector<uint16_t> x;
  for (int attempt = 0; attempt < 2000 && (x.empty() || column_order(x) == reference_layernorm(x, 1, columns));
       ++attempt) {
    x = random_fp16(rng, columns, 3000.0, 20000.0);
  }
  ASSERT_NE(column_order(x), reference_layernorm(x, 1, columns)) << "no row found whose outputs differ";
  Sram m(machine());
  put(m, kBase, x);
  run("layernorm", {kBase + 0x1000, kBase}, {1, columns}, m);
  EXPECT_EQ(get16(m, kBase + 0x1000, columns), reference_layernorm(x, 1, columns));
}

TEST(Layernorm, ConstantRowGivesZeros) {
  Sram m(machine());
  put(m, kBase, std::vector<uint16_t>(64, 0x4500));  // 5.0
  run("layernorm", {kBase + 256, kBase}, {2, 32}, m);
  EXPECT_EQ(get16(m, kBase + 256, 64), std::vector<uint16_t>(64, 0x0000));
}

}  // namespace
}  // namespace lockstep::model
