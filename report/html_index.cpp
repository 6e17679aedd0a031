// index.html: where the report came from, the cycles saved per window (as cycles, as a
// share of the reference's exchange cycles and of the whole program), every phase with its
// best horizon, bound and gap, and the phases ranked by weighted cycles and by gap.
#include "report/html.hpp"
#include "report/html_parts.hpp"

namespace lockstep::replay {

namespace {

std::string or_unknown(const std::string& text) { return text.empty() ? "unknown" : text; }

std::string provenance_section(const ReportProvenance& p) {
  std::string out = "<h2 id=\"provenance\">Where this report came from</h2>\n<dl class=\"notes\">\n";
  auto item = [&](const std::string& term, const std::string& text) {
    out += "<dt>" + html_escape(term) + "</dt><dd>" + html_escape(text) + "</dd>\n";
  };
  item("capture", or_unknown(p.capture) + ", FNV-1a 64 " + or_unknown(p.capture_fnv1a64));
  item("machine", or_unknown(p.machine) + ", digest " + or_unknown(p.machine_digest));
  item("swept by", "Lockstep " + or_unknown(p.sweep_lockstep));
  item("report by", "Lockstep " + or_unknown(p.report_lockstep));
  out += "</dl>\n<p class=\"note\">The same in " + link("provenance.json", "provenance.json") +
         "; <code>lockstep compile CAPTURE --selection DIR --window ID</code> checks the capture "
         "against it.</p>\n";
  return out;
}

std::string program_note(const ReportProvenance& p) {
  if (p.program_cycles) {
    return "<p class=\"note\">Whole program: " + std::to_string(*p.program_cycles) +
           " cycles under the reference policy, as given with <code>--program-cycles</code> "
           "(recorded in provenance.json).</p>\n";
  }
  return "<p class=\"note\">Whole program: unknown. A capture holds exchanges only, so the "
         "sweep cannot know the program's compute; \"% of program\" reads n/a until "
         "<code>lockstep report DIR --program-cycles N</code> gives the whole program's cycles "
         "under the reference policy (for example the total cycles <code>lockstep run</code> "
         "prints for the model built with it).</p>\n";
}

std::string comparison_table(const ReportView& view) {
  const Comparison& c = view.comparison;
  std::string out =
      table_start() +
      header_row({"window", "phases", "reference weighted cycles", "selected weighted cycles", "weighted cycles saved",
                  "saved, % of reference exchange", "saved, % of program", "saved ms at " + clock_text(view.clock_hz)},
                 1);
  for (size_t w = 0; w < c.windows.size(); ++w) {
    const WindowSummary& s = c.summary[w];
    const auto& program = view.provenance.program_cycles;
    out += "<tr><td class=\"text\" title=\"" + html_escape(c.windows[w].name) + "\">" + html_escape(c.windows[w].id) +
           "</td>" + number_cell(s.phases) + number_cell(s.reference_weighted_cycles) +
           number_cell(s.selected_weighted_cycles) + signed_cell(s.weighted_cycles_saved) +
           number_cell(format_percent(s.weighted_cycles_saved, s.reference_weighted_cycles)) +
           number_cell(program ? format_percent(s.weighted_cycles_saved, *program) : "n/a") +
           number_cell(format_saved_ms(s.saved_ms)) + "</tr>\n";
  }
  out += table_end() + "<dl class=\"notes\">\n";
  for (const auto& w : c.windows) {
    out += "<dt>" + html_escape(w.id) + "</dt><dd>" + html_escape(w.name) + "</dd>\n";
  }
  return out + "</dl>\n";
}

std::string phase_link(uint32_t phase) { return link(phase_file(phase, "html"), std::to_string(phase)); }

std::string phases_table(const ReportView& view) {
  const Comparison& c = view.comparison;
  std::vector<std::string> names{"phase",
                                 "label",
                                 "executions",
                                 "points",
                                 "failed",
                                 "frontier points",
                                 "reference horizon",
                                 "weighted cycles|reference horizon x executions",
                                 "best horizon|smallest horizon of a passing point",
                                 "best point",
                                 "bound|lower bound: a horizon no schedule can beat",
                                 "gap|best horizon - bound"};
  for (const auto& w : c.windows) names.push_back(w.id + "|" + w.name + ": selected point (weighted cycles saved)");
  std::string out = table_start() + header_row(names, 2);
  for (size_t p = 0; p < view.phases.size(); ++p) {
    const PhaseRows& phase = view.phases[p];
    const PhaseSummary& s = view.summaries[p];
    size_t phase_failed = 0, frontier = 0;
    for (size_t index : phase.rows) {
      phase_failed += view.rows[index].payload_pass ? 0 : 1;
      frontier += view.on_frontier[index] ? 1 : 0;
    }
    out += "<tr><td class=\"text\">" + phase_link(phase.phase) + "</td>" + text_cell(phase.label) +
           number_cell(phase.execution_count) + number_cell(phase.rows.size()) + number_cell(phase_failed) +
           number_cell(frontier) + number_cell(s.reference_horizon) + number_cell(s.weighted_cycles) +
           number_cell(s.best_horizon) + text_cell(s.best_point) + number_cell(s.lower_bound) + number_cell(s.gap);
    for (size_t w = 0; w < c.windows.size(); ++w) {
      const PhaseSelection& sel = c.selection(w, p, view.phases.size());
      out += "<td class=\"wrap\">" +
             html_escape(point_name(view.rows[sel.selected_row]) + " (" + std::to_string(sel.weighted_cycles_saved) +
                         ")") +
             "</td>";
    }
    out += "</tr>\n";
  }
  return out + table_end();
}

std::string weighted_ranking(const ReportView& view) {
  uint64_t total = 0;
  for (const auto& s : view.summaries) total += s.weighted_cycles;
  std::string out = table_start() + header_row({"rank", "phase", "label", "executions", "weighted cycles",
                                                "% of reference exchange", "cumulative %"},
                                               3);
  uint64_t cumulative = 0;
  size_t rank = 0;
  for (size_t index : rank_by_weighted_cycles(view.summaries)) {
    const PhaseSummary& s = view.summaries[index];
    cumulative += s.weighted_cycles;
    out += "<tr>" + text_cell(std::to_string(++rank)) + "<td class=\"text\">" + phase_link(s.phase) + "</td>" +
           text_cell(s.label) + number_cell(s.execution_count) + number_cell(s.weighted_cycles) +
           number_cell(format_percent(static_cast<int64_t>(s.weighted_cycles), total)) +
           number_cell(format_percent(static_cast<int64_t>(cumulative), total)) + "</tr>\n";
  }
  return out + table_end();
}

std::string gap_ranking(const ReportView& view) {
  std::string out = table_start() + header_row({"rank", "phase", "label", "best horizon", "bound", "gap", "executions",
                                                "weighted gap|gap x executions"},
                                               3);
  size_t rank = 0;
  for (size_t index : rank_by_gap(view.summaries)) {
    const PhaseSummary& s = view.summaries[index];
    out += "<tr>" + text_cell(std::to_string(++rank)) + "<td class=\"text\">" + phase_link(s.phase) + "</td>" +
           text_cell(s.label) + number_cell(s.best_horizon) + number_cell(s.lower_bound) + number_cell(s.gap) +
           number_cell(s.execution_count) + number_cell(s.weighted_gap) + "</tr>\n";
  }
  return out + table_end();
}

}  // namespace

std::string index_html(const ReportView& view) {
  const Comparison& c = view.comparison;
  size_t failed = 0;
  for (const auto& r : view.rows) failed += r.payload_pass ? 0 : 1;
  std::string out = page_head("Exchange frontier report");
  out += "<h1>Exchange frontier report</h1>\n";
  out += "<p>" + std::to_string(view.phases.size()) + " phases, " + std::to_string(view.rows.size()) + " points, " +
         std::to_string(failed) + " failed their payload check. Reference policy: " + html_escape(c.reference.name()) +
         " (" + width_name(c.reference.width) + "). Clock: " + clock_text(view.clock_hz) + ".</p>\n";
  out += "<p>Data: " + link("results.csv", "results.csv") + " &middot; " + link("frontier.csv", "frontier.csv") +
         " &middot; " + link("comparisons.csv", "comparisons.csv") + " &middot; " +
         link("comparisons_by_phase.csv", "comparisons_by_phase.csv") + " &middot; " +
         link("provenance.json", "provenance.json") + "</p>\n";
  if (view.has_profile_timeline) {
    out += "<p>The whole program's cycle profile: " + link("profile.html", "timeline") +
           " (per-tile lanes, phase bands; <code>lockstep profile render</code>, docs/profiles.md).</p>\n";
  }

  out += "<h2 id=\"comparisons\">Cycles saved against " + html_escape(c.reference.name()) + "</h2>\n";
  out +=
      "<p class=\"note\">Per phase, each window selects the passing point with the smallest "
      "horizon among those within its storage limit; a point that only ties the reference's "
      "horizon never replaces it, so the selection keeps the reference configuration unless "
      "it saves cycles. Weighted cycles are horizon &times; execution count, summed over "
      "phases; the reference's sum is its exchange cycles, the base of \"% of reference "
      "exchange\". Horizons are scheduled cycles after the barrier and row sizes are "
      "isolated per phase, so these sums are estimates, not a runtime or package-fit "
      "guarantee: <code>lockstep compile CAPTURE --selection DIR --window ID</code> builds "
      "and measures a window's selection.</p>\n";
  out += comparison_table(view) + program_note(view.provenance);

  out +=
      "<h2 id=\"phases\">Phases</h2>\n<p class=\"note\">Under each window's id: the point "
      "it selects for the phase and, in brackets, the weighted cycles that saves.</p>\n" +
      phases_table(view);
  out +=
      "<h2 id=\"by-weight\">Phases by weighted cycles</h2>\n<p class=\"note\">Where the "
      "reference spends its exchange cycles, largest first.</p>\n" +
      weighted_ranking(view);
  out +=
      "<h2 id=\"by-gap\">Phases by gap</h2>\n<p class=\"note\">How much is left to win: "
      "the best horizon any passing point reached minus the lower bound, weighted by "
      "executions, largest first.</p>\n" +
      gap_ranking(view);
  out += provenance_section(view.provenance);
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace lockstep::replay
