#pragma once
// Everything a report page or plot is drawn from, computed once by write_report.
#include <vector>

#include "report/comparison.hpp"
#include "report/phase_summary.hpp"
#include "results/provenance.hpp"
#include "results/results.hpp"

namespace lockstep::replay {

struct ReportView {
  const std::vector<ResultRow>& rows;
  const std::vector<PhaseRows>& phases;
  const std::vector<bool>& on_frontier;  // per row
  const Comparison& comparison;
  double clock_hz;
  const std::vector<PhaseSummary>& summaries;  // per phase, as `phases`
  const ReportProvenance& provenance;
  // A timeline of the whole program beside the report (`make demo` writes profile.html
  // there with `lockstep profile render`): the index links to it when it exists.
  bool has_profile_timeline = false;
};

}  // namespace lockstep::replay
