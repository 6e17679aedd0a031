// The IPU21 stack's element-wise kernels by symbol (model/kernels/stack_elementwise.cpp):
// reduce_sum_f16, gelu_tanh_approx_f16, add_f16/_f32 and the casts, run on a tile's SRAM and
// compared bit for bit with plain references written here from IPU21-KERNELS.md 7, 8 and
// 14.6 and docs/numerics.md: scalar loops, FP16 and F143 values from their fields, and
// rounding by the sorted-table search of tests/numerics/numerics_reference.hpp (independent
// of arch/'s bit manipulation). Also the planner's cycle formulas, the symbols' scalar checks
// and the SRAM bounds. Fixed seeds.
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

#include "arch/kernel_signatures.hpp"
#include "arch/machine.hpp"
#include "model/kernel_registry.hpp"
#include "model/kernels/tensor_io.hpp"
#include "model/sram.hpp"
#include "numerics/fp16.hpp"
#include "numerics/numerics_reference.hpp"
#include "tests/model/kernel_harness.hpp"

namespace lockstep::model {
namespace {

namespace ref = arch::reference;

using kernel_harness::cycles;
using kernel_harness::kBase;
using kernel_harness::kEnd;
using kernel_harness::kernel;
using kernel_harness::machine;
using kernel_harness::run;

constexpr const char* kReduce = "ipu_stack_reduce_sum_f16";
constexpr const char* kGelu = "ipu_stack_gelu_tanh_approx_f16";
constexpr const char* kAdd16 = "ipu_stack_add_f16";
constexpr const char* kAdd32 = "ipu_stack_add_f32";

// --- the references ---------------------------------------------------------------------------

double v16(uint16_t h) { return ref::fp16_value(h); }

// fl16 by table search; any NaN -> the positive 0x7e00 (FP16 arithmetic's NaN).
uint16_t fl16(double x) { return std::isnan(x) ? uint16_t{0x7e00} : ref::fp16_nearest_even(x); }

uint16_t add16(uint16_t a, uint16_t b) { return fl16(v16(a) + v16(b)); }  // the double sum is exact

// fl32(a + b) through the double sum (double rounding is innocuous for a sum: 53 >= 2 x 24 + 2),
// overflow spelled out; a NaN result is the positive quiet 0x7fc00000.
uint32_t add32(uint32_t a, uint32_t b) {
  const double sum = double{std::bit_cast<float>(a)} + double{std::bit_cast<float>(b)};
  if (std::isnan(sum)) return 0x7fc00000u;
  if (std::fabs(sum) >= 0x1.ffffffp127) return (std::signbit(sum) ? 0x80000000u : 0u) | 0x7f800000u;
  return std::bit_cast<uint32_t>(static_cast<float>(sum));
}

// Section 8's nine steps, each in double (exact) and rounded to FP16.
uint16_t gelu16(uint16_t h) {
  const double x = v16(h);
  uint16_t t = fl16(x * x);              // 1
  t = fl16(v16(t) * x);                  // 2
  t = fl16(0.044708251953125 * v16(t));  // 3 beta = 0x29b9
  t = fl16(x + v16(t));                  // 4
  t = fl16(0.7978515625 * v16(t));       // 5 alpha = 0x3a62
  t = fl16(std::tanh(v16(t)));           // 6 tanh in double, rounded once
  t = fl16(1.0 + v16(t));                // 7
  t = fl16(0.5 * v16(t));                // 8
  return fl16(x * v16(t));               // 9
}

// Section 7: acc = first; acc = fl16(acc + remote_p) for p in order.
std::vector<uint16_t> reduce16(std::vector<uint16_t> acc, const std::vector<uint16_t>& remote, size_t count) {
  const size_t n = acc.size();
  for (size_t i = 0; i < n; ++i) {
    for (size_t p = 0; p < count; ++p) acc[i] = add16(acc[i], remote[p * n + i]);
  }
  return acc;
}

// FP16 -> FP32 bits: exact; a NaN keeps its sign and payload and is made quiet.
uint32_t widen16(uint16_t h) {
  if ((h & 0x7fff) > 0x7c00) return (uint32_t{h & 0x8000u} << 16) | 0x7fc00000u | (uint32_t{h & 0x3ffu} << 13);
  return std::bit_cast<uint32_t>(static_cast<float>(v16(h)));
}

// F143 at scale 0 -> FP32 bits; 0x80 -> 0x7fc00000.
uint32_t f8_to_f32(uint8_t c) {
  return c == 0x80 ? 0x7fc00000u : std::bit_cast<uint32_t>(static_cast<float>(ref::f143_value(c, 0)));
}

// --- running kernels --------------------------------------------------------------------------

template <typename T>
void put(Sram& m, uint32_t address, const std::vector<T>& v) {
  kernels::write_array(m, address, v, "test");
}
template <typename T>
std::vector<T> get(const Sram& m, uint32_t address, size_t n) {
  return kernels::read_array<T>(m, address, n, "test");
}

// Normal values at several magnitudes, with every 4th element any code at all (NaN, inf,
// subnormals) and every 7th near the top of the range (overflowing sums).
std::vector<uint16_t> random_fp16(std::mt19937& rng, size_t n) {
  std::normal_distribution<double> normal(0, 3);
  std::uniform_int_distribution<uint32_t> code(0, 0xffff);
  std::uniform_int_distribution<int> magnitude(-20, 15);
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = arch::fp16_from_double(std::ldexp(normal(rng), magnitude(rng)));
    if (i % 4 == 3) v[i] = static_cast<uint16_t>(code(rng));
    if (i % 7 == 5) v[i] = static_cast<uint16_t>(0x7800 | (code(rng) & 0x83ff));
  }
  return v;
}

// Floats: normal values, any bit pattern every 3rd, and the edge cases first.
std::vector<uint32_t> random_fp32(std::mt19937& rng, size_t n) {
  std::vector<uint32_t> v = {0x00000000,
                             0x80000000,
                             0x7f800000,
                             0xff800000,
                             0x7fc00000,
                             0xffc00001,
                             0x7f800001,
                             0x7f7fffff,
                             0xff7fffff,
                             0x00000001,
                             0x807fffff,
                             std::bit_cast<uint32_t>(65504.0f),
                             std::bit_cast<uint32_t>(65520.0f),
                             std::bit_cast<uint32_t>(65519.998f),
                             std::bit_cast<uint32_t>(1.0f + 0x1p-11f),
                             std::bit_cast<uint32_t>(240.0f),
                             std::bit_cast<uint32_t>(248.0f),
                             std::bit_cast<uint32_t>(-247.99f),
                             std::bit_cast<uint32_t>(0x1p-11f),
                             std::bit_cast<uint32_t>(-0x1p-11f),
                             std::bit_cast<uint32_t>(0x1p-25f)};
  std::normal_distribution<double> normal(0, 1);
  std::uniform_int_distribution<uint32_t> bits(0, 0xffffffffu);
  std::uniform_int_distribution<int> exponent(-30, 20);
  while (v.size() < n) {
    const auto x = static_cast<float>(std::ldexp(normal(rng), exponent(rng)));
    v.push_back(v.size() % 3 == 0 ? bits(rng) : std::bit_cast<uint32_t>(x));
  }
  v.resize(n);
  return v;
}

std::vector<uint16_t> every_fp16() {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  return all;
}

// --- registration -----------------------------------------------------------------------------

TEST(StackElementwiseRegistry, EverySymbolIsFoundAndChecksItsOperandAndScalarCounts) {
  struct Case {
    const char* symbol;
    size_t operands, scalars;
  };
  for (const Case& c :
       {Case{kReduce, 3, 2}, Case{kGelu, 2, 1}, Case{kAdd16, 3, 3}, Case{kAdd32, 3, 3},
        Case{"ipu_stack_cast_f16_f32", 2, 1}, Case{"ipu_stack_cast_f32_f16", 2, 1}, Case{"ipu_stack_cast_f8_f16", 2, 1},
        Case{"ipu_stack_cast_f8_f32", 2, 1}, Case{"ipu_stack_cast_f16_f8", 2, 1}, Case{"ipu_stack_cast_f32_f8", 2, 1},
        Case{"ipu_stack_cast_identity", 2, 1}}) {
    SCOPED_TRACE(c.symbol);
    const KernelDefinition& k = kernel(c.symbol);
    EXPECT_EQ(k.name, c.symbol);
    arch::KernelStep step;
    step.name = c.symbol;
    step.operands.assign(c.operands, arch::Operand{kBase, false});
    step.scalars.assign(c.scalars, 8);
    EXPECT_EQ(k.check(step), "");
    step.scalars.push_back(0);
    EXPECT_NE(k.check(step), "");
    step.scalars.pop_back();
    step.operands.pop_back();
    EXPECT_NE(k.check(step), "");
  }
  EXPECT_EQ(find_kernel("ipu_stack_cast_f16_f16"), nullptr);
  EXPECT_EQ(find_kernel("ipu_stack_add_f8"), nullptr);
}

// --- reduce_sum_f16 ---------------------------------------------------------------------------

TEST(StackElementwiseReduceSum, SequentialFp16SumsAndCyclesAtEveryShape) {
  std::mt19937 rng(7);
  for (const int64_t count : {0, 1, 3}) {
    for (const int64_t n : {8, 24, 64}) {
      SCOPED_TRACE("remote partials " + std::to_string(count) + ", N " + std::to_string(n));
      const std::vector<uint16_t> first = random_fp16(rng, n);
      const std::vector<uint16_t> remote = random_fp16(rng, n * count);
      const uint32_t pf = kBase + 0x100, pr = kBase + 0x1000, po = kBase + 0x2000;
      Sram m(machine());
      put(m, pf, first);
      put(m, pr, remote);
      run(kReduce, {po, pf, pr}, {count, n}, m);
      EXPECT_EQ(get<uint16_t>(m, po, n), reduce16(first, remote, count));
      EXPECT_EQ(cycles(kReduce, {count, n}), static_cast<uint64_t>((count + 1) * 2 * n + 11));
    }
  }
}

TEST(StackElementwiseReduceSum, OverflowInfinityNaNSignedZerosAndInPlace) {
  // Element: 0 overflow, 1 inf - inf, 2 negative NaN, 3 -0 + -0, 4 x + -x, 5 subnormals, 6 tie, 7
  // plain.
  const std::vector<uint16_t> first{0x7bff, 0x7c00, 0xfe01, 0x8000, 0x4248, 0x0001, 0x3c00, 0x4000};
  const std::vector<uint16_t> remote{0x7bff, 0xfc00, 0x3c00, 0x8000, 0xc248, 0x0001, 0x1000, 0x3c00};
  Sram m(machine());
  put(m, kBase, first);
  put(m, kBase + 16, remote);
  run(kReduce, {kBase + 64, kBase, kBase + 16}, {1, 8}, m);
  const std::vector<uint16_t> expected{0x7c00, 0x7e00, 0x7e00, 0x8000, 0x0000, 0x0002, 0x3c00, 0x4200};
  EXPECT_EQ(get<uint16_t>(m, kBase + 64, 8), expected);
  EXPECT_EQ(reduce16(first, remote, 1), expected);
  // No remote partial: the first partial's bits, NaN payload included.
  run(kReduce, {kBase + 64, kBase, kBase + 16}, {0, 8}, m);
  EXPECT_EQ(get<uint16_t>(m, kBase + 64, 8), first);
  // The output may be the first partial.
  run(kReduce, {kBase, kBase, kBase + 16}, {1, 8}, m);
  EXPECT_EQ(get<uint16_t>(m, kBase, 8), expected);
}

// --- gelu_tanh_approx_f16 ---------------------------------------------------------------------

TEST(StackElementwiseGelu, EveryFp16InputAsPairsMatchesTheNineStepReferenceAndInPlace) {
  const std::vector<uint16_t> all = every_fp16();
  const uint32_t in = kBase, out = kBase + 0x20000;
  Sram m(machine());
  put(m, in, all);
  run(kGelu, {out, in}, {65536}, m);  // 32,768 pairs
  const auto got = get<uint16_t>(m, out, 65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    ASSERT_EQ(got[i], gelu16(static_cast<uint16_t>(i))) << std::hex << "x = 0x" << i;
  }
  run(kGelu, {in, in}, {65536}, m);
  EXPECT_EQ(get<uint16_t>(m, in, 65536), got);
  EXPECT_EQ(cycles(kGelu, {65536}), 10u * 65536 + 11);
}

TEST(StackElementwiseGelu, SmallShapesAndCycles) {
  std::mt19937 rng(3);
  for (const int64_t n : {2, 6, 18, 1000}) {
    SCOPED_TRACE(n);
    const std::vector<uint16_t> x = random_fp16(rng, n);
    Sram m(machine());
    put(m, kBase, x);
    run(kGelu, {kBase + 0x1000, kBase}, {n}, m);
    const auto got = get<uint16_t>(m, kBase + 0x1000, n);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(got[i], gelu16(x[i])) << i;
    EXPECT_EQ(cycles(kGelu, {n}), static_cast<uint64_t>(10 * n + 11));
  }
}

// --- add_f16 / add_f32 ------------------------------------------------------------------------

TEST(StackElementwiseAdd, F16RandomAndSpecialValuesAliasingAndCycles) {
  std::mt19937 rng(11);
  for (const int64_t n : {1, 17, 4096}) {
    SCOPED_TRACE(n);
    std::vector<uint16_t> a = random_fp16(rng, n), b = random_fp16(rng, n);
    if (n > 1) b[1] = a[1] ^ 0x8000;  // x + (-x) = +0
    const uint32_t pa = kBase, pb = kBase + 0x4000, po = kBase + 0x8000;
    Sram m(machine());
    put(m, pa, a);
    put(m, pb, b);
    run(kAdd16, {po, pa, pb}, {n, 0, 0}, m);
    const auto got = get<uint16_t>(m, po, n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i], add16(a[i], b[i])) << i << ": " << a[i] << " + " << b[i];
    }
    run(kAdd16, {pa, pa, pb}, {n, 0, 0}, m);  // out = left
    EXPECT_EQ(get<uint16_t>(m, pa, n), got);
    put(m, pa, a);
    run(kAdd16, {pb, pa, pb}, {n, 0, 0}, m);  // out = right
    EXPECT_EQ(get<uint16_t>(m, pb, n), got);
    EXPECT_EQ(cycles(kAdd16, {n, 0, 0}), static_cast<uint64_t>((n + 15) / 16 + 11));
  }
  Sram m(machine());
  put(m, kBase, std::vector<uint16_t>{0x7bff, 0x7c00, 0x7d00, 0x8000});
  put(m, kBase + 8, std::vector<uint16_t>{0x7bff, 0xfc00, 0x3c00, 0x8000});
  run(kAdd16, {kBase + 16, kBase, kBase + 8}, {4, 0, 0}, m);
  EXPECT_EQ(get<uint16_t>(m, kBase + 16, 4), (std::vector<uint16_t>{0x7c00, 0x7e00, 0x7e00, 0x8000}));
}

