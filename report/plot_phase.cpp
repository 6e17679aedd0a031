#include "report/plot_phase.hpp"

namespace lockstep::replay {

PhasePlot make_phase_plot(const std::vector<ResultRow>& rows, const PhaseRows& phase,
                          const std::vector<bool>& on_frontier, const PointRef& reference) {
  PhasePlot plot;
  plot.title = "Phase " + std::to_string(phase.phase) + ": " + phase.label;
  plot.subtitle = "executed " + std::to_string(phase.execution_count) +
                  (phase.execution_count == 1 ? " time" : " times") + "; " + std::to_string(phase.rows.size()) +
                  " points; reference " + reference.name() +
                  " ringed; frontier over horizon, max row and total row bytes";
  plot.reference_name = reference.name();
  for (size_t index : phase.rows) {
    const ResultRow& r = rows[index];
    PlotPoint p;
    p.name = point_name(r);
    p.max_row_bytes = static_cast<double>(r.max_row_bytes);
    p.horizon = static_cast<double>(r.horizon);
    p.paired = r.width == compiler::Width::Paired64;
    p.on_frontier = on_frontier[index];
    p.passed = r.payload_pass;
    p.reference = r.config == reference.config && r.width == reference.width;
    plot.points.push_back(p);
  }
  return plot;
}

PhasePlot phase_plot(const ReportView& view, size_t p) {
  PhasePlot plot = make_phase_plot(view.rows, view.phases[p], view.on_frontier, view.comparison.reference);
  plot.lower_bound = static_cast<double>(view.summaries[p].lower_bound);
  return plot;
}

}  // namespace lockstep::replay
