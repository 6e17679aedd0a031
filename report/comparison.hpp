#pragma once
// Comparison windows: per phase, pick the fastest passing point that stays within a
// storage limit relative to the reference policy, and add up the cycles saved, weighted
// by how often each phase executes (horizon x execution count).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/results.hpp"
#include "results/sweep_definition.hpp"

namespace lockstep::replay {

struct ComparisonWindow {
  std::string name;
  // The short form tables, plots and `compile --window` use: "same-storage" for the window
  // where neither metric grows, "row+K" for max row growth K.
  std::string id;
  // Empty: "neither storage metric grows" (max row <= reference's and total row <=
  // reference's). K: "max row grows by at most K bytes" (max row <= reference's + K,
  // total row unconstrained).
  std::optional<uint64_t> max_row_growth_bytes;
};

// "neither storage metric grows", then one growth window per K in the sweep's order.
std::vector<ComparisonWindow> comparison_windows(const SweepDefinition& sweep);

struct PhaseSelection {
  size_t window = 0;  // index into Comparison::windows
  uint32_t phase = 0;
  size_t reference_row = 0;  // indices into the rows compared
  size_t selected_row = 0;
  int64_t weighted_cycles_saved = 0;  // (reference - selected horizon) x execution count
};

struct WindowSummary {
  size_t phases = 0;
  uint64_t reference_weighted_cycles = 0;
  uint64_t selected_weighted_cycles = 0;
  int64_t weighted_cycles_saved = 0;
  double saved_ms = 0;  // weighted_cycles_saved at the clock
};

struct Comparison {
  PointRef reference;
  std::vector<ComparisonWindow> windows;
  std::vector<WindowSummary> summary;    // one per window
  std::vector<PhaseSelection> by_phase;  // window-major, then phase order
  const PhaseSelection& selection(size_t window, size_t phase_index, size_t phase_count) const {
    return by_phase[window * phase_count + phase_index];
  }
};

// Within each window and phase, the candidates are the passing points that satisfy the
// window and whose horizon is strictly below the reference's, plus the reference point
// itself (keeping the reference is always allowed; a point that only ties it never
// replaces it). The selection is the candidate with the smallest horizon; ties go to the
// smaller max row, then the smaller total row, then the earlier row in results order.
// InputError "<source>: phase P (label): ..." if a phase has no reference point.
Comparison compare_to_reference(const std::vector<ResultRow>& rows, const PointRef& reference,
                                const std::vector<ComparisonWindow>& windows, double clock_hz,
                                const std::string& source = "results.csv");

// comparisons.csv: window,phases,reference_weighted_cycles,selected_weighted_cycles,
// weighted_cycles_saved,saved_ms,window_id,saved_percent_of_exchange,saved_percent_of_program
// (the last empty when the program's cycles are unknown).
std::string comparisons_csv_text(const Comparison& comparison, std::optional<uint64_t> program_cycles = std::nullopt);

// `part` as a percentage of `whole` with two decimals ("3.79"); "n/a" when whole is 0.
std::string format_percent(int64_t part, uint64_t whole);
// comparisons_by_phase.csv: window,phase,label,execution_count,reference_config,
// reference_horizon,selected_config,selected_width,selected_horizon,weighted_cycles_saved
std::string comparisons_by_phase_csv_text(const std::vector<ResultRow>& rows, const Comparison& comparison);

// Milliseconds with six decimals, e.g. "0.777635".
std::string format_saved_ms(double ms);

}  // namespace lockstep::replay
