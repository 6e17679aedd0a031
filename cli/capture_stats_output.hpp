#pragma once
// A capture's per-phase statistics as `capture stats` and `lower --stats` print them: CSV lines
// (the header first) and a JSON array, the same columns in the same order.
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "formats/capture.hpp"

namespace lockstep::cli {

void print_phase_stats_csv(const std::vector<arch::CapturePhaseStats>& phases, std::ostream& out);
nlohmann::ordered_json phase_stats_json(const std::vector<arch::CapturePhaseStats>& phases);

}  // namespace lockstep::cli
