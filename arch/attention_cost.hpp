#pragma once
// What the blocked attention's vector stages cost (docs/kernels-attention.md): rows split over
// the machine's workers, the slowest worker's instructions at the issue interval, plus one
// launch. The instruction counts of the written schedules live here so the kernels' cycle
// models (model/kernels/attention.cpp) and the lowering's key-block choice
// (workload/lower_attention.cpp) use the same figures.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "arch/machine.hpp"

namespace lockstep::arch {

inline constexpr uint64_t kKernelLaunchCycles = 11;  // a worker launch (IPU21-KERNELS.md 11.1)

struct AttentionSchedule {
  uint64_t per_unit;  // instructions per unit of a row: an f16v2 pair (softmax), a 64-bit quad
                      // of four values (merge, per block)
  uint64_t per_row;   // instructions per row (and block, for the merge)
};
inline constexpr AttentionSchedule kAttentionSoftmaxSchedule{10, 17};
inline constexpr AttentionSchedule kAttentionMergeSchedule{13, 12};

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
  return slowest_worker_cycles(rows, m) * (s.per_unit * ((columns + 1) / 2) + s.per_row) + kKernelLaunchCycles;
}
inline std::vector<double> attention_softmax_terms(uint64_t rows, uint64_t columns, const MachineDescription& m) {
  return worker_rows_terms(rows, (columns + 1) / 2, 1, m);
}
// The merge's work split: each row's 64-bit quads (four values) in `parts` equal runs, rows x
// parts units round-robin over the workers (unit i on worker i mod workers), each unit redoing
// its row's per-block state; parts (1 to the workers) is the fewest that gives the shortest
// slowest worker. A group's share of merged rows is often a little over the six workers
// (SigLIP: 8 or 9), where whole rows leave workers idle for a second round.
struct MergeSplit {
  uint64_t parts;           // runs of a row's quads
  uint64_t quads_per_part;  // the longest run
  uint64_t slowest;         // the slowest worker's cycles per instruction of one unit
};
inline MergeSplit attention_merge_split(uint64_t rows, uint64_t width, const MachineDescription& m) {
  const AttentionSchedule& s = kAttentionMergeSchedule;
  const uint64_t quads = (width + 3) / 4;
  MergeSplit best{1, quads, slowest_worker_cycles(rows, m)};
  for (uint64_t parts = 2; parts <= std::min<uint64_t>(quads, m.workers); ++parts) {
    const MergeSplit split{parts, (quads + parts - 1) / parts, slowest_worker_cycles(rows * parts, m)};
    if (split.slowest * (s.per_unit * split.quads_per_part + s.per_row) <
        best.slowest * (s.per_unit * best.quads_per_part + s.per_row)) {
      best = split;
    }
  }
  return best;
}
inline uint64_t attention_merge_cycles(uint64_t rows, uint64_t width, uint64_t count, const MachineDescription& m) {
  const AttentionSchedule& s = kAttentionMergeSchedule;
  const MergeSplit split = attention_merge_split(rows, width, m);
  return split.slowest * count * (s.per_unit * split.quads_per_part + s.per_row) + kKernelLaunchCycles;
}
inline std::vector<double> attention_merge_terms(uint64_t rows, uint64_t width, uint64_t count,
                                                 const MachineDescription& m) {
  const MergeSplit split = attention_merge_split(rows, width, m);
  const auto unit = static_cast<double>(split.slowest * count);
  return {unit * static_cast<double>(split.quads_per_part), unit, 1.0};
}

}  // namespace lockstep::arch
