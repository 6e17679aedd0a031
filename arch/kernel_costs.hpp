#pragma once
// Kernel cycles under fitted cost parameters (docs/calibration.md): a kernel's cost model is
// parameters x terms, and a machine carrying fitted parameters for a kernel
// (MachineDescription::kernel_costs, from `--costs`) is charged ceil(sum of parameters[i] x
// terms[i]). The kernels (model/kernel_registry) and the lowering's estimates
// (workload/lower_gemm.cpp, lower_attention.cpp) both go through here, so `build --costs`
// ranks its choices by the cycles `run --costs` charges.
#include <cstdint>
#include <string>
#include <vector>

#include "arch/amp_cost.hpp"
#include "arch/attention_cost.hpp"
#include "arch/machine.hpp"

namespace lockstep::arch {

// ceil(sum of parameters[i] x terms[i]), at least 0; a sum within 1e-6 of an integer is that
// integer (fitted parameters carry rounding noise).
uint64_t cost_cycles(const std::vector<double>& parameters, const std::vector<double>& terms);

// The machine's fitted cycles for `kernel` at `terms`, or `builtin` when it carries none.
uint64_t fitted_or_builtin(const MachineDescription& machine, const std::string& kernel,
                           const std::vector<double>& terms, uint64_t builtin);

// reduce_sum's written schedule (docs/kernels-gemm.md "reduce_sum"): K 7's work split, the
// rows x columns outputs in chunks of 8 halves (two f16v4 quads), chunk i on worker i mod the
// workers. A chunk costs 4 worker instructions per part and 6 more: the first part's two ld64,
// each further part's two ld64 and two f16v4add, the bias's two ld64, two f16v4add and two
// steps of its index (it wraps at each row's end), and two st64.
struct ReduceSumSchedule {
  uint64_t per_part;   // worker instructions per part of a chunk
  uint64_t per_chunk;  // and per chunk
};
inline constexpr ReduceSumSchedule kReduceSumSchedule{4, 6};

// The slowest worker's cycles per instruction of its chunks (chunk i on worker i mod workers,
// as the attention stages' rows: arch/attention_cost.hpp).
inline uint64_t reduce_sum_slowest_cycles(uint64_t rows, uint64_t columns, const MachineDescription& m) {
  return slowest_worker_cycles((rows * columns + 7) / 8, m);
}
inline uint64_t reduce_sum_cycles(uint64_t parts, uint64_t rows, uint64_t columns, const MachineDescription& m) {
  const ReduceSumSchedule& s = kReduceSumSchedule;
  return reduce_sum_slowest_cycles(rows, columns, m) * (s.per_part * parts + s.per_chunk) + kKernelLaunchCycles;
}
// As a cost model: instructions per part, per chunk and the launch against these terms.
inline std::vector<double> reduce_sum_terms(uint64_t parts, uint64_t rows, uint64_t columns,
                                            const MachineDescription& m) {
  const auto slowest = static_cast<double>(reduce_sum_slowest_cycles(rows, columns, m));
  return {slowest * static_cast<double>(parts), slowest, 1.0};
}

// copy's cycles (model/kernels/copy.cpp): the words split over the workers, a load and a
// store each, plus a 4-instruction prologue, at the issue interval.
inline std::vector<double> copy_terms(uint64_t bytes, const MachineDescription& m) {
  const uint64_t workers = m.workers == 0 ? 1 : m.workers;
  const auto issue = static_cast<double>(m.supervisor_cycles_per_instruction);
  return {issue * static_cast<double>((bytes / 4 + workers - 1) / workers), issue};
}
inline uint64_t copy_cycles(uint64_t bytes, const MachineDescription& m) {
  const uint64_t workers = m.workers == 0 ? 1 : m.workers;
  return m.supervisor_cycles_per_instruction * (4 + 2 * ((bytes / 4 + workers - 1) / workers));
}

// The IPU21 stack's local copy helpers (`ipu_stack_copy_u64` and the like; K 11.1 and 14.8, the
// planner's local copy): ceil(bytes / 8) + 288 a call.
inline uint64_t stack_local_copy_cycles(uint64_t bytes) { return (bytes + 7) / 8 + 288; }

// What `run` charges the lowering's kernels on `machine`: its fitted cycles where it carries
// parameters for the kernel, else the built-in ones.
// (The GEMMs at the standard-memory column-group cost: the lowering ranks its choices with
// them, whether or not the weights end up in interleaved memory.)
inline uint64_t charged_amp_gemm_cycles(const MachineDescription& machine, const std::string& kernel, uint64_t rows,
                                        uint64_t k, uint64_t columns) {
  const auto terms = amp_f16_gemm_terms(rows, k, columns);
  return fitted_or_builtin(machine, kernel, {terms.begin(), terms.end()}, amp_f16_gemm_cycles(rows, k, columns));
}
inline uint64_t charged_copy_cycles(const MachineDescription& machine, uint64_t bytes) {
  return fitted_or_builtin(machine, "copy", copy_terms(bytes, machine), copy_cycles(bytes, machine));
}
inline uint64_t charged_reduce_sum_cycles(const MachineDescription& machine, uint64_t parts, uint64_t rows,
                                          uint64_t columns) {
  return fitted_or_builtin(machine, "reduce_sum", reduce_sum_terms(parts, rows, columns, machine),
                           reduce_sum_cycles(parts, rows, columns, machine));
}
inline uint64_t charged_attention_softmax_cycles(const MachineDescription& machine, uint64_t rows, uint64_t columns) {
  return fitted_or_builtin(machine, "attention_softmax", attention_softmax_terms(rows, columns, machine),
                           attention_softmax_cycles(rows, columns, machine));
}
inline uint64_t charged_attention_merge_cycles(const MachineDescription& machine, uint64_t rows, uint64_t width,
                                               uint64_t count) {
  return fitted_or_builtin(machine, "attention_merge", attention_merge_terms(rows, width, count, machine),
                           attention_merge_cycles(rows, width, count, machine));
}

}  // namespace lockstep::arch
