#include "report/phase_summary.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace lockstep::replay {

std::vector<PhaseSummary> summarize_phases(const std::vector<ResultRow>& rows, const std::vector<PhaseRows>& phases,
                                           const std::vector<size_t>& reference_rows) {
  std::vector<PhaseSummary> out;
  for (size_t p = 0; p < phases.size(); ++p) {
    const ResultRow& ref = rows[reference_rows[p]];
    PhaseSummary s;
    s.phase = phases[p].phase;
    s.label = phases[p].label;
    s.execution_count = phases[p].execution_count;
    s.reference_horizon = ref.horizon;
    s.weighted_cycles = ref.horizon * phases[p].execution_count;  // both below 2^32
    s.best_horizon = ref.horizon;
    s.best_point = point_name(ref);
    bool any_pass = false;
    uint64_t bound_pass = UINT64_MAX, bound_all = UINT64_MAX;
    for (size_t index : phases[p].rows) {
      const ResultRow& r = rows[index];
      bound_all = std::min(bound_all, r.lower_bound);
      if (!r.payload_pass) continue;
      bound_pass = std::min(bound_pass, r.lower_bound);
      if (!any_pass || r.horizon < s.best_horizon) {
        s.best_horizon = r.horizon;
        s.best_point = point_name(r);
      }
      any_pass = true;
    }
    s.lower_bound = any_pass ? bound_pass : bound_all;
    s.gap = s.best_horizon > s.lower_bound ? s.best_horizon - s.lower_bound : 0;
    s.weighted_gap = s.gap * s.execution_count;
    out.push_back(s);
  }
  return out;
}

namespace {

template <typename Key>
std::vector<size_t> ranked(const std::vector<PhaseSummary>& phases, Key key) {
  std::vector<size_t> order(phases.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(phases[a]) > key(phases[b]); });
  return order;
}

}  // namespace

std::vector<size_t> rank_by_weighted_cycles(const std::vector<PhaseSummary>& phases) {
  return ranked(phases, [](const PhaseSummary& s) { return s.weighted_cycles; });
}

std::vector<size_t> rank_by_gap(const std::vector<PhaseSummary>& phases) {
  return ranked(phases, [](const PhaseSummary& s) { return std::make_tuple(s.weighted_gap, s.gap); });
}

}  // namespace lockstep::replay
