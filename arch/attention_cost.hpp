#pragma once
// What the blocked attention's vector stages cost (docs/kernels-attention.md): rows split over
// the machine's workers, the slowest worker's instructions at the issue interval, plus one
// launch. The instruction counts of the written schedules live here so the kernels' cycle
// models (model/kernels/attention.cpp) and the lowering's key-block choice
// (workload/lower_attention.cpp) use the same figures.
#include <cstdint>
#include <vector>

#include "arch/machine.hpp"

namespace lockstep::arch {

inline constexpr uint64_t kKernelLaunchCycles = 11;  // a worker launch (IPU21-KERNELS.md 11.1)

struct AttentionSchedule {
  uint64_t per_pair;  // instructions per f16v2 pair of a row (and block, for the merge)
  uint64_t per_row;   // instructions per row (and block, for the merge)
};
inline constexpr AttentionSchedule kAttentionSoftmaxSchedule{12, 12};
inline constexpr AttentionSchedule kAttentionMergeSchedule{7, 12};

// The slowest worker's cycles per instruction of one of its rows: its rounds of rows (row i
// on worker i mod workers) at the issue interval.
inline uint64_t slowest_worker_cycles(uint64_t rows, const MachineDescription& m) {
  return (rows + m.workers - 1) / m.workers * m.supervisor_cycles_per_instruction;
}
// As a cost model (docs/calibration.md): parameters per pair, per row (or row and block) and
// launch against these terms.
inline std::vector<double> worker_rows_terms(uint64_t rows, uint64_t pairs, uint64_t groups,
                                             const MachineDescription& m) {
  const auto slowest = static_cast<double>(slowest_worker_cycles(rows, m));
  return {slowest * static_cast<double>(pairs), slowest * static_cast<double>(groups), 1.0};
}

inline uint64_t attention_softmax_cycles(uint64_t rows, uint64_t columns, const MachineDescription& m) {
  const AttentionSchedule& s = kAttentionSoftmaxSchedule;
  return slowest_worker_cycles(rows, m) * (s.per_pair * ((columns + 1) / 2) + s.per_row) + kKernelLaunchCycles;
}
inline std::vector<double> attention_softmax_terms(uint64_t rows, uint64_t columns, const MachineDescription& m) {
  return worker_rows_terms(rows, (columns + 1) / 2, 1, m);
}
inline uint64_t attention_merge_cycles(uint64_t rows, uint64_t width, uint64_t count, const MachineDescription& m) {
  const AttentionSchedule& s = kAttentionMergeSchedule;
  return slowest_worker_cycles(rows, m) * count * (s.per_pair * ((width + 1) / 2) + s.per_row) + kKernelLaunchCycles;
}
inline std::vector<double> attention_merge_terms(uint64_t rows, uint64_t width, uint64_t count,
                                                 const MachineDescription& m) {
  return worker_rows_terms(rows, count * ((width + 1) / 2), count, m);
}

}  // namespace lockstep::arch
