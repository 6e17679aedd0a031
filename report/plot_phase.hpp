#pragma once
// Turning one phase's results rows into the data of its frontier plot.
#include <vector>

#include "report/plot.hpp"
#include "report/report_view.hpp"
#include "results/results.hpp"
#include "results/sweep_definition.hpp"

namespace lockstep::replay {

// `on_frontier[i]` says whether rows[i] is a frontier point.
PhasePlot make_phase_plot(const std::vector<ResultRow>& rows, const PhaseRows& phase,
                          const std::vector<bool>& on_frontier, const PointRef& reference);

// The plot of view.phases[p], with the phase's lower bound.
PhasePlot phase_plot(const ReportView& view, size_t p);

}  // namespace lockstep::replay
