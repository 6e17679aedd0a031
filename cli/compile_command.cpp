// `lockstep compile CAPTURE -o PACKAGE`: schedule, encode and package a capture's phases,
// with the payload proof the simulator checks.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "arch/capture.hpp"
#include "arch/atomic_file.hpp"
#include "arch/errors.hpp"
#include "arch/machine.hpp"
#include "arch/package.hpp"
#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "cli/stage_progress.hpp"
#include "compiler/compile.hpp"

namespace lockstep::cli {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

uint32_t parse_id(const std::string& text, const std::string& list) {
  uint32_t value = 0;
  size_t used = 0;
  try {
    const unsigned long parsed = std::stoul(text, &used, 10);
    if (parsed > 0xffffffffUL) throw std::out_of_range("id");
    value = static_cast<uint32_t>(parsed);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || text[0] == '-' || text[0] == '+') {
    throw InputError("--phases: '" + list + "': '" + text + "' is not a phase id");
  }
  return value;
}

// "3,7-40,79": ids and inclusive ranges.
std::vector<uint32_t> parse_phase_list(const std::string& list) {
  std::vector<uint32_t> ids;
  std::stringstream stream(list);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const size_t dash = item.find('-');
    if (dash == std::string::npos) {
      ids.push_back(parse_id(item, list));
      continue;
    }
    const uint32_t first = parse_id(item.substr(0, dash), list);
    const uint32_t last = parse_id(item.substr(dash + 1), list);
    if (last < first) throw InputError("--phases: '" + list + "': range '" + item + "' runs backwards");
    if (last - first > 1000000) throw InputError("--phases: '" + list + "': range '" + item + "' is too long");
    for (uint32_t id = first; id <= last; ++id) ids.push_back(id);
  }
  if (ids.empty()) throw InputError("--phases: '" + list + "': no phase ids");
  return ids;
}

const char* width_name(compiler::Width width) { return width == compiler::Width::Paired64 ? "paired64" : "word32"; }

nlohmann::ordered_json report_json(const compiler::CompileReport& report, const std::string& config,
                                   const std::string& machine) {
  nlohmann::ordered_json json;
  json["machine"] = machine;
  json["config"] = config;
  nlohmann::ordered_json phases = nlohmann::ordered_json::array();
  for (const auto& p : report.phases) {
    nlohmann::ordered_json phase;
    phase["phase"] = p.phase;
    phase["label"] = p.label;
    phase["execution_count"] = p.execution_count;
    phase["width"] = width_name(p.width);
    phase["horizon"] = p.horizon;
    phase["lower_bound"] = p.lower_bound;
    phase["gap"] = static_cast<int64_t>(p.horizon) - static_cast<int64_t>(p.lower_bound);
    phase["max_row_bytes"] = p.max_row_bytes;
    phase["total_row_bytes"] = p.total_row_bytes;
    phase["patch_calls"] = p.patch_calls;
    phase["patch_words"] = p.patch_words;
    phase["max_patch_words_per_tile"] = p.max_patch_words_per_tile;
    phases.push_back(phase);
  }
  json["phases"] = phases;
  json["table_bytes_unshared"] = report.table_bytes_unshared;
  json["table_bytes_shared"] = report.table_bytes_shared;
  json["sharing_patch_calls"] = report.sharing_patch_calls;
  json["sharing_patch_words"] = report.sharing_patch_words;
  json["orders_considered"] = report.orders_considered;
  json["orders_deduplicated"] = report.orders_deduplicated;
  return json;
}

