#pragma once
// results.csv: one row per measured point of a sweep (phase x configuration x width).
// The format is fixed in docs/reports.md; the reader rejects anything else with
// "results.csv:LINE: column: what is wrong" so a hand-edited file fails loudly.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/compile.hpp"
#include "results/config_name.hpp"

namespace lockstep::replay {

struct ResultRow {
  uint32_t phase = 0;
  std::string label;  // e.g. layer.attn.qkv; never contains a comma
  uint64_t execution_count = 1;
  std::string config;  // configuration name as in the sweep file (latency, S256, B1024, ...)
  compiler::Width width = compiler::Width::Word32;
  uint64_t horizon = 0;
  uint64_t lower_bound = 0;
  uint64_t max_row_bytes = 0;
  uint64_t total_row_bytes = 0;
  uint64_t table_bytes_shared = 0;
  uint64_t table_bytes_unshared = 0;
  uint64_t patch_calls = 0;
  uint64_t patch_words = 0;
  double compile_ms = 0;  // wall time; the only columns allowed to differ between runs
  double simulate_ms = 0;
  bool payload_pass = false;
};

// The header line of results.csv, without the newline.
extern const char* const kResultsHeader;

// "word32" / "paired64".
std::string width_name(compiler::Width width);

// The point's name in plots and tables: the configuration, with a `p` suffix for the
// paired-width alternative (B256p).
std::string point_name(const ResultRow& row);

// is_config_name: results/config_name.hpp.

// Parses the text of a results.csv. `file_name` is used in error messages only.
// Checks: exact header, 16 columns, integer and enum columns, configuration names,
// phases in non-decreasing order, one label and execution count per phase, no duplicate
// (phase, config, width). InputError "file:LINE: column: what" otherwise.
std::vector<ResultRow> parse_results_csv(const std::string& text, const std::string& file_name);
std::vector<ResultRow> read_results_csv(const std::string& path);

// The canonical text of results.csv for `rows` (in the given order).
std::string results_csv_text(const std::vector<ResultRow>& rows);
// Writes results.csv through a temporary file and a rename.
void write_results_csv(const std::vector<ResultRow>& rows, const std::string& path);

// The rows of one phase, as indices into the full vector, in results order.
struct PhaseRows {
  uint32_t phase = 0;
  std::string label;
  uint64_t execution_count = 1;
  std::vector<size_t> rows;
};
// Phases in increasing id order.
std::vector<PhaseRows> group_by_phase(const std::vector<ResultRow>& rows);

}  // namespace lockstep::replay
