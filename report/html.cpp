#include "report/html.hpp"

#include "report/html_parts.hpp"
#include "report/plot_groups.hpp"
#include "report/plot_phase.hpp"

namespace lockstep::replay {

namespace {

bool is_reference(const ResultRow& row, const PointRef& reference) {
  return row.config == reference.config && row.width == reference.width;
}

std::string navigation(const ReportView& view, size_t p) {
  std::string out = link("index.html", "All phases");
  if (p > 0) {
    out += " &middot; " + link(phase_file(view.phases[p - 1].phase, "html"),
                               "previous: phase " + std::to_string(view.phases[p - 1].phase));
  }
  if (p + 1 < view.phases.size()) {
    out += " &middot; " + link(phase_file(view.phases[p + 1].phase, "html"),
                               "next: phase " + std::to_string(view.phases[p + 1].phase));
  }
  return out;
}

// The plot, how to read it, and the full lists behind its shortened labels.
std::string plot_section(const ReportView& view, size_t p) {
  const uint32_t id = view.phases[p].phase;
  const PhaseSummary& s = view.summaries[p];
  std::string out = "<p><img src=\"" + phase_file(id, "svg") +
                    "\" width=\"900\" height=\"600\" alt=\"horizon against max row bytes, phase " + std::to_string(id) +
                    "\"></p>\n";
  const PlotGroups groups = group_points(phase_plot(view, p).points);
  if (!groups.footnotes.empty()) {
    out += "<p class=\"note\">Labels shortened in the plot:</p>\n<ol class=\"notes\">\n";
    for (const Footnote& f : groups.footnotes) out += "<li>" + html_escape(f.text) + "</li>\n";
    out += "</ol>\n";
  }
  out += "<p>Plot as " + link(phase_file(id, "svg"), "SVG") + ", " + link(phase_file(id, "png"), "PNG") + ", " +
         link(phase_file(id, "pdf"), "PDF") +
         ". Circles are word32 points, triangles (name + p) paired64; filled markers are on "
         "the frontier (Pareto-optimal over horizon, max row and total row bytes, so a point "
         "can look dominated in this two-metric view and still be on it); red ones failed "
         "their payload check; the black ring is the reference " +
         html_escape(view.comparison.reference.name()) +
         "; the dashed green line is the lower bound. Points at one spot share a label; a "
         "label of more than two names is shortened to \"first +N [k]\" with the list above.</p>\n";
  out += "<p>Best horizon " + std::to_string(s.best_horizon) + " (" + html_escape(s.best_point) + "), lower bound " +
         std::to_string(s.lower_bound) + ", gap " + std::to_string(s.gap) + " cycles (" +
         std::to_string(s.weighted_gap) + " weighted by executions).</p>\n";
  return out;
}

std::string selections_table(const ReportView& view, size_t p) {
  const Comparison& c = view.comparison;
  std::string out =
      "<h2>Selections</h2>\n" + table_start() +
      header_row({"window", "selected", "horizon", "max_row_bytes", "total_row_bytes", "weighted cycles saved"}, 2);
  for (size_t w = 0; w < c.windows.size(); ++w) {
    const PhaseSelection& s = c.selection(w, p, view.phases.size());
    const ResultRow& r = view.rows[s.selected_row];
    out += "<tr><td class=\"text\" title=\"" + html_escape(c.windows[w].name) + "\">" + html_escape(c.windows[w].id) +
           "</td>" + text_cell(point_name(r)) + number_cell(r.horizon) + number_cell(r.max_row_bytes) +
           number_cell(r.total_row_bytes) + signed_cell(s.weighted_cycles_saved) + "</tr>\n";
  }
  return out + table_end();
}

std::string points_table(const ReportView& view, size_t p) {
  const Comparison& c = view.comparison;
  std::string out =
      "<h2>Points</h2>\n" + table_start() +
      header_row({"phase", "label", "execution_count", "config", "width", "name", "horizon", "lower_bound",
                  "max_row_bytes", "total_row_bytes", "table_bytes_shared", "table_bytes_unshared", "patch_calls",
                  "patch_words", "payload", "frontier", "reference"},
                 6);
  for (size_t index : view.phases[p].rows) {
    const ResultRow& r = view.rows[index];
    const bool ref = is_reference(r, c.reference);
    const std::string cls = !r.payload_pass ? " class=\"failed\"" : (ref ? " class=\"reference\"" : "");
    out += "<tr" + cls + ">" + text_cell(std::to_string(r.phase)) + text_cell(r.label) +
           text_cell(std::to_string(r.execution_count)) + text_cell(r.config) + text_cell(width_name(r.width)) +
           text_cell(point_name(r)) + number_cell(r.horizon) + number_cell(r.lower_bound) +
           number_cell(r.max_row_bytes) + number_cell(r.total_row_bytes) + number_cell(r.table_bytes_shared) +
           number_cell(r.table_bytes_unshared) + number_cell(r.patch_calls) + number_cell(r.patch_words) +
           number_cell(r.payload_pass ? "pass" : "fail") + number_cell(view.on_frontier[index] ? "yes" : "") +
           number_cell(ref ? "yes" : "") + "</tr>\n";
  }
  return out + table_end();
}

}  // namespace

std::string phase_file(uint32_t phase, const std::string& extension) {
  return "phase-" + std::to_string(phase) + "." + extension;
}

std::string phase_html(const ReportView& view, size_t p) {
  const PhaseRows& phase = view.phases[p];
  const std::string title = "Phase " + std::to_string(phase.phase) + ": " + phase.label;
  std::string out = page_head(title);
  out += "<h1>" + html_escape(title) + "</h1>\n<p>Executed " + std::to_string(phase.execution_count) +
         (phase.execution_count == 1 ? " time" : " times") + ". " + navigation(view, p) + "</p>\n";
  out += plot_section(view, p) + selections_table(view, p) + points_table(view, p);
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace lockstep::replay