// Seconds between laps, for the --log-level info timing line.
class StageClock {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

void print_summary(const compiler::CompileReport& report) {
  std::printf("%6s %-28s %5s %9s %9s %7s %8s %10s %7s %7s\n", "phase", "label", "count", "horizon", "bound", "gap",
              "max_row", "total_row", "p.calls", "p.words");
  for (const auto& p : report.phases) {
    std::printf("%6u %-28.28s %5u %9u %9u %7lld %8u %10llu %7u %7u\n", p.phase, p.label.c_str(), p.execution_count,
                p.horizon, p.lower_bound, static_cast<long long>(p.horizon) - static_cast<long long>(p.lower_bound),
                p.max_row_bytes, static_cast<unsigned long long>(p.total_row_bytes), p.patch_calls, p.patch_words);
  }
  std::printf("table peak: %u bytes shared, %u unshared; sharing setup patches: %u calls, %u words\n",
              report.table_bytes_shared, report.table_bytes_unshared, report.sharing_patch_calls,
              report.sharing_patch_words);
  std::printf("orders: %u considered, %u deduplicated\n", report.orders_considered, report.orders_deduplicated);
}

const CommandRegistration registration{"compile", [](CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "compile",
      "Compile a capture into a package: schedule and encode every selected phase, lay out\n"
      "each tile's exchange table (rows shared across phases where they differ only in\n"
      "address words), add the Repeat patch lists, fill source memory with payload tokens\n"
      "and add the payload proof (checksums after iterated or overwritten exchanges, and\n"
      "expected destination bytes) that `lockstep run` checks.\n"
      "Policy: --exchange-stream-words W is the production policy B(W); without it the\n"
      "latency-oriented order is used; --config NAME picks any configuration (latency,\n"
      "automatic, remaining-combined, S<W>, B<W>; +paired for the 64-bit width, or\n"
      "+latency-width / +storage-width to schedule both widths and keep one).\n"
      "Phases are scheduled, and the proof's reads and digests computed, on --jobs threads\n"
      "(default: every core); the package is the same bytes at any count. On a terminal a\n"
      "line shows the stage (scheduling, proving, writing) once it has taken 2 s.\n"
      "The package form follows -o's name: .yaml/.yml is YAML, anything else Cap'n Proto.\n"
      "Prints a table of the phases (horizon, lower bound, rows, patches); --json prints\n"
      "the same as one JSON object, the one --report writes.");
  struct Options {
    std::string capture;
    std::string config;
    uint32_t stream_words = 0;
    std::string phases;
    std::string machine;
    std::string output;
    std::string report;
    uint64_t seed = 1;
    bool no_sharing = false;
    bool no_proof = false;
    size_t jobs = 0;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("CAPTURE", o->capture, "capture to compile (YAML or Cap'n Proto)")->required();
  auto* config = cmd->add_option("--config", o->config, "scheduling configuration, e.g. latency, S256, B1024+paired, B1024+latency-width");
  auto* words = cmd->add_option("--exchange-stream-words", o->stream_words,
                                "production policy B(W): balanced waves of at most W words per tile");
  config->excludes(words);
  words->excludes(config);
  cmd->add_option("--phases", o->phases, "phase ids to compile, e.g. 3,7-40 (default: all)");
  cmd->add_option("--machine", o->machine, "machine name or YAML file (default: the capture's machine)");
  cmd->add_option("-o,--output", o->output, "package to write")->required();
  cmd->add_option("--report", o->report, "write the compile report as JSON to this file");
  auto* seed = add_seed_option(*cmd, "--seed", o->seed, "seed of the payload tokens in source memory (default 1)");
  // The old name, kept working; not listed in --help.
  auto* token_seed = add_seed_option(*cmd, "--token-seed", o->seed, "deprecated spelling of --seed")->group("");
  cmd->add_flag("--no-sharing", o->no_sharing, "store one row copy per phase (no cross-phase sharing)");
  cmd->add_flag("--no-proof", o->no_proof, "leave out the payload checksums and expectations");
  add_jobs_option(*cmd, o->jobs, "threads to compile on (default, or 0: every core; same package at any count)");
  cmd->add_flag("--json", o->json, "print the compile report as one JSON object instead of the table");
  add_common_options(*cmd);
  return [o, config, words, seed, token_seed]() {
    if (seed->count() > 0 && token_seed->count() > 0) {
      throw InputError("--token-seed: the deprecated spelling of --seed; give only --seed");
    }
    if (words->count() > 0 && o->stream_words == 0) throw InputError("--exchange-stream-words: must be at least 1");
    const ThreadLimit threads(o->jobs);
    arch::check_output_file(o->output, "-o");
    arch::refuse_overwriting_input(o->output, {o->capture, o->machine});
    if (!o->report.empty()) {
      arch::check_output_file(o->report, "--report");
      arch::refuse_overwriting_input(o->report, {o->capture, o->machine, o->output});
    }
    StageProgress progress("compile");
    progress.stage("reading " + o->capture);
    StageClock clock;
    const arch::Capture capture = read_capture_input(o->capture);
    std::string machine_name = o->machine;
    if (machine_name.empty()) machine_name = capture.machine_name.empty() ? arch::kDefaultMachine : capture.machine_name;
    const arch::MachineDescription machine = arch::load_machine(machine_name);
    compiler::CompileOptions options;
    if (config->count() > 0) {
      options.config = compiler::parse_config(o->config);
    } else if (words->count() > 0) {
      options.config = compiler::parse_config("B" + std::to_string(o->stream_words));
    } else {
      options.config = compiler::parse_config("latency");
    }
    if (!o->phases.empty()) options.phases = parse_phase_list(o->phases);
    options.token_seed = o->seed;
    options.share_rows = !o->no_sharing;
    options.with_proof = !o->no_proof;
    options.on_progress = [&](const std::string& stage, uint64_t done, uint64_t total) {
      const char* unit = stage == "scheduling" ? " phases" : " phase iterations";
      progress.stage(total == 0 ? stage : stage + " " + std::to_string(done) + "/" + std::to_string(total) + unit);
    };
    progress.stage("scheduling");
    const double reading = clock.lap();
    const compiler::CompileResult result = compiler::compile_capture(capture, machine, options);
    const double compiling = clock.lap();
    progress.stage("validating");
    arch::validate_package(result.package, machine, o->output);
    const double validating = clock.lap();
    progress.stage("writing " + o->output);
    if (ends_with(o->output, ".yaml") || ends_with(o->output, ".yml")) {
      arch::write_package_yaml(result.package, o->output);
    } else {
      arch::write_package_capnp(result.package, o->output);
    }
    if (!o->report.empty()) {
      arch::write_file_atomically(o->report, json_text(report_json(result.report, options.config.name, machine.name)) + "\n");
    }
    progress.finish();
    spdlog::info("reading {:.2f} s, compiling {:.2f} s, validating {:.2f} s, writing {:.2f} s", reading, compiling,
                 validating, clock.lap());
    if (o->json) {
      print_json(report_json(result.report, options.config.name, machine.name));
    } else {
      print_summary(result.report);
    }
    spdlog::info("wrote {} ({} tiles, {} phases)", o->output, result.package.tiles.size(),
                 result.package.phases.size());
    return kExitOk;
  };
}};

}  // namespace
}  // namespace lockstep::cli