TEST(StackElementwiseAdd, F32RandomAndSpecialValuesAliasingAndCycles) {
  std::mt19937 rng(12);
  for (const int64_t n : {1, 23, 5000}) {
    SCOPED_TRACE(n);
    const std::vector<uint32_t> a = random_fp32(rng, n);
    std::vector<uint32_t> b = random_fp32(rng, n);
    std::reverse(b.begin(), b.end());
    const uint32_t pa = kBase, pb = kBase + 0x8000, po = kBase + 0x10000;
    Sram m(machine());
    put(m, pa, a);
    put(m, pb, b);
    run(kAdd32, {po, pa, pb}, {n, 0, 0}, m);
    const auto got = get<uint32_t>(m, po, n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i], add32(a[i], b[i])) << std::hex << a[i] << " + " << b[i];
    }
    run(kAdd32, {pb, pa, pb}, {n, 0, 0}, m);
    EXPECT_EQ(get<uint32_t>(m, pb, n), got);
    EXPECT_EQ(cycles(kAdd32, {n, 0, 0}), static_cast<uint64_t>((n + 15) / 16 + 11));
  }
  // FLT_MAX + FLT_MAX, inf - inf, a signalling NaN with a payload, -0 + -0, subnormal sum.
  Sram m(machine());
  put(m, kBase, std::vector<uint32_t>{0x7f7fffff, 0x7f800000, 0xff800001, 0x80000000, 0x00000001});
  put(m, kBase + 32, std::vector<uint32_t>{0x7f7fffff, 0xff800000, 0x3f800000, 0x80000000, 0x00000001});
  run(kAdd32, {kBase + 64, kBase, kBase + 32}, {5, 0, 0}, m);
  EXPECT_EQ(get<uint32_t>(m, kBase + 64, 5),
            (std::vector<uint32_t>{0x7f800000, 0x7fc00000, 0x7fc00000, 0x80000000, 0x00000002}));
}

