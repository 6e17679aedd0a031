#include "replay/golden.hpp"

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "arch/machine.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "io/input_file.hpp"
#include "io/report_files.hpp"
#include "model/sram.hpp"
#include "replay/parallel.hpp"
#include "replay/point_codec.hpp"
#include "replay/sweep.hpp"

namespace lockstep::replay {
namespace {

constexpr const char* kMissing = "(missing)";
constexpr const char* kSuffix = ".golden";

std::string hex64(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%016" PRIx64, value);
  return text;
}

std::string read_text(const std::filesystem::path& path) {
  return arch::read_regular_file(path.string());  // refuses devices and FIFOs
}

}  // namespace

std::string golden_text(const GoldenCase& golden_case, const std::vector<PointResult>& points) {
  std::ostringstream out;
  out << "# lockstep golden: " << golden_case.name << ": " << golden_case.description << " (machine "
      << golden_case.machine << ")\n";
  for (const auto& p : points) {
    const std::string key = "phase " + std::to_string(p.spec.phase) + " " + p.spec.display_name() + " ";
    if (!p.error.empty()) {
      // Keep the message's first line only: it must not carry paths or timings.
      out << key << "error " << p.error.substr(0, p.error.find('\n')) << "\n";
      continue;
    }
    out << key << "horizon " << p.horizon << "\n"
        << key << "lower_bound " << p.lower_bound << "\n"
        << key << "max_row_bytes " << p.max_row_bytes << "\n"
        << key << "total_row_bytes " << p.total_row_bytes << "\n"
        << key << "table_bytes_shared " << p.table_bytes_shared << "\n"
        << key << "table_bytes_unshared " << p.table_bytes_unshared << "\n"
        << key << "patch_words " << p.patch_words << "\n"
        << key << "payload " << (p.payload_ok() ? "pass" : "fail") << "\n"
        << key << "payload_digest " << hex64(p.payload_digest) << "\n";
  }
  return out.str();
}

std::map<std::string, std::string> parse_golden_text(const std::string& text, const std::string& file_name) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    // phase <id> <point> <field> <value...>
    std::istringstream words(line);
    std::string phase, id, point, field;
    words >> phase >> id >> point >> field;
    std::string value;
    std::getline(words, value);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    if (phase != "phase" || id.empty() || point.empty() || field.empty() || value.empty()) {
      throw InputError(file_name + ":" + std::to_string(number) +
                       ": expected 'phase <id> <configuration> <field> <value>'");
    }
    const std::string key = phase + " " + id + " " + point + " " + field;
    if (!out.emplace(key, value).second) {
      throw InputError(file_name + ":" + std::to_string(number) + ": " + key + ": repeated");
    }
  }
  return out;
}

std::vector<GoldenDifference> compare_golden(const std::string& file, const std::string& expected_text,
                                             const std::string& found_text) {
  const auto expected = parse_golden_text(expected_text, file);
  const auto found = parse_golden_text(found_text, file + " (this run)");
  std::vector<GoldenDifference> out;
  for (const auto& [key, value] : expected) {
    const auto it = found.find(key);
    if (it == found.end()) {
      out.push_back({file, key, value, kMissing});
    } else if (it->second != value) {
      out.push_back({file, key, value, it->second});
    }
  }
  for (const auto& [key, value] : found) {
    if (!expected.count(key)) out.push_back({file, key, kMissing, value});
  }
  return out;
}

GoldenRun run_golden(size_t jobs) {
  struct Task {
    size_t case_index;
    PointSpec spec;
  };
  const auto cases = golden_cases();
  std::vector<arch::Capture> captures;
  std::vector<arch::MachineDescription> machines;
  std::vector<Task> tasks;
  for (size_t c = 0; c < cases.size(); ++c) {
    captures.push_back(cases[c].make());
    machines.push_back(arch::load_machine(cases[c].machine));
    std::set<uint32_t> phases;
    for (const auto& p : captures.back().phases) phases.insert(p.id);
    for (uint32_t phase : phases) {
      for (auto spec : golden_configurations()) {
        spec.phase = phase;
        tasks.push_back({c, spec});
      }
    }
  }
  PointOptions options;
  options.seed = 1;
  options.payload_digest = true;            // every destination word checked, every iteration
  const model::KeptSramMappings keep_sram;  // each worker's next point takes its last SRAM mapping
  const auto encoded = run_in_processes(
      tasks.size(), jobs == 0 ? available_cores() : jobs,
      [&](size_t i) {
        const auto& t = tasks[i];
        return encode_point_result(run_point(captures[t.case_index], machines[t.case_index], t.spec, options));
      },
      {},
      [&](size_t i, const std::string& how) {
        return encode_point_result(crashed_point(captures[tasks[i].case_index], tasks[i].spec, how));
      });
  std::vector<std::vector<PointResult>> per_case(cases.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    per_case[tasks[i].case_index].push_back(decode_point_result(encoded[i]));
  }
  GoldenRun run;
  for (size_t c = 0; c < cases.size(); ++c) {
    run.files[cases[c].name + kSuffix] = golden_text(cases[c], per_case[c]);
  }
  return run;
}

std::vector<GoldenDifference> check_golden(const GoldenRun& run, const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw InputError(dir + ": golden directory not found");
  std::vector<GoldenDifference> out;
  for (const auto& [name, text] : run.files) {
    const fs::path path = fs::path(dir) / name;
    if (!fs::exists(path)) {
      out.push_back({name, "(file)", kMissing, "present: run `lockstep golden bless`"});
      continue;
    }
    auto differences = compare_golden(name, read_text(path), text);
    out.insert(out.end(), differences.begin(), differences.end());
  }
  std::set<std::string> stray;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == kSuffix && !run.files.count(name)) stray.insert(name);
  }
  for (const auto& name : stray) out.push_back({name, "(file)", "present", "no such golden case"});
  return out;
}

std::vector<std::string> bless_golden(const GoldenRun& run, const std::string& dir) {
  namespace fs = std::filesystem;
  arch::create_output_directory(dir, "--golden-dir");
  std::vector<std::string> written;
  for (const auto& [name, text] : run.files) {
    arch::write_file_atomically(join_path(dir, name), text);
    written.push_back(name);
  }
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == kSuffix && !run.files.count(name)) fs::remove(entry.path());
  }
  return written;
}

}  // namespace lockstep::replay
