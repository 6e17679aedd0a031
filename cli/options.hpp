#pragma once
// Options every command spells and checks the same way (docs/user-guide.md,
// "Command-line conventions"): --seed, --jobs/-j, --samples, --json, config names, and
// reading a capture or a package with a message that says when it is the other kind.
#include <tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "formats/capture.hpp"
#include "formats/package.hpp"

namespace lockstep::cli {

// A plain decimal integer in [min, max], checked on the text before CLI11 converts it, so
// "-1", "+3", "1e3" or 2^64 are refused with "--OPTION: ..." instead of wrapping.
CLI::Validator unsigned_in(uint64_t min, uint64_t max);
// A limit in seconds or percent: a finite number of zero or more. CLI11's NonNegativeNumber
// lets "nan" through (every comparison with it is false) and prints DBL_MAX in its message.
CLI::Validator finite_non_negative();

// A 64-bit seed: 0 .. 2^64-1, nothing else.
CLI::Option* add_seed_option(CLI::App& command, const std::string& names, uint64_t& seed, const std::string& help);

// --jobs,-j N: threads or worker processes; 0 (the default) is every core.
CLI::Option* add_jobs_option(CLI::App& command, size_t& jobs, const std::string& help);

// Holds oneTBB to `jobs` threads while it lives (0: no limit, every core).
class ThreadLimit {
 public:
  explicit ThreadLimit(size_t jobs);

 private:
  std::optional<tbb::global_control> control_;
};

// One JSON object on stdout, two-space indented, keys in insertion order.
void print_json(const nlohmann::ordered_json& json);

// JSON text, two-space indented; bytes of a path or argument that are not valid UTF-8
// (Linux allows them in file names) become U+FFFD instead of failing after the work.
template <typename Json>
std::string json_text(const Json& json) {
  return json.dump(2, ' ', false, Json::error_handler_t::replace);
}

// A workload or sweep-definition argument: an existing file as given, else the embedded
// configs/workloads/NAME.yaml (configs/sweeps/NAME.yaml) for a short NAME, else the path
// as given. InputError naming the argument and the embedded names when nothing matches.
std::string resolve_workload(const std::string& source);
std::string resolve_sweep(const std::string& source);

// read_capture / read_package, but a file of the other kind (or a workload, machine or
// sweep definition) is named as such: "FILE: is a package, not a capture (use lockstep run)".
// With `only_phase`, only that phase is read (arch::read_capture).
arch::Capture read_capture_input(const std::string& path, std::optional<uint32_t> only_phase = std::nullopt);
arch::Package read_package_input(const std::string& path);

}  // namespace lockstep::cli