// --- cast -------------------------------------------------------------------------------------

TEST(StackElementwiseCast, F16ToF32EveryCodeAndF16ToF8EveryCode) {
  const std::vector<uint16_t> all = every_fp16();
  Sram m(machine());
  put(m, kBase, all);
  run("ipu_stack_cast_f16_f32", {kBase + 0x20000, kBase}, {65536}, m);
  run("ipu_stack_cast_f16_f8", {kBase + 0x60000, kBase}, {65536}, m);
  const auto wide = get<uint32_t>(m, kBase + 0x20000, 65536);
  const auto f8 = get<uint8_t>(m, kBase + 0x60000, 65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<uint16_t>(i);
    ASSERT_EQ(wide[i], widen16(h)) << std::hex << "0x" << i;
    ASSERT_EQ(f8[i], ref::f143_nearest_even_saturating(v16(h), 0)) << std::hex << "0x" << i;
  }
}

TEST(StackElementwiseCast, F8ToF16AndF32EveryCode) {
  std::vector<uint8_t> all(256);
  for (uint32_t c = 0; c < 256; ++c) all[c] = static_cast<uint8_t>(c);
  Sram m(machine());
  put(m, kBase, all);
  run("ipu_stack_cast_f8_f16", {kBase + 0x1000, kBase}, {256}, m);
  run("ipu_stack_cast_f8_f32", {kBase + 0x2000, kBase}, {256}, m);
  const auto h = get<uint16_t>(m, kBase + 0x1000, 256);
  const auto f = get<uint32_t>(m, kBase + 0x2000, 256);
  for (uint32_t c = 0; c < 256; ++c) {
    const auto code = static_cast<uint8_t>(c);
    EXPECT_EQ(h[c], ref::fp16_nearest_even(ref::f143_value(code, 0))) << c;
    EXPECT_EQ(f[c], f8_to_f32(code)) << c;
  }
  EXPECT_EQ(h[0x80], 0x7e00);
  EXPECT_EQ(f[0x80], 0x7fc00000u);
  EXPECT_EQ(h[0x7f], 0x5b80);  // 240
}

