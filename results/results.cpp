#include "results/results.hpp"

#include <cstdio>
#include <map>
#include <tuple>

#include "io/atomic_file.hpp"
#include "io/csv.hpp"
#include "io/errors.hpp"
#include "io/report_files.hpp"
#include "io/yaml_reader.hpp"

namespace lockstep::replay {

const char* const kResultsHeader =
    "phase,label,execution_count,config,width,horizon,lower_bound,max_row_bytes,"
    "total_row_bytes,table_bytes_shared,table_bytes_unshared,patch_calls,patch_words,"
    "compile_ms,simulate_ms,payload";

namespace {

constexpr const char* kColumns[] = {"phase",
                                    "label",
                                    "execution_count",
                                    "config",
                                    "width",
                                    "horizon",
                                    "lower_bound",
                                    "max_row_bytes",
                                    "total_row_bytes",
                                    "table_bytes_shared",
                                    "table_bytes_unshared",
                                    "patch_calls",
                                    "patch_words",
                                    "compile_ms",
                                    "simulate_ms",
                                    "payload"};
constexpr size_t kColumnCount = sizeof(kColumns) / sizeof(kColumns[0]);

bool all_digits(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// One line being read: knows its file and line number for error messages.
class LineReader {
 public:
  LineReader(const std::string& file, size_t line, std::vector<std::string> fields)
      : file_(file), line_(line), fields_(std::move(fields)) {}

  [[noreturn]] void fail(size_t column, const std::string& what) const { fail_named(kColumns[column], what); }
  [[noreturn]] void fail_named(const std::string& column, const std::string& what) const {
    throw InputError(file_ + ":" + std::to_string(line_) + ": " + column + ": " + what);
  }

  const std::string& text(size_t column) const { return fields_[column]; }

  uint64_t unsigned_value(size_t column, uint64_t max) const {
    const std::string& t = fields_[column];
    if (!all_digits(t)) fail(column, "expected an unsigned integer, got '" + t + "'");
    uint64_t v = 0;
    for (char c : t) {
      const uint64_t digit = static_cast<uint64_t>(c - '0');
      if (v > (max - digit) / 10) fail(column, "'" + t + "' is out of range (at most " + std::to_string(max) + ")");
      v = v * 10 + digit;
    }
    return v;
  }

  // Milliseconds: digits, optionally a point and more digits.
  double milliseconds(size_t column) const {
    const std::string& t = fields_[column];
    const size_t dot = t.find('.');
    const bool ok =
        dot == std::string::npos ? all_digits(t) : all_digits(t.substr(0, dot)) && all_digits(t.substr(dot + 1));
    if (!ok) fail(column, "expected milliseconds like 12.345, got '" + t + "'");
    const double ms = std::strtod(t.c_str(), nullptr);
    // About 31 years: anything above is damage, and the writer's 3 decimals stay exact below.
    if (ms > 1e12) fail(column, "'" + t + "' is out of range (at most 1e12 ms)");
    return ms;
  }

  size_t line() const { return line_; }

 private:
  const std::string& file_;
  size_t line_;
  std::vector<std::string> fields_;
};

ResultRow parse_row(const LineReader& in) {
  ResultRow row;
  row.phase = static_cast<uint32_t>(in.unsigned_value(0, UINT32_MAX));
  row.label = in.text(1);
  if (row.label.empty()) in.fail(1, "empty label");
  row.execution_count = in.unsigned_value(2, UINT32_MAX);
  row.config = in.text(3);
  if (!is_config_name(row.config)) {
    in.fail(3, "'" + row.config +
                   "' is not a configuration name (latency, automatic, remaining-combined, "
                   "S<W> or B<W>)");
  }
  const std::string& width = in.text(4);
  if (width == "word32") {
    row.width = compiler::Width::Word32;
  } else if (width == "paired64") {
    row.width = compiler::Width::Paired64;
  } else {
    in.fail(4, "expected word32 or paired64, got '" + width + "'");
  }
  row.horizon = in.unsigned_value(5, UINT32_MAX);
  row.lower_bound = in.unsigned_value(6, UINT32_MAX);
  row.max_row_bytes = in.unsigned_value(7, UINT32_MAX);
  row.total_row_bytes = in.unsigned_value(8, UINT64_MAX / 2);
  row.table_bytes_shared = in.unsigned_value(9, UINT32_MAX);
  row.table_bytes_unshared = in.unsigned_value(10, UINT32_MAX);
  row.patch_calls = in.unsigned_value(11, UINT32_MAX);
  row.patch_words = in.unsigned_value(12, UINT32_MAX);
  row.compile_ms = in.milliseconds(13);
  row.simulate_ms = in.milliseconds(14);
  const std::string& payload = in.text(15);
  if (payload == "pass") {
    row.payload_pass = true;
  } else if (payload == "fail") {
    row.payload_pass = false;
  } else {
    in.fail(15, "expected pass or fail, got '" + payload + "'");
  }
  return row;
}

std::string format_ms(double ms) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f", ms);
  return buffer;
}

}  // namespace

std::string width_name(compiler::Width width) { return width == compiler::Width::Paired64 ? "paired64" : "word32"; }

std::string point_name(const ResultRow& row) {
  return row.width == compiler::Width::Paired64 ? row.config + "p" : row.config;
}

std::vector<ResultRow> parse_results_csv(const std::string& text, const std::string& file_name) {
  std::vector<ResultRow> rows;
  // (phase, config, width) -> line, to name the first occurrence of a duplicate.
  std::map<std::tuple<uint32_t, std::string, compiler::Width>, size_t> seen;
  std::map<uint32_t, std::pair<size_t, size_t>> phase_first;  // phase -> (line, row index)
  bool header_seen = false;
  for (arch::CsvRecord& record : arch::parse_csv(text, file_name)) {
    const size_t line_number = record.line;
    if (!header_seen) {
      std::string header;
      for (const auto& f : record.fields) header += (header.empty() ? "" : ",") + f;
      if (header != kResultsHeader) {
        throw InputError(file_name + ":1: header: expected '" + std::string(kResultsHeader) + "', got '" + header +
                         "'");
      }
      header_seen = true;
      continue;
    }
    if (record.blank) {
      throw InputError(file_name + ":" + std::to_string(line_number) + ": row: empty line");
    }
    const size_t count = record.fields.size();
    LineReader in(file_name, line_number, std::move(record.fields));
    if (count < kColumnCount) {
      in.fail(count,
              "missing: the row has " + std::to_string(count) + " of " + std::to_string(kColumnCount) + " columns");
    }
    if (count > kColumnCount) {
      in.fail_named("row", std::to_string(count) + " columns, expected " + std::to_string(kColumnCount) +
                               " (a field holding a comma must be quoted)");
    }
    ResultRow row = parse_row(in);
    if (!rows.empty() && row.phase < rows.back().phase) {
      in.fail(0, "phase " + std::to_string(row.phase) + " comes after phase " + std::to_string(rows.back().phase) +
                     ": rows must be sorted by phase");
    }
    const auto first = phase_first.find(row.phase);
    if (first == phase_first.end()) {
      phase_first[row.phase] = {line_number, rows.size()};
    } else {
      const ResultRow& other = rows[first->second.second];
      const std::string where =
          " on line " + std::to_string(first->second.first) + " for phase " + std::to_string(row.phase);
      if (row.label != other.label) {
        in.fail(1, "'" + row.label + "' differs from '" + other.label + "'" + where);
      }
      if (row.execution_count != other.execution_count) {
        in.fail(2,
                std::to_string(row.execution_count) + " differs from " + std::to_string(other.execution_count) + where);
      }
    }
    const auto key = std::make_tuple(row.phase, row.config, row.width);
    const auto dup = seen.find(key);
    if (dup != seen.end()) {
      in.fail(3, row.config + " " + width_name(row.width) + " appears twice for phase " + std::to_string(row.phase) +
                     " (first on line " + std::to_string(dup->second) + ")");
    }
    seen[key] = line_number;
    rows.push_back(std::move(row));
  }
  if (!header_seen) {
    throw InputError(file_name + ":1: header: empty file, expected '" + std::string(kResultsHeader) + "'");
  }
  return rows;
}

std::vector<ResultRow> read_results_csv(const std::string& path) {
  return parse_results_csv(arch::read_text_file(path), path);
}

std::string results_csv_text(const std::vector<ResultRow>& rows) {
  std::string out = std::string(kResultsHeader) + "\n";
  for (const auto& r : rows) {
    out += std::to_string(r.phase) + "," + arch::csv_field(r.label) + "," + std::to_string(r.execution_count) + "," +
           r.config + "," + width_name(r.width) + "," + std::to_string(r.horizon) + "," +
           std::to_string(r.lower_bound) + "," + std::to_string(r.max_row_bytes) + "," +
           std::to_string(r.total_row_bytes) + "," + std::to_string(r.table_bytes_shared) + "," +
           std::to_string(r.table_bytes_unshared) + "," + std::to_string(r.patch_calls) + "," +
           std::to_string(r.patch_words) + "," + format_ms(r.compile_ms) + "," + format_ms(r.simulate_ms) + "," +
           (r.payload_pass ? "pass" : "fail") + "\n";
  }
  return out;
}

void write_results_csv(const std::vector<ResultRow>& rows, const std::string& path) {
  arch::write_file_atomically(path, results_csv_text(rows));
}

std::vector<PhaseRows> group_by_phase(const std::vector<ResultRow>& rows) {
  std::map<uint32_t, PhaseRows> phases;
  for (size_t i = 0; i < rows.size(); ++i) {
    auto [it, inserted] = phases.try_emplace(rows[i].phase);
    if (inserted) {
      it->second.phase = rows[i].phase;
      it->second.label = rows[i].label;
      it->second.execution_count = rows[i].execution_count;
    }
    it->second.rows.push_back(i);
  }
  std::vector<PhaseRows> out;
  for (auto& [id, phase] : phases) out.push_back(std::move(phase));
  return out;
}

}  // namespace lockstep::replay
