#pragma once
// The F16 AMP call's cost model for the GEMM kernels: 294 x call + row blocks + column
// groups (arch/amp_cost.hpp), the parameters calibration fits (docs/calibration.md).
#include <cstdint>
#include <vector>

#include "arch/amp_cost.hpp"
#include "model/kernel_registry.hpp"

namespace lockstep::model::kernels::amp {

inline std::vector<double> f16_amp_terms(int64_t rows, int64_t k, int64_t columns,
                                         uint64_t group_cost = arch::kAmpGroupCostStandard) {
  const auto count = [](int64_t v) { return static_cast<uint64_t>(v < 0 ? 0 : v); };
  const auto t = arch::amp_f16_gemm_terms(count(rows), count(k), count(columns), group_cost);
  return {t.begin(), t.end()};
}

inline CostModel f16_amp_cost_model(std::vector<double> (*terms)(const std::vector<int64_t>&,
                                                                 const arch::MachineDescription&)) {
  return CostModel{{"call", "row_blocks", "column_groups"}, {294, 1, 1}, terms};
}

}  // namespace lockstep::model::kernels::amp
