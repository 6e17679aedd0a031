#include "report/selection.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include "io/csv.hpp"
#include "io/errors.hpp"
#include "io/report_files.hpp"
#include "io/yaml_reader.hpp"
#include "results/results.hpp"

namespace lockstep::replay {

namespace {

// A CSV file of the report as records keyed by its header's column names.
class CsvTable {
 public:
  CsvTable(const std::string& dir, const std::string& name) : path_(join_path(dir, name)) {
    const std::vector<arch::CsvRecord> records = arch::parse_csv(arch::read_text_file(path_), path_);
    if (records.empty()) throw InputError(path_ + ": empty file");
    for (size_t i = 0; i < records[0].fields.size(); ++i) columns_[records[0].fields[i]] = i;
    rows_.assign(records.begin() + 1, records.end());
  }
  const std::vector<arch::CsvRecord>& rows() const { return rows_; }
  const std::string& get(const arch::CsvRecord& row, const std::string& column) const {
    const auto it = columns_.find(column);
    if (it == columns_.end()) throw InputError(path_ + ":1: no column '" + column + "'");
    if (it->second >= row.fields.size()) {
      throw InputError(path_ + ":" + std::to_string(row.line) + ": " + column + ": missing");
    }
    return row.fields[it->second];
  }
  uint64_t number(const arch::CsvRecord& row, const std::string& column) const {
    const std::string& text = get(row, column);
    try {
      size_t used = 0;
      const uint64_t value = std::stoull(text, &used);
      if (used == text.size() && !text.empty() && text[0] != '-') return value;
    } catch (const std::exception&) {
    }
    throw InputError(path_ + ":" + std::to_string(row.line) + ": " + column + ": expected a number, got '" + text +
                     "'");
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::map<std::string, size_t> columns_;
  std::vector<arch::CsvRecord> rows_;
};

}  // namespace

ReportSelection read_report_selection(const std::string& dir, const std::string& window) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw InputError("--selection " + dir + ": no such report folder");
  ReportSelection selection;
  const auto provenance = read_provenance(dir);
  if (!provenance) {
    throw InputError("--selection " + dir +
                     ": no provenance.json, so not a sweep report this Lockstep can check "
                     "against the capture (rerun lockstep sweep, or lockstep report on a sweep folder)");
  }
  selection.provenance = *provenance;

  const CsvTable summary(dir, "comparisons.csv");
  std::string known;
  for (const auto& row : summary.rows()) {
    const std::string& id = summary.get(row, "window_id");
    const std::string& name = summary.get(row, "window");
    known += (known.empty() ? "" : ", ") + id;
    if (window != id && window != name) continue;
    selection.window = name;
    selection.window_id = id;
    selection.reference_weighted_cycles = summary.number(row, "reference_weighted_cycles");
    selection.selected_weighted_cycles = summary.number(row, "selected_weighted_cycles");
    selection.weighted_cycles_saved = static_cast<int64_t>(selection.reference_weighted_cycles) -
                                      static_cast<int64_t>(selection.selected_weighted_cycles);
  }
  if (window.empty()) throw InputError("--selection " + dir + ": give --window, one of " + known);
  if (selection.window.empty()) {
    throw InputError("--window " + window + ": not a window of " + summary.path() + " (" + known + ")");
  }

  // (phase, config, width) -> table bytes of that point.
  std::map<std::tuple<uint32_t, std::string, std::string>, uint64_t> tables;
  for (const ResultRow& r : read_results_csv(join_path(dir, "results.csv"))) {
    tables[{r.phase, r.config, width_name(r.width)}] = r.table_bytes_shared;
  }
  const CsvTable by_phase(dir, "comparisons_by_phase.csv");
  for (const auto& row : by_phase.rows()) {
    if (by_phase.get(row, "window") != selection.window) continue;
    SelectedPhase phase;
    phase.phase = static_cast<uint32_t>(by_phase.number(row, "phase"));
    const std::string& config = by_phase.get(row, "selected_config");
    const std::string& width = by_phase.get(row, "selected_width");
    const auto table = tables.find({phase.phase, config, width});
    if (table == tables.end()) {
      throw InputError(by_phase.path() + ":" + std::to_string(row.line) + ": phase " + std::to_string(phase.phase) +
                       " selects " + config + " " + width + ", which results.csv does not hold");
    }
    selection.largest_phase_table_bytes = std::max(selection.largest_phase_table_bytes, table->second);
    const bool paired = width == "paired64";
    phase.compiler_config = paired ? config + "+paired" : config;
    phase.point = paired ? config + "p" : config;
    selection.phases.push_back(phase);
  }
  if (selection.phases.empty()) throw InputError(by_phase.path() + ": no phase for window " + selection.window);
  return selection;
}

}  // namespace lockstep::replay
