#include "report/report.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "io/report_files.hpp"
#include "report/comparison.hpp"
#include "report/frontier.hpp"
#include "report/html.hpp"
#include "report/phase_summary.hpp"
#include "report/plot_phase.hpp"

namespace lockstep::replay {

void write_report(const std::vector<ResultRow>& rows, const SweepDefinition& sweep, double clock_hz,
                  const std::string& dir, const ReportProvenance& provenance) {
  if (!(clock_hz > 0)) throw InputError("clock_hz: must be positive");
  const std::vector<size_t> frontier = frontier_points(rows);
  std::vector<bool> on_frontier(rows.size(), false);
  for (size_t index : frontier) on_frontier[index] = true;
  const Comparison comparison = compare_to_reference(rows, sweep.reference, comparison_windows(sweep), clock_hz);
  const std::vector<PhaseRows> phases = group_by_phase(rows);
  std::vector<size_t> reference_rows;
  for (size_t p = 0; p < phases.size(); ++p) {
    reference_rows.push_back(comparison.by_phase[p].reference_row);  // window 0, phase p
  }
  const std::vector<PhaseSummary> summaries = summarize_phases(rows, phases, reference_rows);

  std::error_code ec;
  std::filesystem::create_directory(dir, ec);  // the folder above exists (checked)
  if (ec) throw InputError(dir + ": cannot create the report directory: " + ec.message());

  arch::write_file_atomically(join_path(dir, "frontier.csv"), frontier_csv_text(rows, frontier));
  arch::write_file_atomically(join_path(dir, "comparisons.csv"),
                              comparisons_csv_text(comparison, provenance.program_cycles));
  arch::write_file_atomically(join_path(dir, "comparisons_by_phase.csv"),
                              comparisons_by_phase_csv_text(rows, comparison));
  arch::write_file_atomically(join_path(dir, kProvenanceFile), provenance_json_text(provenance));
  const bool timeline = std::filesystem::is_regular_file(join_path(dir, "profile.html"));
  const ReportView view{rows, phases, on_frontier, comparison, clock_hz, summaries, provenance, timeline};
  for (size_t p = 0; p < phases.size(); ++p) {
    const uint32_t id = phases[p].phase;
    const PlotFiles plot = render_phase_plot(phase_plot(view, p));
    arch::write_file_atomically(join_path(dir, phase_file(id, "svg")), plot.svg);
    arch::write_file_atomically(join_path(dir, phase_file(id, "png")), plot.png);
    arch::write_file_atomically(join_path(dir, phase_file(id, "pdf")), plot.pdf);
    arch::write_file_atomically(join_path(dir, phase_file(id, "html")), phase_html(view, p));
    spdlog::debug("report: phase {} written", id);
  }
  // The index last: once it exists, everything it links to does too.
  arch::write_file_atomically(join_path(dir, "index.html"), index_html(view));
}

std::vector<std::string> report_file_names(const std::vector<ResultRow>& rows) {
  std::vector<std::string> names{"frontier.csv", "comparisons.csv", "comparisons_by_phase.csv", kProvenanceFile};
  for (const auto& phase : group_by_phase(rows)) {
    for (const char* ext : {"svg", "png", "pdf", "html"}) names.push_back(phase_file(phase.phase, ext));
  }
  names.push_back("index.html");
  return names;
}

}  // namespace lockstep::replay
