#pragma once
// f32(fl16(exp(z))) for every FP16 code z, shared by the kernels that exponentiate FP16
// values (softmax, attention_softmax): exp in double, rounded once to FP16 and kept as that
// value's (exact) float, ready to sum. A NaN z gives a positive quiet NaN. Why a table is
// libm-independent: docs/kernels-elementwise.md "Common rules".
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>

#include "numerics/fp16.hpp"

namespace lockstep::model::kernels {

inline const std::array<float, 65536>& fp16_exp_table() {
  static const auto table = [] {
    auto t = std::make_unique<std::array<float, 65536>>();
    for (uint32_t z = 0; z < 65536; ++z) {
      const double x = arch::fp16_to_float(static_cast<uint16_t>(z));
      const uint16_t e = std::isnan(x) ? arch::kFp16CanonicalNaN : arch::fp16_from_double(std::exp(x));
      (*t)[z] = arch::fp16_to_float(e);
    }
    return t;
  }();
  return *table;
}

}  // namespace lockstep::model::kernels
