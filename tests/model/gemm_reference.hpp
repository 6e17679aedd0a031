#pragma once
// The deliberately simple references the GEMM and reduce_sum tests hold the kernels against,
// written from docs/kernels-gemm.md: scalar loops in K order, values from the format fields
// (tests/numerics/numerics_reference.hpp), and every round-once done on exact integers: the sum
// is an __int128 count of 2^-60, rounded by searching the sorted table of all FP16 values
// (scaled the same way) and comparing distances exactly; nothing shares the kernels' TwoSum /
// round-to-odd method. Also the tests' inputs and the helpers that run a kernel on one SRAM.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/kernel_signatures.hpp"
#include "arch/machine.hpp"
#include "model/kernel_registry.hpp"
#include "model/kernels/amp_accumulate.hpp"
#include "model/sram.hpp"
#include "numerics/numerics_reference.hpp"
#include "tests/model/kernel_harness.hpp"

namespace lockstep::model::gemm_reference {

using namespace kernel_harness;  // NOLINT(google-build-using-namespace): shared by every kernel test

namespace amp = kernels::amp;
using Int = __int128;

constexpr uint32_t kOut = 0x50000, kIn = 0x80000, kWeights = 0xb0000;

// --- the reference ----------------------------------------------------------------------------

constexpr int kQuantumExponent = -60;  // exact sums are counted in units of 2^-60

inline double value16(uint16_t h) { return arch::reference::fp16_value(h); }

// x / 2^-60 as an integer; x must be a multiple of 2^-60 below 2^65 in magnitude (the tests'
// values are: products of FP16 values are multiples of 2^-48).
inline Int units(double x) {
  const double scaled = std::ldexp(x, -kQuantumExponent);
  if (!(std::fabs(scaled) < 0x1p125) || scaled != std::floor(scaled)) {
    throw std::logic_error("reference: value not a multiple of 2^-60");
  }
  const double high = std::floor(std::ldexp(scaled, -63));  // split so each part fits int64
  const double low = scaled - std::ldexp(high, 63);
  return (static_cast<Int>(static_cast<int64_t>(high)) << 63) + static_cast<Int>(static_cast<int64_t>(low));
}

// Every non-negative finite FP16 value in units, code order = value order; then 2^16, where
// IEEE rounding overflows to infinity.
inline const std::vector<Int>& fp16_units() {
  static const std::vector<Int> table = [] {
    std::vector<Int> t;
    for (uint32_t h = 0; h < 0x7c00; ++h) t.push_back(units(value16(static_cast<uint16_t>(h))));
    t.push_back(units(65536.0));
    return t;
  }();
  return table;
}

// fl16 of the exact value x units (nearest, ties to the even code; 0x7c00 = infinity); the
// sign of a zero result is `negative_zero` when x == 0.
inline uint16_t round_units(Int x, bool negative_zero) {
  if (x == 0) return negative_zero ? 0x8000 : 0;
  const uint16_t sign = x < 0 ? 0x8000 : 0;
  const Int m = x < 0 ? -x : x;
  const std::vector<Int>& t = fp16_units();
  const auto above = std::upper_bound(t.begin(), t.end(), m);
  if (above == t.end()) return sign | 0x7c00;                      // >= 2^16
  const auto code = static_cast<uint32_t>(above - t.begin() - 1);  // t[code] <= m < t[code + 1]
  const Int down = m - t[code], up = t[code + 1] - m;
  const uint32_t chosen = down < up ? code : up < down ? code + 1 : (code % 2 == 0 ? code : code + 1);
  return static_cast<uint16_t>(sign | chosen);
}

// fl16(s + acc) for an FP32 s and an FP16 acc, from the exact sum; any NaN -> 0x7e00.
inline uint16_t reference_round_add(float s, uint16_t acc) {
  const double a = value16(acc);
  if (std::isnan(s) || std::isnan(a)) return 0x7e00;
  if (std::isinf(s) || std::isinf(a)) {
    const double sum = static_cast<double>(s) + a;  // inf + finite, inf + inf, inf - inf
    return std::isnan(sum) ? 0x7e00 : (sum < 0 ? 0xfc00 : 0x7c00);
  }
  // An exact zero is -0 only when both are -0 (IEEE, round to nearest).
  return round_units(units(s) + units(a), std::signbit(s) && std::signbit(a));
}

inline float float_of_fp16(uint16_t h) {
  if ((h & 0x7fff) > 0x7c00) return std::bit_cast<float>(0x7fc00000u);
  return static_cast<float>(value16(h));
}

// The GEMM rule with B given as FP16-exact floats b(kk, c): per output, acc = +0; per step of
// 16 K values, s = the step's products summed in float in K order from the first, then
// acc = fl16(s + acc) from the exact sum.
template <typename B>
inline std::vector<uint16_t> reference_gemm(const std::vector<uint16_t>& a, uint32_t rows, uint32_t k, uint32_t n,
                                            B b) {
  std::vector<uint16_t> out(size_t{rows} * n);
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < n; ++c) {
      uint16_t acc = 0;
      for (uint32_t t = 0; t < k; t += 16) {
        float s = 0;
        for (uint32_t kk = t; kk < std::min(k, t + 16); ++kk) {
          const float product = static_cast<float>(value16(a[size_t{r} * k + kk])) * b(kk, c);
          s = kk == t ? product : s + product;
        }
        acc = reference_round_add(s, acc);
      }
      out[size_t{r} * n + c] = acc;
    }
  }
  return out;
}

