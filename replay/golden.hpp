#pragma once
// Golden regression: canonical expected outputs for a fixed set of captures (the embedded
// default workload and a few synthetic families), per phase and configuration. `check`
// recomputes them and lists every difference; `bless` rewrites the files.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "formats/capture.hpp"
#include "replay/point.hpp"

namespace lockstep::replay {

struct GoldenCase {
  std::string name;         // file name stem: golden/<name>.golden
  std::string description;  // one line, written as the file's first comment
  std::string machine;      // embedded machine name
  std::function<arch::Capture()> make;
};

// The cases, in file-name order.
std::vector<GoldenCase> golden_cases();
// The configurations every phase of every case is run with (a subset of the frontier, so
// the check stays fast); names as written in golden files (B256p = paired width).
const std::vector<PointSpec>& golden_configurations();

// Canonical text of one case: a comment line, then `phase <id> <point> <field> <value>`
// lines in (phase id, configuration, field) order. No paths, no timestamps, no timings.
std::string golden_text(const GoldenCase& golden_case, const std::vector<PointResult>& points);

// Key ("phase 3 B256 horizon") -> value. InputError "file:line: what" on a malformed line
// or a repeated key.
std::map<std::string, std::string> parse_golden_text(const std::string& text, const std::string& file_name);

struct GoldenDifference {
  std::string file;  // golden/<name>.golden, relative to the golden directory
  std::string key;
  std::string expected;  // "(missing)" when the golden file lacks the key
  std::string found;     // "(missing)" when the run did not produce it
};

// Every key of both sides, in key order of the expected file then new keys.
std::vector<GoldenDifference> compare_golden(const std::string& file, const std::string& expected_text,
                                             const std::string& found_text);

struct GoldenRun {
  std::map<std::string, std::string> files;  // file name -> canonical text
};

// Runs every case (points spread over `jobs` worker processes; 0 = every core).
GoldenRun run_golden(size_t jobs);

// Differences between a run and the files of `dir` (missing files, stray *.golden files
// and every changed, missing or new key).
std::vector<GoldenDifference> check_golden(const GoldenRun& run, const std::string& dir);

// Writes every file of the run into `dir` (temporary name, then rename) and removes stray
// *.golden files. Returns the names written.
std::vector<std::string> bless_golden(const GoldenRun& run, const std::string& dir);

}  // namespace lockstep::replay
