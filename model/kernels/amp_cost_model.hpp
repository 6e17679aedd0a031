#pragma once
// The F16 AMP call's cost model for the GEMM kernels: 294 x call + row blocks + column
// groups (arch/amp_cost.hpp), the parameters calibration fits (docs/calibration.md), and the
// kernel definitions of gemm_fp8 and gemm_fp16 with their `_interleaved` variants built from it.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/amp_cost.hpp"
#include "model/kernel_registry.hpp"
#include "model/kernels/amp_accumulate.hpp"
#include "model/sram.hpp"

namespace lockstep::model::kernels::amp {

// A GEMM step's shape in the AMP formula's terms, read from its scalars.
struct AmpShape {
  int64_t rows = 0, k = 0, columns = 0;
};

// The plain kernel, or (`interleaved`) its variant for weights (operand 2, `weight_bytes` of
// them) in interleaved memory: the same check and numerics, K 11.1's column-group cost 940
// instead of 1063, and weights anywhere else refused when it runs (std::out_of_range: a hazard).
inline KernelDefinition amp_gemm_definition(const std::string& name,
                                            std::function<std::string(const arch::KernelStep&)> check,
                                            decltype(KernelDefinition::execute) execute,
                                            AmpShape (*shape)(const std::vector<int64_t>&),
                                            uint64_t (*weight_bytes)(const std::vector<int64_t>&), bool interleaved) {
  const uint64_t group = interleaved ? arch::kAmpGroupCostInterleaved : arch::kAmpGroupCostStandard;
  const std::string kernel = interleaved ? name + "_interleaved" : name;
  if (interleaved) {
    execute = [kernel, execute, weight_bytes](const std::vector<uint32_t>& operands,
                                              const std::vector<int64_t>& scalars, Sram& memory) {
      if (!memory.interleaved(operands[2], weight_bytes(scalars))) {
        throw std::out_of_range(kernel + ": weights at " + std::to_string(operands[2]) +
                                " are not all in interleaved memory");
      }
      execute(operands, scalars, memory);
    };
  }
  const auto cycles = [shape, group](const std::vector<int64_t>& scalars, const arch::MachineDescription&) -> uint64_t {
    if (scalars.size() < 3) return 0;
    const AmpShape s = shape(scalars);
    return f16_amp_cycles(s.rows, s.k, s.columns, group);
  };
  const auto terms = [shape, group](const std::vector<int64_t>& scalars, const arch::MachineDescription&) {
    const AmpShape s = shape(scalars);
    const auto count = [](int64_t v) { return static_cast<uint64_t>(v < 0 ? 0 : v); };
    const auto t = arch::amp_f16_gemm_terms(count(s.rows), count(s.k), count(s.columns), group);
    return std::vector<double>(t.begin(), t.end());
  };
  return KernelDefinition{kernel,
                          std::move(check),
                          std::move(execute),
                          cycles,
                          false,
                          CostModel{{"call", "row_blocks", "column_groups"}, {294, 1, 1}, terms}};
}

}  // namespace lockstep::model::kernels::amp