// --- inputs -----------------------------------------------------------------------------------

// FP16 codes: signed zeros, subnormals, small and ordinary values, large ones whose sums
// overflow to infinity, all signs.
inline std::vector<uint16_t> random_fp16(std::mt19937& rng, size_t count, bool with_large = true) {
  std::vector<uint16_t> v(count);
  for (auto& h : v) {
    const uint32_t kind = rng() % 20;
    const auto sign = static_cast<uint16_t>(rng() % 2 ? 0x8000 : 0);
    const auto fraction = static_cast<uint16_t>(rng() % 1024);
    uint16_t exponent = static_cast<uint16_t>(8 + rng() % 16);  // 2^-7 .. 2^8
    if (kind == 0) {
      h = sign;
      continue;
    }
    if (kind == 1) exponent = 0;                                                    // subnormal
    if (kind == 2) exponent = static_cast<uint16_t>(1 + rng() % 8);                 // tiny normal
    if (kind == 3 && with_large) exponent = static_cast<uint16_t>(26 + rng() % 5);  // 2^11 .. 2^15
    h = static_cast<uint16_t>(sign | (exponent << 10) | fraction);
  }
  return v;
}

inline std::vector<uint8_t> random_f143(std::mt19937& rng, size_t count) {
  std::vector<uint8_t> v(count);
  for (auto& c : v) {
    do c = static_cast<uint8_t>(rng());
    while (c == 0x80);
  }
  return v;
}

// --- running kernels --------------------------------------------------------------------------

template <typename T>
inline void put(Sram& m, uint32_t address, const std::vector<T>& v) {
  m.write(address, static_cast<uint32_t>(v.size() * sizeof(T)), reinterpret_cast<const uint8_t*>(v.data()));
}
template <typename T>
inline std::vector<T> get(const Sram& m, uint32_t address, size_t count) {
  std::vector<T> v(count);
  m.read(address, static_cast<uint32_t>(count * sizeof(T)), reinterpret_cast<uint8_t*>(v.data()));
  return v;
}

inline std::vector<uint32_t> fp32_bits(const std::vector<float>& v) {
  std::vector<uint32_t> bits;
  for (float x : v) bits.push_back(std::bit_cast<uint32_t>(x));
  return bits;
}
inline std::vector<uint32_t> fp32_bits_of_fp16(const std::vector<uint16_t>& v) {
  std::vector<uint32_t> bits;
  for (uint16_t h : v) bits.push_back(std::bit_cast<uint32_t>(float_of_fp16(h)));
  return bits;
}

// Kernel `name` on a fresh SRAM, its call checked first: `a` at kIn, `b` at kWeights, and the
// `count` outputs it writes at kOut.
template <typename Out, typename A, typename B>
std::vector<Out> run_kernel(const std::string& name, const std::vector<A>& a, const std::vector<B>& b,
                            const std::vector<int64_t>& scalars, size_t count) {
  Sram m(machine());
  put(m, kIn, a);
  put(m, kWeights, b);
  EXPECT_EQ(check(name, 3, scalars), "");
  kernel(name).execute({kOut, kIn, kWeights}, scalars, m);
  return get<Out>(m, kOut, count);
}

// gemm_fp8 on SRAM: FP32 output.
inline std::vector<float> run_gemm_fp8(const std::vector<uint16_t>& input, const std::vector<uint8_t>& weights,
                                       uint32_t rows, uint32_t k, uint32_t n, int scale) {
  return run_kernel<float>("gemm_fp8", input, weights, {rows, k, n, scale, 32}, size_t{rows} * n);
}

inline std::vector<uint16_t> reference_fp8(const std::vector<uint16_t>& input, const std::vector<uint8_t>& weights,
                                           uint32_t rows, uint32_t k, uint32_t n, int scale) {
  return reference_gemm(input, rows, k, n, [&](uint32_t kk, uint32_t c) {
    return static_cast<float>(arch::reference::f143_value(weights[size_t{kk} * n + c], scale));
  });
}

struct Shape {
  uint32_t rows, k, n;
};
// Rows 1, K and n not multiples of 16, K shorter than one step, several steps and panels,
// rows over one and two of the 24-row chunks A is widened in (amp::gemm).
inline const std::vector<Shape> kShapes = {{1, 1, 1},    {1, 17, 5},   {2, 16, 16},   {7, 33, 19},   {6, 48, 32},
                                           {13, 50, 40}, {5, 300, 3},  {12, 100, 37}, {19, 129, 70}, {9, 20, 24},
                                           {4, 18, 8},   {25, 16, 16}, {53, 40, 37}};

}  // namespace lockstep::model::gemm_reference
