#pragma once
// Per phase, the figures that say where the cycles are and how much is left to win: the
// reference's weighted cycles, the best horizon any passing point reached, the lower
// bound and the gap between them; and the two rankings of the report's index.
#include <cstdint>
#include <string>
#include <vector>

#include "results/results.hpp"
#include "results/sweep_definition.hpp"

namespace lockstep::replay {

struct PhaseSummary {
  uint32_t phase = 0;
  std::string label;
  uint64_t execution_count = 1;
  uint64_t reference_horizon = 0;
  uint64_t weighted_cycles = 0;  // reference horizon x execution count
  uint64_t best_horizon = 0;     // smallest horizon of a passing point (the reference's if none)
  std::string best_point;        // its name (B256p); the first in results order on a tie
  // The smallest lower bound of the phase's passing points (all points when none passed):
  // the bound differs by width, and the smaller one holds for every point.
  uint64_t lower_bound = 0;
  uint64_t gap = 0;           // best horizon - lower bound (0 if the bound is reached)
  uint64_t weighted_gap = 0;  // gap x execution count
};

// One summary per phase, in phase order. `reference_rows[p]` is the reference row of phases[p].
std::vector<PhaseSummary> summarize_phases(const std::vector<ResultRow>& rows, const std::vector<PhaseRows>& phases,
                                           const std::vector<size_t>& reference_rows);

// Indices into the summaries: by weighted cycles (largest first), and by weighted gap
// (largest first, then raw gap); equal keys keep phase order.
std::vector<size_t> rank_by_weighted_cycles(const std::vector<PhaseSummary>& phases);
std::vector<size_t> rank_by_gap(const std::vector<PhaseSummary>& phases);

}  // namespace lockstep::replay
