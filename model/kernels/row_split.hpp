#pragma once
// The work split of Lockstep's row kernels (layernorm, softmax; docs/kernels-elementwise.md):
// each row in turn over the six workers, its values cut into six slices of whole vectors
// (worker w takes slice w; worker 0's, a full one, is the slowest), in waves between which
// the workers' partial results are combined. Sums over a row follow the split.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "model/kernel_registry.hpp"

namespace lockstep::model::kernels {

inline constexpr uint64_t kRowWorkers = 6;     // the IPU21 tile's worker contexts (D 9.3)
inline constexpr uint64_t kLaunchCycles = 11;  // a worker launch (IPU21-KERNELS.md 11.1)

struct RowSplit {
  uint64_t vector_values;  // values a vector instruction handles (4: f16v4, 2: f32v2)
  uint64_t per_vector;     // worker instructions per vector of a slice, all waves
  uint64_t per_row;        // worker instructions per row, all waves (set-ups, combines)
  uint64_t waves_per_row;  // launches per row

  uint64_t slice(uint64_t columns) const {
    const uint64_t row_vectors = kRowWorkers * vector_values;
    return vector_values * ((columns + row_vectors - 1) / row_vectors);
  }
  // The slowest worker's instructions at the machine's issue interval, plus the launches.
  uint64_t cycles(uint64_t rows, uint64_t columns, const arch::MachineDescription& machine) const {
    const uint64_t slowest_worker = per_vector * (slice(columns) / vector_values) + per_row;
    return rows * (machine.supervisor_cycles_per_instruction * slowest_worker + waves_per_row * kLaunchCycles);
  }
  // The cycles above as a cost model: instructions per vector of the slowest slice, and the
  // cycles of a row besides (its own instructions and the launches, which scale alike with
  // the rows, so calibration could not tell them apart).
  std::vector<double> terms(uint64_t rows, uint64_t columns, const arch::MachineDescription& machine) const {
    const double r = static_cast<double>(rows);
    return {r * machine.supervisor_cycles_per_instruction * static_cast<double>(slice(columns) / vector_values), r};
  }
  // The definition of a row kernel on this split, whose scalars start with its rows and
  // columns: its cycles, and those cycles as a cost model.
  KernelDefinition definition(std::string name, decltype(KernelDefinition::check) check,
                              decltype(KernelDefinition::execute) execute) const {
    const RowSplit split = *this;
    const auto rows = [](const std::vector<int64_t>& scalars) { return static_cast<uint64_t>(scalars[0]); };
    const auto columns = [](const std::vector<int64_t>& scalars) { return static_cast<uint64_t>(scalars[1]); };
    const arch::MachineDescription ipu21;  // the defaults at the IPU21's issue interval
    CostModel cost{
        {"instructions_per_vector", "cycles_per_row"},
        {static_cast<double>(per_vector),
         static_cast<double>(ipu21.supervisor_cycles_per_instruction * per_row + waves_per_row * kLaunchCycles)},
        [=](const std::vector<int64_t>& scalars, const arch::MachineDescription& machine) {
          return split.terms(rows(scalars), columns(scalars), machine);
        }};
    return {std::move(name),
            std::move(check),
            std::move(execute),
            [=](const std::vector<int64_t>& scalars, const arch::MachineDescription& machine) {
              return split.cycles(rows(scalars), columns(scalars), machine);
            },
            false,
            std::move(cost)};
  }
  // v[0..columns) summed as the split does: per slice an even and an odd f32v2 lane in column
  // order, fl32(even + odd), the slices' sums added in order (an empty slice adds nothing).
  float sum(const float* v, uint64_t columns) const {
    const uint64_t width = slice(columns);
    float total = 0.0f;
    for (uint64_t first = 0; first < columns; first += width) {
      float lanes[2] = {0.0f, 0.0f};
      for (uint64_t c = first; c < std::min(columns, first + width); ++c) lanes[c & 1] += v[c];
      total += lanes[0] + lanes[1];
    }
    return total;
  }
};

}  // namespace lockstep::model::kernels
