#include "report/comparison.hpp"

#include <cstdio>
#include <tuple>

#include "io/csv.hpp"
#include "io/errors.hpp"

namespace lockstep::replay {

namespace {

bool within(const ComparisonWindow& window, const ResultRow& point, const ResultRow& reference) {
  if (!window.max_row_growth_bytes) {
    return point.max_row_bytes <= reference.max_row_bytes && point.total_row_bytes <= reference.total_row_bytes;
  }
  return point.max_row_bytes <= reference.max_row_bytes + *window.max_row_growth_bytes;
}

// Strict "better" order of the selection; results order breaks the remaining ties
// because candidates are visited in results order and only a strictly better one wins.
bool better(const ResultRow& a, const ResultRow& b) {
  return std::tie(a.horizon, a.max_row_bytes, a.total_row_bytes) <
         std::tie(b.horizon, b.max_row_bytes, b.total_row_bytes);
}

size_t find_reference(const std::vector<ResultRow>& rows, const PhaseRows& phase, const PointRef& reference,
                      const std::string& source) {
  for (size_t index : phase.rows) {
    if (rows[index].config == reference.config && rows[index].width == reference.width) {
      return index;
    }
  }
  throw InputError(source + ": phase " + std::to_string(phase.phase) + " (" + phase.label +
                   "): no row for the reference policy " + reference.config + " " + width_name(reference.width));
}

// Weighted cycles stay exact in int64: a product or sum past 2^63 - 1 is refused.
[[noreturn]] void overflow(const std::string& source, uint32_t phase) {
  throw InputError(source + ": phase " + std::to_string(phase) +
                   ": weighted cycles (horizon x execution count, summed over phases) overflow 63 bits; "
                   "the results are not plausible");
}

int64_t weighted(uint64_t horizon, int64_t count, const std::string& source, uint32_t phase) {
  int64_t product = 0;
  if (__builtin_mul_overflow(horizon, count, &product)) overflow(source, phase);
  return product;
}

int64_t sum(int64_t a, int64_t b, const std::string& source, uint32_t phase) {
  int64_t total = 0;
  if (__builtin_add_overflow(a, b, &total)) overflow(source, phase);
  return total;
}

}  // namespace

std::vector<ComparisonWindow> comparison_windows(const SweepDefinition& sweep) {
  std::vector<ComparisonWindow> windows{{"neither storage metric grows", "same-storage", std::nullopt}};
  for (uint64_t k : sweep.max_row_growth_bytes) {
    windows.push_back({"max row grows by at most " + std::to_string(k) + " bytes", "row+" + std::to_string(k), k});
  }
  return windows;
}

Comparison compare_to_reference(const std::vector<ResultRow>& rows, const PointRef& reference,
                                const std::vector<ComparisonWindow>& windows, double clock_hz,
                                const std::string& source) {
  Comparison comparison;
  comparison.reference = reference;
  comparison.windows = windows;
  const auto phases = group_by_phase(rows);
  std::vector<size_t> reference_rows;
  for (const auto& phase : phases) {
    reference_rows.push_back(find_reference(rows, phase, reference, source));
  }
  for (size_t w = 0; w < windows.size(); ++w) {
    WindowSummary summary;
    for (size_t p = 0; p < phases.size(); ++p) {
      const ResultRow& ref = rows[reference_rows[p]];
      size_t selected = reference_rows[p];
      for (size_t index : phases[p].rows) {
        const ResultRow& point = rows[index];
        if (index == reference_rows[p] || !point.payload_pass) continue;
        if (!within(windows[w], point, ref)) continue;
        // A tie is not a saving: only a strictly shorter horizon displaces the reference.
        if (point.horizon >= ref.horizon) continue;
        const ResultRow& best = rows[selected];
        // The reference holds its place in results order for the final tie-break.
        const bool wins = better(point, best) || (!better(best, point) && index < selected);
        if (wins) selected = index;
      }
      const int64_t count = phases[p].execution_count;
      const uint32_t id = phases[p].phase;
      const int64_t ref_weighted = weighted(ref.horizon, count, source, id);
      const int64_t sel_weighted = weighted(rows[selected].horizon, count, source, id);
      PhaseSelection selection;
      selection.window = w;
      selection.phase = phases[p].phase;
      selection.reference_row = reference_rows[p];
      selection.selected_row = selected;
      selection.weighted_cycles_saved = ref_weighted - sel_weighted;  // both non-negative: exact
      comparison.by_phase.push_back(selection);
      summary.phases += 1;
      summary.reference_weighted_cycles =
          static_cast<uint64_t>(sum(static_cast<int64_t>(summary.reference_weighted_cycles), ref_weighted, source, id));
      summary.selected_weighted_cycles =
          static_cast<uint64_t>(sum(static_cast<int64_t>(summary.selected_weighted_cycles), sel_weighted, source, id));
      summary.weighted_cycles_saved = sum(summary.weighted_cycles_saved, selection.weighted_cycles_saved, source, id);
    }
    summary.saved_ms = static_cast<double>(summary.weighted_cycles_saved) / clock_hz * 1e3;
    comparison.summary.push_back(summary);
  }
  return comparison;
}

std::string format_saved_ms(double ms) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6f", ms);
  return buffer;
}

std::string format_percent(int64_t part, uint64_t whole) {
  if (whole == 0) return "n/a";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buffer;
}

std::string comparisons_csv_text(const Comparison& comparison, std::optional<uint64_t> program_cycles) {
  std::string out =
      "window,phases,reference_weighted_cycles,selected_weighted_cycles,weighted_cycles_saved,"
      "saved_ms,window_id,saved_percent_of_exchange,saved_percent_of_program\n";
  for (size_t w = 0; w < comparison.windows.size(); ++w) {
    const WindowSummary& s = comparison.summary[w];
    out += arch::csv_field(comparison.windows[w].name) + "," + std::to_string(s.phases) + "," +
           std::to_string(s.reference_weighted_cycles) + "," + std::to_string(s.selected_weighted_cycles) + "," +
           std::to_string(s.weighted_cycles_saved) + "," + format_saved_ms(s.saved_ms) + "," +
           comparison.windows[w].id + "," + format_percent(s.weighted_cycles_saved, s.reference_weighted_cycles) + "," +
           (program_cycles ? format_percent(s.weighted_cycles_saved, *program_cycles) : "") + "\n";
  }
  return out;
}

std::string comparisons_by_phase_csv_text(const std::vector<ResultRow>& rows, const Comparison& comparison) {
  std::string out =
      "window,phase,label,execution_count,reference_config,reference_horizon,selected_config,"
      "selected_width,selected_horizon,weighted_cycles_saved\n";
  for (const PhaseSelection& s : comparison.by_phase) {
    const ResultRow& ref = rows[s.reference_row];
    const ResultRow& sel = rows[s.selected_row];
    out += arch::csv_field(comparison.windows[s.window].name) + "," + std::to_string(s.phase) + "," +
           arch::csv_field(ref.label) + "," + std::to_string(ref.execution_count) + "," + point_name(ref) + "," +
           std::to_string(ref.horizon) + "," + sel.config + "," + width_name(sel.width) + "," +
           std::to_string(sel.horizon) + "," + std::to_string(s.weighted_cycles_saved) + "\n";
  }
  return out;
}

}  // namespace lockstep::replay
