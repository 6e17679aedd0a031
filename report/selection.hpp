#pragma once
// What a sweep report selects in one comparison window, read back from the report folder
// (comparisons.csv, comparisons_by_phase.csv, results.csv, provenance.json) so that
// `lockstep compile CAPTURE --selection DIR --window ID` can build it.
#include <cstdint>
#include <string>
#include <vector>

#include "results/provenance.hpp"

namespace lockstep::replay {

struct SelectedPhase {
  uint32_t phase = 0;
  std::string compiler_config;  // what compiler::parse_config takes: "B256+paired"
  std::string point;            // the report's name: "B256p"
};

struct ReportSelection {
  std::string window;                 // the window's full name
  std::string window_id;              // its short form (same-storage, row+64)
  std::vector<SelectedPhase> phases;  // in phase order
  uint64_t reference_weighted_cycles = 0;
  uint64_t selected_weighted_cycles = 0;  // the report's estimate for this selection
  int64_t weighted_cycles_saved = 0;
  // The largest table_bytes_shared of a selected point: each phase compiled alone, so an
  // estimate of the package's table peak, not its value.
  uint64_t largest_phase_table_bytes = 0;
  ReportProvenance provenance;
};

// Reads the selection of `window` (its id or its full name) from the report in `dir`.
// InputError, one line, for a missing folder or file, a folder without provenance.json,
// an unknown window (the message lists the known ids) or files that disagree.
ReportSelection read_report_selection(const std::string& dir, const std::string& window);

}  // namespace lockstep::replay