TEST(StackElementwiseCast, F32ToF16AndF8RandomValuesAndInPlace) {
  std::mt19937 rng(5);
  for (const int64_t n : {1, 21, 20000}) {
    SCOPED_TRACE(n);
    const std::vector<uint32_t> x = random_fp32(rng, n);
    Sram m(machine());
    put(m, kBase, x);
    run("ipu_stack_cast_f32_f16", {kBase + 0x20000, kBase}, {n}, m);
    run("ipu_stack_cast_f32_f8", {kBase + 0x40000, kBase}, {n}, m);
    const auto h = get<uint16_t>(m, kBase + 0x20000, n);
    const auto f8 = get<uint8_t>(m, kBase + 0x40000, n);
    for (int64_t i = 0; i < n; ++i) {
      const double v = std::bit_cast<float>(x[i]);
      ASSERT_EQ(h[i], ref::fp16_nearest_even(v)) << std::hex << x[i];
      ASSERT_EQ(f8[i], ref::f143_nearest_even_saturating(v, 0)) << std::hex << x[i];
    }
    run("ipu_stack_cast_f32_f16", {kBase, kBase}, {n}, m);  // narrowing in place
    EXPECT_EQ(get<uint16_t>(m, kBase, n), h);
  }
}

TEST(StackElementwiseCast, IdentityCopiesTheElementCountInBytes) {
  std::mt19937 rng(9);
  std::uniform_int_distribution<uint32_t> byte(0, 255);
  std::vector<uint8_t> in(13);
  for (auto& b : in) b = static_cast<uint8_t>(byte(rng));
  Sram m(machine());
  put(m, kBase, in);
  put(m, kBase + 0x100, std::vector<uint8_t>(16, 0xa5));
  run("ipu_stack_cast_identity", {kBase + 0x100, kBase}, {13}, m);
  const auto out = get<uint8_t>(m, kBase + 0x100, 16);
  EXPECT_EQ(std::vector<uint8_t>(out.begin(), out.begin() + 13), in);
  EXPECT_EQ(std::vector<uint8_t>(out.begin() + 13, out.end()), std::vector<uint8_t>(3, 0xa5));
}

