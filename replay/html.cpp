#include "replay/html.hpp"

#include <cstdio>

namespace lockstep::replay {

namespace {

const char* const kStyle =
    "body{font-family:'DejaVu Sans',Arial,sans-serif;margin:2em;color:#1a1a1f;max-width:1200px}"
    "table{border-collapse:collapse;margin:0.5em 0 1.5em}"
    "th,td{border:1px solid #ccd;padding:3px 8px;text-align:right}"
    "th{background:#eef1f5}td.text,th.text{text-align:left}"
    "tr.reference td{font-weight:bold}tr.failed td{color:#c01f1f}"
    "p.note{color:#555;max-width:60em}img{border:1px solid #ccd}";

std::string head(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
         html_escape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
}

std::string cell(const std::string& text, bool is_text = false) {
  return std::string(is_text ? "<td class=\"text\">" : "<td>") + html_escape(text) + "</td>";
}
std::string cell(uint64_t value) { return cell(std::to_string(value)); }
std::string signed_cell(int64_t value) { return cell(std::to_string(value)); }

std::string header_row(const std::vector<std::string>& names, size_t text_columns) {
  std::string out = "<tr>";
  for (size_t i = 0; i < names.size(); ++i) {
    out += std::string(i < text_columns ? "<th class=\"text\">" : "<th>") + html_escape(names[i]) +
           "</th>";
  }
  return out + "</tr>\n";
}

std::string link(const std::string& href, const std::string& text) {
  return "<a href=\"" + html_escape(href) + "\">" + html_escape(text) + "</a>";
}

std::string clock_text(double clock_hz) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g GHz", clock_hz / 1e9);
  return buffer;
}

bool is_reference(const ResultRow& row, const PointRef& reference) {
  return row.config == reference.config && row.width == reference.width;
}

const PhaseSelection& selection(const Comparison& c, size_t window, size_t phase_index,
                                size_t phase_count) {
  return c.by_phase[window * phase_count + phase_index];
}

std::string comparison_table(const ReportView& view) {
  const Comparison& c = view.comparison;
  std::string out = "<table>\n" +
                    header_row({"window", "phases", "reference weighted cycles",
                                "selected weighted cycles", "weighted cycles saved",
                                "saved ms at " + clock_text(view.clock_hz)},
                               1);
  for (size_t w = 0; w < c.windows.size(); ++w) {
    const WindowSummary& s = c.summary[w];
    out += "<tr>" + cell(c.windows[w].name, true) + cell(s.phases) +
           cell(s.reference_weighted_cycles) + cell(s.selected_weighted_cycles) +
           signed_cell(s.weighted_cycles_saved) + cell(format_saved_ms(s.saved_ms)) + "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string phase_file(uint32_t phase, const std::string& extension) {
  return "phase-" + std::to_string(phase) + "." + extension;
}

std::string index_html(const ReportView& view) {
  const Comparison& c = view.comparison;
  size_t failed = 0;
  for (const auto& r : view.rows) failed += r.payload_pass ? 0 : 1;
  std::string out = head("Exchange frontier report");
  out += "<h1>Exchange frontier report</h1>\n";
  out += "<p>" + std::to_string(view.phases.size()) + " phases, " +
         std::to_string(view.rows.size()) + " points, " + std::to_string(failed) +
         " failed their payload check. Reference policy: " + html_escape(c.reference.name()) +
         " (" + width_name(c.reference.width) + "). Clock: " + clock_text(view.clock_hz) +
         ".</p>\n";
  out += "<p>Data: " + link("results.csv", "results.csv") + " &middot; " +
         link("frontier.csv", "frontier.csv") + " &middot; " +
         link("comparisons.csv", "comparisons.csv") + " &middot; " +
         link("comparisons_by_phase.csv", "comparisons_by_phase.csv") + "</p>\n";

  out += "<h2 id=\"comparisons\">Cycles saved against " + html_escape(c.reference.name()) +
         "</h2>\n";
  out += "<p class=\"note\">Per phase, each window selects the passing point with the smallest "
         "horizon among those within its storage limit (the reference itself always "
         "qualifies); weighted cycles are horizon &times; execution count, summed over "
         "phases. Horizons are scheduled cycles after the barrier, not whole-program "
         "time, and row sizes are isolated per phase, so these sums are not a runtime or "
         "package-fit guarantee.</p>\n";
  out += comparison_table(view);

  out += "<h2 id=\"phases\">Phases</h2>\n<table>\n";
  std::vector<std::string> names{"phase", "label", "executions", "points", "failed",
                                 "frontier points", "reference horizon"};
  for (const auto& w : c.windows) names.push_back(w.name + ": selected (weighted cycles saved)");
  out += header_row(names, 2);
  for (size_t p = 0; p < view.phases.size(); ++p) {
    const PhaseRows& phase = view.phases[p];
    size_t phase_failed = 0, frontier = 0;
    for (size_t index : phase.rows) {
      phase_failed += view.rows[index].payload_pass ? 0 : 1;
      frontier += view.on_frontier[index] ? 1 : 0;
    }
    const ResultRow& ref = view.rows[selection(c, 0, p, view.phases.size()).reference_row];
    out += "<tr><td class=\"text\">" +
           link(phase_file(phase.phase, "html"), std::to_string(phase.phase)) + "</td>" +
           cell(phase.label, true) + cell(phase.execution_count) + cell(phase.rows.size()) +
           cell(phase_failed) + cell(frontier) + cell(ref.horizon);
    for (size_t w = 0; w < c.windows.size(); ++w) {
      const PhaseSelection& s = selection(c, w, p, view.phases.size());
      out += cell(point_name(view.rows[s.selected_row]) + " (" +
                  std::to_string(s.weighted_cycles_saved) + ")");
    }
    out += "</tr>\n";
  }
  out += "</table>\n</body>\n</html>\n";
  return out;
}

std::string phase_html(const ReportView& view, size_t p) {
  const PhaseRows& phase = view.phases[p];
  const Comparison& c = view.comparison;
  const std::string title = "Phase " + std::to_string(phase.phase) + ": " + phase.label;
  std::string out = head(title);
  out += "<h1>" + html_escape(title) + "</h1>\n<p>Executed " +
         std::to_string(phase.execution_count) + (phase.execution_count == 1 ? " time" : " times") +
         ". " + link("index.html", "All phases");
  if (p > 0) {
    out += " &middot; " + link(phase_file(view.phases[p - 1].phase, "html"),
                               "previous: phase " + std::to_string(view.phases[p - 1].phase));
  }
  if (p + 1 < view.phases.size()) {
    out += " &middot; " + link(phase_file(view.phases[p + 1].phase, "html"),
                               "next: phase " + std::to_string(view.phases[p + 1].phase));
  }
  out += "</p>\n";
  out += "<p><img src=\"" + phase_file(phase.phase, "svg") +
         "\" width=\"900\" height=\"600\" alt=\"horizon against max row bytes, phase " +
         std::to_string(phase.phase) + "\"></p>\n";
  out += "<p>Plot as " + link(phase_file(phase.phase, "svg"), "SVG") + ", " +
         link(phase_file(phase.phase, "png"), "PNG") + ", " +
         link(phase_file(phase.phase, "pdf"), "PDF") +
         ". Circles are word32 points, triangles (name + p) paired64; filled markers are on "
         "the frontier (Pareto-optimal over horizon, max row and total row bytes, so a point "
         "can look dominated in this two-metric view and still be on it); red ones failed "
         "their payload check; the black ring is the reference " +
         html_escape(c.reference.name()) + ".</p>\n";

  out += "<h2>Selections</h2>\n<table>\n" +
         header_row({"window", "selected", "horizon", "max_row_bytes", "total_row_bytes",
                     "weighted cycles saved"},
                    2);
  for (size_t w = 0; w < c.windows.size(); ++w) {
    const PhaseSelection& s = selection(c, w, p, view.phases.size());
    const ResultRow& r = view.rows[s.selected_row];
    out += "<tr>" + cell(c.windows[w].name, true) + cell(point_name(r), true) + cell(r.horizon) +
           cell(r.max_row_bytes) + cell(r.total_row_bytes) +
           signed_cell(s.weighted_cycles_saved) + "</tr>\n";
  }
  out += "</table>\n";

  out += "<h2>Points</h2>\n<table>\n" +
         header_row({"phase", "label", "execution_count", "config", "width", "name", "horizon",
                     "lower_bound", "max_row_bytes", "total_row_bytes", "table_bytes_shared",
                     "table_bytes_unshared", "patch_calls", "patch_words", "payload",
                     "frontier", "reference"},
                    6);
  for (size_t index : phase.rows) {
    const ResultRow& r = view.rows[index];
    const bool ref = is_reference(r, c.reference);
    const std::string cls = !r.payload_pass ? " class=\"failed\"" : (ref ? " class=\"reference\"" : "");
    out += "<tr" + cls + ">" + cell(std::to_string(r.phase), true) + cell(r.label, true) +
           cell(std::to_string(r.execution_count), true) + cell(r.config, true) +
           cell(width_name(r.width), true) + cell(point_name(r), true) + cell(r.horizon) +
           cell(r.lower_bound) + cell(r.max_row_bytes) + cell(r.total_row_bytes) +
           cell(r.table_bytes_shared) + cell(r.table_bytes_unshared) + cell(r.patch_calls) +
           cell(r.patch_words) + cell(r.payload_pass ? "pass" : "fail") +
           cell(view.on_frontier[index] ? "yes" : "") + cell(ref ? "yes" : "") + "</tr>\n";
  }
  out += "</table>\n</body>\n</html>\n";
  return out;
}

}  // namespace lockstep::replay
