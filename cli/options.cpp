#include "cli/options.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "formats/package_io.hpp"
#include "io/embedded_configs.hpp"
#include "io/errors.hpp"
#include "io/input_file.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace options_local {}
using namespace options_local;
namespace options_local {

// The keys at column 0 of a YAML text ("key:" lines), enough to tell the kinds apart.
std::set<std::string> top_level_keys(const std::string& path) {
  std::set<std::string> keys;
  if (!arch::regular_file_exists(path)) return keys;  // a FIFO is refused, never read
  std::ifstream in(path, std::ios::binary);
  std::string line;
  for (int n = 0; n < 100000 && std::getline(in, line); ++n) {
    if (line.empty() || line[0] == ' ' || line[0] == '#' || line[0] == '-') continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    keys.insert(line.substr(0, colon));
  }
  return keys;
}

// What a YAML file that failed to parse as `expected` looks like instead, or "".
std::string yaml_kind(const std::string& path) {
  const auto keys = top_level_keys(path);
  const auto has = [&](const char* key) { return keys.count(key) > 0; };
  if (has("configurations")) return "sweep definition";
  if (has("model")) return "workload";
  if (has("version") && has("tiles")) return "package";
  if (has("version") && has("phases")) return "capture";
  if (has("tiles") && has("name")) return "machine description";
  return "";
}

// The first bytes of a file ("" if it cannot be read; the reader then says why).
std::string magic(const std::string& path) {
  if (!arch::regular_file_exists(path)) return "";  // a FIFO is refused, never read
  std::ifstream in(path, std::ios::binary);
  char bytes[6] = {};
  if (!in.read(bytes, sizeof bytes)) return "";
  return std::string(bytes, sizeof bytes);
}

std::string use_for(const std::string& kind) {
  if (kind == "package") return " (use lockstep run or lockstep inspect)";
  if (kind == "capture") return " (use lockstep compile to make a package of it)";
  if (kind == "workload") return " (use lockstep lower or lockstep build)";
  return "";
}

template <typename Read>
auto read_expecting(const std::string& path, const std::string& expected, Read read) {
  const std::string head = magic(path);
  std::string kind;
  if (head == std::string(arch::kPackageMagic, 6)) kind = "package";
  if (head == std::string(arch::kCaptureMagic, 6)) kind = "capture";
  if (!kind.empty() && kind != expected) {
    throw InputError(path + ": is a " + kind + ", not a " + expected + use_for(kind));
  }
  try {
    return read(path);
  } catch (const InputError&) {
    if (kind.empty()) {
      const std::string other = yaml_kind(path);
      if (!other.empty() && other != expected) {
        throw InputError(path + ": is a " + other + ", not a " + expected + use_for(other));
      }
    }
    throw;
  }
}

std::string resolve_config(const std::string& source, const std::string& folder, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::exists(source, ec)) return source;
  const auto& embedded = arch::embedded_configs();
  if (embedded.count(source)) return source;
  const std::string prefix = "configs/" + folder + "/";
  const std::string named = prefix + source + ".yaml";
  const bool is_name = source.find('/') == std::string::npos && !source.ends_with(".yaml") && !source.ends_with(".yml");
  if (is_name && (embedded.count(named) || std::filesystem::is_regular_file(named, ec))) return named;
  std::string known;
  for (const auto& [path, text] : embedded) {
    if (path.starts_with(prefix) && path.ends_with(".yaml")) {
      known += (known.empty() ? "" : ", ") + path.substr(prefix.size(), path.size() - prefix.size() - 5);
    }
  }
  throw InputError(source + ": no such " + what + " file, nor an embedded " + what + " (embedded: " + known + ")");
}

}  // namespace options_local

CLI::Validator unsigned_in(uint64_t min, uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
          return "'" + text + "' is not a whole number from " + std::to_string(min) + " to " + std::to_string(max);
        }
        const std::string digits = text.substr(std::min(text.find_first_not_of('0'), text.size() - 1));
        const std::string limit = std::to_string(max);
        if (digits.size() > limit.size() || (digits.size() == limit.size() && digits > limit)) {
          return text + " is larger than the maximum " + limit;
        }
        if (std::stoull(digits) < min) return text + " is less than the minimum " + std::to_string(min);
        return "";
      },
      "", "unsigned_in");
}

CLI::Validator finite_non_negative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::string problem = "'" + text + "' is not a finite number of zero or more";
        if (text.empty()) return problem;
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (end != text.c_str() + text.size() || !std::isfinite(value) || value < 0) return problem;
        return "";
      },
      "NUMBER >= 0", "finite_non_negative");
}

CLI::Option* add_seed_option(CLI::App& command, const std::string& names, uint64_t& seed, const std::string& help) {
  return command.add_option(names, seed, help)->check(unsigned_in(0, UINT64_MAX));
}

CLI::Option* add_jobs_option(CLI::App& command, size_t& jobs, const std::string& help) {
  return command.add_option("--jobs,-j", jobs, help)->check(unsigned_in(0, 65536));
}

ThreadLimit::ThreadLimit(size_t jobs) {
  if (jobs > 0) control_.emplace(tbb::global_control::max_allowed_parallelism, jobs);
}

void print_json(const nlohmann::ordered_json& json) { std::cout << json_text(json) << "\n"; }

std::string resolve_workload(const std::string& source) { return resolve_config(source, "workloads", "workload"); }

std::string resolve_sweep(const std::string& source) { return resolve_config(source, "sweeps", "sweep definition"); }

arch::Capture read_capture_input(const std::string& path, std::optional<uint32_t> only_phase) {
  return read_expecting(path, "capture", [&](const std::string& p) { return arch::read_capture(p, only_phase); });
}

arch::Package read_package_input(const std::string& path) {
  return read_expecting(path, "package", [](const std::string& p) { return arch::read_package(p); });
}

}  // namespace lockstep::cli