TEST(StackElementwiseCast, CyclesAreTheBytesMovedOverEightPlusLaunch) {
  struct Case {
    const char* symbol;
    uint64_t bytes_per_element;  // in + out
  };
  for (const Case& c :
       {Case{"ipu_stack_cast_f16_f32", 6}, Case{"ipu_stack_cast_f32_f16", 6}, Case{"ipu_stack_cast_f8_f16", 3},
        Case{"ipu_stack_cast_f8_f32", 5}, Case{"ipu_stack_cast_f16_f8", 3}, Case{"ipu_stack_cast_f32_f8", 5},
        Case{"ipu_stack_cast_identity", 2}}) {
    for (const int64_t n : {1, 7, 8, 1000}) {
      const uint64_t bytes = c.bytes_per_element * static_cast<uint64_t>(n);
      EXPECT_EQ(cycles(c.symbol, {n}), (bytes + 7) / 8 + 11) << c.symbol << " x " << n;
    }
  }
}

// --- signatures and bounds --------------------------------------------------------------------

TEST(StackElementwiseSignature, AcceptsGoodScalarsAndRejectsBadOnesInOneLine) {
  const uint64_t sram = machine().sram_bytes();
  struct Case {
    const char* symbol;
    std::vector<int64_t> scalars;
    bool good;
  };
  const std::vector<Case> cases = {{kReduce, {0, 8}, true},
                                   {kReduce, {3, 64}, true},
                                   {kReduce, {1, 12}, false},
                                   {kReduce, {1, 0}, false},
                                   {kReduce, {-1, 8}, false},
                                   {kGelu, {2}, true},
                                   {kGelu, {65536}, true},
                                   {kGelu, {3}, false},
                                   {kGelu, {0}, false},
                                   {kAdd16, {16, 0, 0}, true},
                                   {kAdd16, {16, 1, 0}, false},
                                   {kAdd16, {16, 0, 4}, false},
                                   {kAdd32, {5, 0, 0}, true},
                                   {kAdd32, {5, 0, 2}, false},
                                   {kAdd32, {0, 0, 0}, false},
                                   {"ipu_stack_cast_f8_f32", {1}, true},
                                   {"ipu_stack_cast_identity", {0}, false}};
  for (const Case& c : cases) {
    const arch::KernelSignature* signature = arch::find_kernel_signature(c.symbol);
    ASSERT_NE(signature, nullptr) << c.symbol;
    const std::string error = signature->check_scalars(c.scalars, sram);
    if (c.good) {
      EXPECT_EQ(error, "") << c.symbol;
    } else {
      EXPECT_NE(error, "") << c.symbol << " " << c.scalars[0];
      EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    }
  }
  EXPECT_EQ(arch::find_kernel_signature(kReduce)->operand_bytes({3, 64}, 3), (std::vector<uint64_t>{128, 128, 384}));
}

