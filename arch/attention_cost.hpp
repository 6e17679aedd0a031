#pragma once
// What the blocked attention's vector stages cost (docs/kernels-attention.md): rows split over
// the six workers, the slowest worker's instructions at one every 6 cycles, plus one launch.
// The instruction counts of the written schedules live here so the kernels' cycle models
// (model/kernels/attention.cpp) and the lowering's key-block choice
// (workload/lower_attention.cpp) use the same figures.
#include <cstdint>
#include <vector>

namespace lockstep::arch {

struct AttentionSchedule {
  uint64_t per_pair;  // instructions per f16v2 pair of a row (and block, for the merge)
  uint64_t per_row;   // instructions per row (and block, for the merge)
};
inline constexpr AttentionSchedule kAttentionSoftmaxSchedule{12, 12};
inline constexpr AttentionSchedule kAttentionMergeSchedule{7, 12};
inline constexpr uint64_t kAttentionWorkers = 6;
inline constexpr uint64_t kAttentionLaunch = 11;

// Rounds of six rows at a worker's issue interval, each `row_instructions` long, and one
// launch; as a cost model (docs/calibration.md), parameters per pair, per row (or row and
// block) and launch against these terms.
inline uint64_t worker_rows_cycles(uint64_t rows, uint64_t row_instructions, uint64_t issue_interval) {
  return (rows + kAttentionWorkers - 1) / kAttentionWorkers * issue_interval * row_instructions + kAttentionLaunch;
}
inline std::vector<double> worker_rows_terms(uint64_t rows, uint64_t pairs, uint64_t groups, uint64_t issue_interval) {
  const auto slowest = static_cast<double>((rows + kAttentionWorkers - 1) / kAttentionWorkers * issue_interval);
  return {slowest * static_cast<double>(pairs), slowest * static_cast<double>(groups), 1.0};
}

inline uint64_t attention_softmax_cycles(uint64_t rows, uint64_t columns, uint64_t issue_interval = 6) {
  const uint64_t pairs = (columns + 1) / 2;
  return worker_rows_cycles(rows, kAttentionSoftmaxSchedule.per_pair * pairs + kAttentionSoftmaxSchedule.per_row,
                            issue_interval);
}
inline std::vector<double> attention_softmax_terms(uint64_t rows, uint64_t columns, uint64_t issue_interval = 6) {
  return worker_rows_terms(rows, (columns + 1) / 2, 1, issue_interval);
}
inline uint64_t attention_merge_cycles(uint64_t rows, uint64_t width, uint64_t count, uint64_t issue_interval = 6) {
  const uint64_t pairs = (width + 1) / 2;
  return worker_rows_cycles(
      rows, count * (kAttentionMergeSchedule.per_pair * pairs + kAttentionMergeSchedule.per_row), issue_interval);
}
inline std::vector<double> attention_merge_terms(uint64_t rows, uint64_t width, uint64_t count,
                                                 uint64_t issue_interval = 6) {
  return worker_rows_terms(rows, count * ((width + 1) / 2), count, issue_interval);
}

}  // namespace lockstep::arch
