#pragma once
// The tanh-form GELU of IPU21-KERNELS.md section 8 in its nine FP16 steps, each rounded to FP16
// (nearest even):
//   t = x*x; t = t*x; t = beta*t (beta 0x29b9); t = x+t; t = alpha*t (alpha 0x3a62);
//   t = tanh16(t) = fl16(tanh(t) in double); t = 1+t; t = 0.5*t; y = x*t
// A pure function of the input's 16 bits, so it is a 65,536-entry table built once from that
// definition, shared by Lockstep's `gelu` and the stack's `ipu_stack_gelu_tanh_approx_f16`.
// NaN results are the positive 0x7e00 (arch::fp16_add / fp16_mul).
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>

#include "numerics/fp16.hpp"

namespace lockstep::model::kernels {

inline uint16_t gelu16(uint16_t x) {
  constexpr uint16_t kBeta = 0x29b9, kAlpha = 0x3a62, kOne = 0x3c00, kHalf = 0x3800;
  using arch::fp16_add;
  using arch::fp16_mul;
  const auto tanh16 = [](uint16_t t) {
    const double v = arch::fp16_to_float(t);
    return std::isnan(v) ? arch::kFp16CanonicalNaN : arch::fp16_from_double(std::tanh(v));
  };
  uint16_t t = fp16_mul(x, x);  // 1
  t = fp16_mul(t, x);           // 2
  t = fp16_mul(kBeta, t);       // 3
  t = fp16_add(x, t);           // 4
  t = fp16_mul(kAlpha, t);      // 5
  t = tanh16(t);                // 6
  t = fp16_add(kOne, t);        // 7
  t = fp16_mul(kHalf, t);       // 8
  return fp16_mul(x, t);        // 9
}

inline const std::array<uint16_t, 65536>& gelu_table() {
  static const auto table = [] {
    auto t = std::make_unique<std::array<uint16_t, 65536>>();
    for (uint32_t x = 0; x < 65536; ++x) (*t)[x] = gelu16(static_cast<uint16_t>(x));
    return t;
  }();
  return *table;
}

}  // namespace lockstep::model::kernels
