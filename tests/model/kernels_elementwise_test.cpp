// The element-wise and row kernels (softmax, layernorm, gelu, add, cast) run on a tile's SRAM
// and compared bit for bit with deliberately simple references written here from the
// definitions in docs/kernels-elementwise.md: scalar loops, values from the FP16 fields and
// rounding by the sorted-table search of tests/numerics/numerics_reference.hpp (independent of
// arch/'s bit manipulation). Fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "numerics/fp16.hpp"
#include "arch/machine.hpp"
#include "numerics/numerics_reference.hpp"
#include "model/kernel_registry.hpp"
#include "model/kernels/tensor_io.hpp"
#include "model/sram.hpp"

namespace lockstep::model {
namespace {

const arch::MachineDescription& machine() {
  static const auto m = arch::load_machine("ipu21-c600");
  return m;
}

constexpr uint32_t kBase = 0x4c000;  // first SRAM byte of ipu21-c600
constexpr uint32_t kEnd = 0xe8000;   // one past the last

// --- the references -------------------------------------------------------------------------

double v16(uint16_t h) { return arch::reference::fp16_value(h); }

// fl16 by table search; any NaN -> the positive 0x7e00 (the kernels' arithmetic NaN).
uint16_t r16(double x) {
  return std::isnan(x) ? uint16_t{0x7e00} : arch::reference::fp16_nearest_even(x);
}

uint16_t reference_gelu(uint16_t h) {
  const double x = v16(h);
  uint16_t t = r16(x * x);              // 1  (every product and sum below is exact in double)
  t = r16(v16(t) * x);                  // 2
  t = r16(0.044708251953125 * v16(t));  // 3  beta = 0x29b9
  t = r16(x + v16(t));                  // 4
  t = r16(0.7978515625 * v16(t));       // 5  alpha = 0x3a62
  t = r16(std::tanh(v16(t)));           // 6
  t = r16(1.0 + v16(t));                // 7
  t = r16(0.5 * v16(t));                // 8
  return r16(x * v16(t));               // 9
}

// A sum as the row kernels' work split makes it (docs/kernels-elementwise.md): six slices of
// `slice` values, each summed as an even and an odd lane, the slices' sums added in order.
float split_sum(const std::vector<float>& v, size_t slice) {
  float total = 0.0f;
  for (size_t worker = 0; worker < 6; ++worker) {
    float even = 0.0f, odd = 0.0f;
    for (size_t c = worker * slice; c < std::min(v.size(), (worker + 1) * slice); ++c) {
      if (c % 2 == 0) {
        even += v[c];
      } else {
        odd += v[c];
      }
    }
    if (worker * slice < v.size()) total += even + odd;
  }
  return total;
}
float layernorm_sum(const std::vector<float>& v) { return split_sum(v, 4 * ((v.size() + 23) / 24)); }
float softmax_sum(const std::vector<float>& v) { return split_sum(v, 2 * ((v.size() + 11) / 12)); }

std::vector<uint16_t> reference_softmax(const std::vector<float>& scores, size_t rows,
                                        size_t columns, int64_t head_dim) {
  const auto s = static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  std::vector<uint16_t> out;
  for (size_t r = 0; r < rows; ++r) {
    float mx = -65504.0f;
    for (size_t c = 0; c < columns; ++c) {
      if (scores[r * columns + c] > mx) mx = scores[r * columns + c];
    }
    const float sm = mx * s;
    std::vector<uint16_t> e;
    std::vector<float> values;
    for (size_t c = 0; c < columns; ++c) {
      const float scaled = scores[r * columns + c] * s;
      const float z = scaled - sm;
      e.push_back(r16(std::exp(v16(r16(z)))));
      values.push_back(static_cast<float>(v16(e.back())));
    }
    const float l = softmax_sum(values);
    for (size_t c = 0; c < columns; ++c) out.push_back(r16(v16(e[c]) / static_cast<double>(l)));
  }
  return out;
}

std::vector<uint16_t> reference_layernorm(const std::vector<uint16_t>& x, size_t rows,
                                          size_t columns, const std::vector<uint16_t>& gamma = {},
                                          const std::vector<uint16_t>& beta = {}) {
  std::vector<uint16_t> out;
  for (size_t r = 0; r < rows; ++r) {
    std::vector<float> values, squares;
    for (size_t c = 0; c < columns; ++c) values.push_back(static_cast<float>(v16(x[r * columns + c])));
    const float mean = layernorm_sum(values) / static_cast<float>(columns);
    for (const float value : values) {
      const float d = value - mean;
      squares.push_back(d * d);
    }
    const float var = layernorm_sum(squares) / static_cast<float>(columns);
    const auto rstd = static_cast<float>(1.0 / std::sqrt(static_cast<double>(var) + 1e-6));
    for (size_t c = 0; c < columns; ++c) {
      const float d = values[c] - mean;
      float y = d * rstd;
      if (!gamma.empty()) {
        const float scaled = y * static_cast<float>(v16(gamma[c]));
        y = scaled + static_cast<float>(v16(beta[c]));
      }
      out.push_back(r16(y));
    }
  }
  return out;
}

// --- running kernels ------------------------------------------------------------------------

const KernelDefinition& kernel(const std::string& name) {
  const KernelDefinition* k = find_kernel(name);
  if (k == nullptr) throw std::runtime_error("kernel " + name + " not registered");
  return *k;
}

void run(const std::string& name, const std::vector<uint32_t>& operands,
         const std::vector<int64_t>& scalars, Sram& memory) {
  kernel(name).execute(operands, scalars, memory);
}

std::string check(const std::string& name, size_t operands, const std::vector<int64_t>& scalars) {
  arch::KernelStep step;
  step.name = name;
  for (size_t i = 0; i < operands; ++i) step.operands.push_back({kBase, false});
  step.scalars = scalars;
  return kernel(name).check(step);
}

uint64_t cycles(const std::string& name, const std::vector<int64_t>& scalars) {
  return kernel(name).cycles(scalars, machine());
}

template <typename T>
void put(Sram& m, uint32_t address, const std::vector<T>& v) {
  kernels::write_array(m, address, v, "test");
}
std::vector<uint16_t> get16(const Sram& m, uint32_t address, size_t n) {
  return kernels::read_fp16(m, address, n, "test");
}
std::vector<float> get32(const Sram& m, uint32_t address, size_t n) {
  return kernels::read_fp32(m, address, n, "test");
}

std::vector<uint16_t> random_fp16(std::mt19937& rng, size_t n, double sigma, double mean = 0) {
  std::normal_distribution<double> normal(mean, sigma);
  std::vector<uint16_t> v(n);
  for (auto& h : v) h = arch::fp16_from_double(normal(rng));
  return v;
}

std::vector<float> random_scores(std::mt19937& rng, size_t n, double sigma) {
  // Scores as the QK GEMM leaves them: FP32 sums of FP16 products, here FP16-valued plus noise.
  std::normal_distribution<double> normal(0, sigma);
  std::vector<float> v(n);
  for (auto& f : v) f = static_cast<float>(normal(rng));
  return v;
}

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
  for (const auto f :
       {+[](double x) { return std::exp(x); }, +[](double x) { return std::tanh(x); }}) {
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
  const std::vector<uint16_t> in{0x0000, 0x8000, 0x3c00, 0xbc00, 0x4400,
                                 0xc880, 0x7c00, 0xfc00, 0x7e00};
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
    ASSERT_EQ(std::bit_cast<uint32_t>(wide[i]),
              std::bit_cast<uint32_t>(arch::fp16_to_float(halves[i])))
        << i;
  }
}

// --- softmax --------------------------------------------------------------------------------

TEST(Softmax, BitExactAgainstTheReferenceRowsSumToOneArgmaxKept) {
  std::mt19937 rng(21);
  struct Shape {
    size_t rows, columns;
    int64_t head_dim;
    double sigma;
  };
  for (const Shape& shape : {Shape{7, 197, 64, 8.0}, Shape{3, 729, 72, 30.0}, Shape{13, 5, 1, 2.0},
                             Shape{1, 1, 16, 1.0}}) {
    const size_t n = shape.rows * shape.columns;
    const auto scores = random_scores(rng, n, shape.sigma);
    Sram m(machine());
    const uint32_t in = kBase, out = kBase + static_cast<uint32_t>(4 * n);
    put(m, in, scores);
    const std::vector<int64_t> scalars{static_cast<int64_t>(shape.rows),
                                       static_cast<int64_t>(shape.columns), shape.head_dim};
    run("softmax", {out, in}, scalars, m);
    const auto got = get16(m, out, n);
    ASSERT_EQ(got, reference_softmax(scores, shape.rows, shape.columns, shape.head_dim))
        << shape.columns;
    for (size_t r = 0; r < shape.rows; ++r) {
      double sum = 0;
      size_t argmax = 0;
      for (size_t c = 0; c < shape.columns; ++c) {
        sum += v16(got[r * shape.columns + c]);
        if (scores[r * shape.columns + c] > scores[r * shape.columns + argmax]) argmax = c;
      }
      EXPECT_NEAR(sum, 1.0, 4e-3) << "row " << r;
      const uint16_t top = got[r * shape.columns + argmax];
      for (size_t c = 0; c < shape.columns; ++c)
        ASSERT_LE(v16(got[r * shape.columns + c]), v16(top));
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
  for (int attempt = 0; attempt < 500 && (row.empty() || column_order(row, 72) == reference_softmax(row, 1, columns, 72));
       ++attempt) {
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
  const std::vector<float> scores{1.0f, nan,   2.0f, 3.0f, inf,  1.0f,
                                  0.5f, 0.25f, -nan, 7.0f, 7.0f, 7.0f};
  put(m, kBase, scores);
  run("softmax", {kBase + 64, kBase}, {4, 3, 16}, m);
  const auto got = get16(m, kBase + 64, 12);
  EXPECT_EQ(got, reference_softmax(scores, 4, 3, 16));
  EXPECT_EQ(got, (std::vector<uint16_t>{0x7e00, 0x7e00, 0x7e00, 0x7e00, 0x7e00, 0x7e00, 0x7e00,
                                        0x7e00, 0x7e00, 0x3555, 0x3555, 0x3555}));
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
  EXPECT_EQ(get16(m, kBase + 64, 8), (std::vector<uint16_t>{0x3400, 0x3400, 0x3400, 0x3400, 0x7e00,
                                                            0x7e00, 0x7e00, 0x7e00}));
  // -inf scores (masked keys) give probability 0 next to finite ones.
  const float inf = std::numeric_limits<float>::infinity();
  put(m, kBase, std::vector<float>{-inf, 1.0f, -inf, 1.0f});
  run("softmax", {kBase + 64, kBase}, {1, 4, 4}, m);
  EXPECT_EQ(get16(m, kBase + 64, 4), (std::vector<uint16_t>{0x0000, 0x3800, 0x0000, 0x3800}));
}

// --- layernorm ------------------------------------------------------------------------------

TEST(Layernorm, BitExactMeanZeroVarianceOneAndAliasing) {
  std::mt19937 rng(31);
  for (const auto& [rows, columns] :
       std::vector<std::pair<size_t, size_t>>{{5, 1152}, {9, 37}, {2, 1}}) {
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
  for (int attempt = 0; attempt < 2000 && (x.empty() || column_order(x) == reference_layernorm(x, 1, columns)); ++attempt) {
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
  EXPECT_EQ(check("softmax", 2, {4, -3, 64}),
            "softmax: scalars[1] columns = -3 (expected 1 to 638976)");
  EXPECT_EQ(check("softmax", 2, {4, 4, 0}),
            "softmax: scalars[2] head_dim = 0 (expected 1 to 638976)");
  EXPECT_EQ(check("softmax", 2, {400, 400, 64}),
            "softmax: in spans rows x columns x 4 = 640000 bytes, more than SRAM's 638976");
  EXPECT_EQ(check("layernorm", 3, {1, 1}), "kernel layernorm takes 2 or 4 operand(s), got 3");
  EXPECT_EQ(check("layernorm", 4, {1, 1, 1}), "kernel layernorm takes 2 scalar(s), got 3");
  EXPECT_EQ(check("layernorm", 2, {1, 0}),
            "layernorm: scalars[1] columns = 0 (expected 1 to 638976)");
  EXPECT_EQ(check("layernorm", 2, {600, 600}),
            "layernorm: in spans rows x columns x 2 = 720000 bytes, more than SRAM's 638976");
  EXPECT_EQ(check("gelu", 1, {4}), "kernel gelu takes 2 operand(s), got 1");
  EXPECT_EQ(check("gelu", 2, {0}),
            "gelu: scalars[0] count = 0 (expected 1 to 319488: 2 bytes each within SRAM)");
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
  for (const Case& c :
       {Case{"softmax", {1, 2, 4}, 2}, Case{"layernorm", {1, 2}, 2}, Case{"layernorm", {1, 2}, 4},
        Case{"gelu", {2}, 2}, Case{"add", {2}, 3}, Case{"cast", {2, 16, 32}, 2},
        Case{"cast", {2, 32, 16}, 2}, Case{"cast", {2, 16, 16}, 2}}) {
    // Each operand in turn: at the end of SRAM, then below it; the others valid.
    for (size_t bad = 0; bad < c.operands; ++bad) {
      for (const uint32_t where : {last, uint32_t{0x1000}}) {
        Sram m(machine());
        std::vector<uint32_t> operands;
        for (size_t i = 0; i < c.operands; ++i)
          operands.push_back(i == bad ? where : kBase + 0x100 * static_cast<uint32_t>(i + 1));
        EXPECT_THROW(run(c.name, operands, c.scalars, m), std::out_of_range)
            << c.name << " operand " << bad;
        if (bad != 0) {
          EXPECT_EQ(get16(m, operands[0], 2), std::vector<uint16_t>(2, 0))
              << c.name << " wrote before throwing";
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
  for (const auto& [rows, columns] : std::vector<std::pair<int64_t, int64_t>>{{7, 197}, {6, 729}, {8, 729}, {1, 1}, {2, 13}}) {
    const uint64_t pairs = (static_cast<uint64_t>(columns) + 11) / 12;
    EXPECT_EQ(cycles("softmax", {rows, columns, 72}), static_cast<uint64_t>(rows) * (6 * (15 * pairs + 43) + 3 * 11))
        << rows << " x " << columns;
  }
  EXPECT_EQ(cycles("softmax", {8, 729, 72}), 46248u);  // SigLIP's rows on a tile: 61 pairs a worker
  // layernorm's schedule: per row three launches of 11 cycles and worker 0's instructions at
  // 6 cycles each: 5 + 9 + 9 per f16v4 quad of its slice (4 x ceil(H / 24) values), 5 + 24 + 39
  // per row (docs/kernels-elementwise.md).
  for (const auto& [rows, columns] : std::vector<std::pair<int64_t, int64_t>>{{1, 1152}, {5, 1152}, {13, 1152}, {1, 4}, {2, 25}, {3, 192}}) {
    const uint64_t quads = (static_cast<uint64_t>(columns) + 23) / 24;
    EXPECT_EQ(cycles("layernorm", {rows, columns}), static_cast<uint64_t>(rows) * (6 * (23 * quads + 68) + 3 * 11))
        << rows << " x " << columns;
  }
  EXPECT_EQ(cycles("layernorm", {1, 1152}), 7065u);  // SigLIP's rows: 48 quads a worker
}

}  // namespace
}  // namespace lockstep::model
