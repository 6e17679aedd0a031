#pragma once
// Everything a sweep's report derives from its results rows: frontier.csv,
// comparisons.csv, comparisons_by_phase.csv, index.html and per phase phase-<id>.html
// with its plot as phase-<id>.svg/.png/.pdf. results.csv itself is not written here.
// Every file goes through a temporary name and a rename; the bytes depend only on the
// rows (timing columns excluded), the sweep definition and the clock.
#include <string>
#include <vector>

#include "results/provenance.hpp"
#include "results/results.hpp"
#include "results/sweep_definition.hpp"

namespace lockstep::replay {

// Writes the report into `dir` (created if missing). `sweep.reference` is the policy the
// comparisons measure against and `sweep.max_row_growth_bytes` the growth windows;
// `provenance` is shown in index.html and written as provenance.json.
// InputError if a phase has no row for the reference.
void write_report(const std::vector<ResultRow>& rows, const SweepDefinition& sweep, double clock_hz,
                  const std::string& dir, const ReportProvenance& provenance = {});

// The names of the files write_report writes for these rows, in writing order.
std::vector<std::string> report_file_names(const std::vector<ResultRow>& rows);

}  // namespace lockstep::replay
