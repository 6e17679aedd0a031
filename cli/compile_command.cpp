// `lockstep compile CAPTURE -o PACKAGE`: schedule, encode and package a capture's phases,
// with the payload proof the simulator checks.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "arch/machine.hpp"
#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "cli/stage_progress.hpp"
#include "compiler/compile.hpp"
#include "formats/capture.hpp"
#include "formats/package.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "report/comparison.hpp"
#include "report/selection.hpp"
#include "results/provenance.hpp"
#include "sim/backend.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace compile_command_local {}
using namespace compile_command_local;
namespace compile_command_local {

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

// `--selection DIR --window ID`: each phase gets the configuration the report selected,
// after checking that the report measured this capture on this machine.
replay::ReportSelection apply_selection(const std::string& dir, const std::string& window,
                                        const std::string& capture_path, const arch::MachineDescription& machine,
                                        compiler::CompileOptions& options) {
  replay::ReportSelection selection = replay::read_report_selection(dir, window);
  const replay::ReportProvenance& p = selection.provenance;
  const std::string digest = replay::file_fnv1a64(capture_path);
  if (p.capture_fnv1a64 != digest) {
    throw InputError("--selection " + dir + ": the report measured capture " +
                     (p.capture.empty() ? "(unknown)" : p.capture) + " (FNV-1a 64 " +
                     (p.capture_fnv1a64.empty() ? "unknown" : p.capture_fnv1a64) + "), not " + capture_path + " (" +
                     digest + ")");
  }
  const std::string machine_digest = arch::machine_digest(machine);
  if (!p.machine_digest.empty() && p.machine_digest != machine_digest) {
    throw InputError("--selection " + dir + ": the report measured machine " + p.machine + " (digest " +
                     p.machine_digest + "), not " + machine.name + " (" + machine_digest + ")");
  }
  std::vector<uint32_t> phases;
  for (const auto& phase : selection.phases) {
    options.phase_configs[phase.phase] = compiler::parse_config(phase.compiler_config);
    phases.push_back(phase.phase);
  }
  options.phases = phases;
  options.config = compiler::parse_config("latency");  // unused: every phase has its own
  return selection;
}

// Runs the selected package on the simulator and prints what it measured beside the
// report's estimate. Exit 1 if the run is not clean (hazard, payload, limit).
int measure_selection(const replay::ReportSelection& selection, const compiler::CompileResult& result,
                      const arch::MachineDescription& machine, bool run, bool json) {
  std::optional<sim::RunResult> measured;
  if (run) measured = sim::make_systemc_backend(machine)->run(result.package, sim::RunOptions{});
  const int64_t saved = selection.weighted_cycles_saved;
  // The estimate's own measure, on the package: per phase the simulated horizon (the
  // largest over its executions, as a sweep records it) x its execution count.
  uint64_t measured_weighted = 0;
  if (measured) {
    std::map<uint32_t, uint64_t> horizon;
    for (const auto& e : measured->executions) horizon[e.phase] = std::max<uint64_t>(horizon[e.phase], e.horizon);
    for (const auto& p : result.report.phases) measured_weighted += horizon[p.phase] * p.execution_count;
  }
  std::string configs;
  for (const auto& p : selection.phases)
    configs += (configs.empty() ? "" : ", ") + std::to_string(p.phase) + " " + p.point;
  if (json) {
    nlohmann::ordered_json j;
    j["window"] = selection.window_id;
    j["phases"] = selection.phases.size();
    j["estimated_exchange_cycles"] = selection.selected_weighted_cycles;
    j["reference_exchange_cycles"] = selection.reference_weighted_cycles;
    j["estimated_largest_phase_table_bytes"] = selection.largest_phase_table_bytes;
    j["table_peak_bytes"] = result.report.table_bytes_shared;
    if (measured) {
      j["measured_weighted_exchange_cycles"] = measured_weighted;
      j["measured_total_cycles"] = measured->total_cycles;
      j["measured_exchange_cycles"] = measured->cycle_split.exchange;
      j["run_ok"] = measured->ok();
    }
    print_json(j);
  } else {
    std::printf("selection: window %s (%s), %zu phases: %s\n", selection.window_id.c_str(), selection.window.c_str(),
                selection.phases.size(), configs.c_str());
    std::printf(
        "estimate:  %llu weighted exchange cycles (reference %llu, saved %lld, %s%%); largest phase table "
        "%llu bytes (phases alone)\n",
        static_cast<unsigned long long>(selection.selected_weighted_cycles),
        static_cast<unsigned long long>(selection.reference_weighted_cycles), static_cast<long long>(saved),
        replay::format_percent(saved, selection.reference_weighted_cycles).c_str(),
        static_cast<unsigned long long>(selection.largest_phase_table_bytes));
    if (measured) {
      const model::CycleSplit& split = measured->cycle_split;
      std::printf(
          "measured:  %llu weighted exchange cycles; whole program %llu cycles (critical path: exchange "
          "%llu, compute %llu, sync %llu, patching %llu, control %llu); table peak %u bytes\n",
          static_cast<unsigned long long>(measured_weighted), static_cast<unsigned long long>(measured->total_cycles),
          static_cast<unsigned long long>(split.exchange), static_cast<unsigned long long>(split.compute),
          static_cast<unsigned long long>(split.sync), static_cast<unsigned long long>(split.patching),
          static_cast<unsigned long long>(split.control), result.report.table_bytes_shared);
    } else {
      std::printf("measured:  not run (--no-run); table peak %u bytes; run it with: lockstep run PACKAGE\n",
                  result.report.table_bytes_shared);
    }
  }
  if (measured && !measured->ok()) {
    std::fprintf(stderr, "compile: the selected package did not run clean: %zu hazards, %zu expectation failures%s\n",
                 measured->hazards.size(), measured->expectation_failures.size(),
                 measured->stopped.empty() ? "" : (", stopped: " + measured->stopped).c_str());
    return kExitFailed;
  }
  return kExitOk;
}

const CommandRegistration registration{
    "compile", [](CLI::App& app) {
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
          "the same as one JSON object, the one --report writes.\n"
          "--selection DIR --window ID applies a sweep report: each phase the report holds is\n"
          "compiled with the configuration window ID selected (ids in DIR/comparisons.csv:\n"
          "same-storage, row+64, ...), after checking DIR/provenance.json names this capture\n"
          "and machine; the package is then run on the simulator and its whole-program cycles\n"
          "and table peak printed beside the report's estimate (--no-run skips the run).\n"
          "Example: lockstep compile out/demo/capture.capnp --selection out/demo/sweep --window row+64 -o sel.pkg");
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
        uint64_t device_proof = 0;
        size_t jobs = 0;
        bool json = false;
        std::string selection;
        std::string window;
        bool no_run = false;
      };
      auto o = std::make_shared<Options>();
      cmd->add_option("CAPTURE", o->capture, "capture to compile (YAML or Cap'n Proto)")->required();
      auto* config = cmd->add_option("--config", o->config,
                                     "scheduling configuration, e.g. latency, S256, B1024+paired, B1024+latency-width");
      auto* words = cmd->add_option("--exchange-stream-words", o->stream_words,
                                    "production policy B(W): balanced waves of at most W words per tile");
      config->excludes(words);
      words->excludes(config);
      auto* phases_option = cmd->add_option("--phases", o->phases, "phase ids to compile, e.g. 3,7-40 (default: all)");
      auto* selection = cmd->add_option("--selection", o->selection,
                                        "a sweep report folder: compile each of its phases with the configuration "
                                        "its --window selected, then run the package");
      auto* window = cmd->add_option("--window", o->window,
                                     "with --selection: the comparison window, by id (same-storage, row+64, ...) or "
                                     "full name");
      auto* no_run = cmd->add_flag("--no-run", o->no_run, "with --selection: build the package but do not run it");
      selection->excludes(config)->excludes(words)->excludes(phases_option);
      window->needs(selection);
      no_run->needs(selection);
      cmd->add_option("--machine", o->machine, "machine name or YAML file (default: the capture's machine)");
      cmd->add_option("-o,--output", o->output, "package to write")->required();
      cmd->add_option("--report", o->report, "write the compile report as JSON to this file");
      auto* seed = add_seed_option(*cmd, "--seed", o->seed, "seed of the payload tokens in source memory (default 1)");
      // The old name, kept working; not listed in --help.
      auto* token_seed = add_seed_option(*cmd, "--token-seed", o->seed, "deprecated spelling of --seed")->group("");
      cmd->add_flag("--no-sharing", o->no_sharing, "store one row copy per phase (no cross-phase sharing)");
      auto* no_proof = cmd->add_flag("--no-proof", o->no_proof, "leave out the payload checksums and expectations");
      cmd->add_option("--device-proof", o->device_proof,
                      "instead of the checksums and expectations, an output binding proof.sampled over about N\n"
                      "destination words, which a device reads back (device export needs no checksum kernel)")
          ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30))
          ->excludes(no_proof);
      add_jobs_option(*cmd, o->jobs, "threads to compile on (default, or 0: every core; same package at any count)");
      cmd->add_flag("--json", o->json, "print the compile report as one JSON object instead of the table");
      add_common_options(*cmd);
      return [o, config, words, seed, token_seed, selection]() {
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
        if (machine_name.empty())
          machine_name = capture.machine_name.empty() ? arch::kDefaultMachine : capture.machine_name;
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
        std::optional<replay::ReportSelection> chosen;
        if (selection->count() > 0) chosen = apply_selection(o->selection, o->window, o->capture, machine, options);
        options.token_seed = o->seed;
        options.share_rows = !o->no_sharing;
        options.with_proof = !o->no_proof && o->device_proof == 0;
        options.sampled_proof_words = o->device_proof;
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
        arch::write_package(result.package, o->output);
        if (!o->report.empty()) {
          arch::write_file_atomically(
              o->report,
              json_text(report_json(result.report, chosen ? "selection " + chosen->window_id : options.config.name,
                                    machine.name)) +
                  "\n");
        }
        progress.finish();
        spdlog::info("reading {:.2f} s, compiling {:.2f} s, validating {:.2f} s, writing {:.2f} s", reading, compiling,
                     validating, clock.lap());
        const std::string config_name = chosen ? "selection " + chosen->window_id : options.config.name;
        if (chosen) {
          spdlog::info("wrote {} ({} tiles, {} phases)", o->output, result.package.tiles.size(),
                       result.package.phases.size());
          if (!o->json) print_summary(result.report);
          return measure_selection(*chosen, result, machine, !o->no_run, o->json);
        }
        if (o->json) {
          print_json(report_json(result.report, config_name, machine.name));
        } else {
          print_summary(result.report);
        }
        spdlog::info("wrote {} ({} tiles, {} phases)", o->output, result.package.tiles.size(),
                     result.package.phases.size());
        return kExitOk;
      };
    }};

}  // namespace compile_command_local
}  // namespace lockstep::cli