// A span leaving SRAM throws std::out_of_range and the output is not written.
TEST(StackElementwiseBounds, SpansLeavingSramThrowBeforeWriting) {
  const std::vector<uint16_t> marker(64, 0x1234);
  const uint32_t out = kBase + 0x100, in = kBase + 0x200;
  struct Case {
    const char* symbol;
    std::vector<uint32_t> operands;
    std::vector<int64_t> scalars;
  };
  const std::vector<Case> cases = {
      {kReduce, {kEnd - 8, in, in}, {1, 8}},               // output
      {kReduce, {out, kEnd - 8, in}, {1, 8}},              // first partial
      {kReduce, {out, in, kEnd - 32}, {3, 8}},             // remote partials
      {kGelu, {kEnd - 4, in}, {4}},                        // output
      {kGelu, {out, kEnd - 4}, {4}},                       // input
      {kAdd16, {out, in, kEnd - 2}, {2, 0, 0}},            // right
      {kAdd32, {out, kEnd - 4, in}, {2, 0, 0}},            // left
      {kAdd32, {kEnd - 4, in, in}, {2, 0, 0}},             // output
      {"ipu_stack_cast_f8_f32", {out, kEnd - 4}, {8}},     // input
      {"ipu_stack_cast_f16_f32", {kEnd - 8, in}, {4}},     // output
      {"ipu_stack_cast_identity", {out, kBase - 1}, {4}},  // input below SRAM
  };
  for (const Case& c : cases) {
    Sram m(machine());
    put(m, out, marker);
    EXPECT_THROW(run(c.symbol, c.operands, c.scalars, m), std::out_of_range) << c.symbol;
    EXPECT_EQ(get<uint16_t>(m, out, 64), marker) << c.symbol;
  }
}

}  // namespace
}  // namespace lockstep::model
