#pragma once
// The deliberately simple references the element-wise and row kernels' tests hold them against,
// written from the definitions in docs/kernels-elementwise.md: scalar loops, values from the FP16
// fields and rounding by the sorted-table search of tests/numerics/numerics_reference.hpp
// (independent of arch/'s bit manipulation); and the helpers that run a kernel on one SRAM.
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

#include "arch/machine.hpp"
#include "model/kernel_registry.hpp"
#include "model/kernels/tensor_io.hpp"
#include "model/sram.hpp"
#include "numerics/fp16.hpp"
#include "numerics/numerics_reference.hpp"
#include "tests/model/kernel_harness.hpp"

namespace lockstep::model::elementwise_reference {

using namespace kernel_harness;  // NOLINT(google-build-using-namespace): shared by every kernel test

// --- the references -------------------------------------------------------------------------

inline double v16(uint16_t h) { return arch::reference::fp16_value(h); }

// fl16 by table search; any NaN -> the positive 0x7e00 (the kernels' arithmetic NaN).
inline uint16_t r16(double x) { return std::isnan(x) ? uint16_t{0x7e00} : arch::reference::fp16_nearest_even(x); }

inline uint16_t reference_gelu(uint16_t h) {
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
inline float split_sum(const std::vector<float>& v, size_t slice) {
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
inline float layernorm_sum(const std::vector<float>& v) { return split_sum(v, 4 * ((v.size() + 23) / 24)); }
inline float softmax_sum(const std::vector<float>& v) { return split_sum(v, 2 * ((v.size() + 11) / 12)); }

inline std::vector<uint16_t> reference_softmax(const std::vector<float>& scores, size_t rows, size_t columns,
                                               int64_t head_dim) {
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

inline std::vector<uint16_t> reference_layernorm(const std::vector<uint16_t>& x, size_t rows, size_t columns,
                                                 const std::vector<uint16_t>& gamma = {},
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

template <typename T>
inline void put(Sram& m, uint32_t address, const std::vector<T>& v) {
  kernels::write_array(m, address, v, "test");
}
inline std::vector<uint16_t> get16(const Sram& m, uint32_t address, size_t n) {
  return kernels::read_fp16(m, address, n, "test");
}
inline std::vector<float> get32(const Sram& m, uint32_t address, size_t n) {
  return kernels::read_fp32(m, address, n, "test");
}

inline std::vector<uint16_t> random_fp16(std::mt19937& rng, size_t n, double sigma, double mean = 0) {
  std::normal_distribution<double> normal(mean, sigma);
  std::vector<uint16_t> v(n);
  for (auto& h : v) h = arch::fp16_from_double(normal(rng));
  return v;
}

inline std::vector<float> random_scores(std::mt19937& rng, size_t n, double sigma) {
  // Scores as the QK GEMM leaves them: FP32 sums of FP16 products, here FP16-valued plus noise.
  std::normal_distribution<double> normal(0, sigma);
  std::vector<float> v(n);
  for (auto& f : v) f = static_cast<float>(normal(rng));
  return v;
}

}  // namespace lockstep::model::elementwise_reference
