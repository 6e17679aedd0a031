// `lockstep run PACKAGE`: runs a package on the SystemC model of the machine it names,
// prints total cycles and each phase's horizon, writes output bindings, reports hazards
// and expectation failures.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <utility>

#include "arch/machine.hpp"
#include "calibration/costs_file.hpp"
#include "cli/binding_files.hpp"
#include "cli/command_registry.hpp"
#include "cli/logging.hpp"
#include "cli/options.hpp"
#include "cli/profile_output.hpp"
#include "cli/run_reference.hpp"
#include "cli/stop_option.hpp"
#include "cli/watch_option.hpp"
#include "formats/npy.hpp"
#include "formats/package.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "io/file_names.hpp"
#include "io/input_file.hpp"
#include "sim/backend.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace run_command_local {}
using namespace run_command_local;
namespace run_command_local {

struct RunArgs {
  std::string package;
  size_t jobs = 0;  // oneTBB threads of the kernels and the reference
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  uint32_t invocations = 1;
  uint64_t max_cycles = 10'000'000'000;  // 6.7 s of device time at 1.5 GHz: 340x the whole SigLIP
  double timeout_seconds = 0;
  std::string output_dir;
  std::string profile;  // --profile FILE
  bool json = false;
  std::string exchange_detail;
  std::string reference_weights;
  bool keep_going = false;
  bool reference = false;
  bool phases = false;               // --phases: a line per phase execution
  std::vector<std::string> watches;  // --watch TILE:ADDRESS[:BYTES]
  StopArgs stop;                     // --stop-at, --dump, --dump-rows
  bool allow_non_finite = false;     // keep NaN and infinities in --input arrays
  std::string costs;                 // --costs FILE: fitted kernel cost parameters
};

// The critical path's split (docs/timing.md, "Where the cycles go"); the parts add up to
// the total.
nlohmann::ordered_json split_json(const model::CycleSplit& split) {
  nlohmann::ordered_json by_kernel = nlohmann::ordered_json::object();
  for (const auto& [name, cycles] : split.compute_by_kernel) by_kernel[name] = cycles;
  nlohmann::ordered_json j = {{"exchange", split.exchange},
                              {"compute", split.compute},
                              {"sync", split.sync},
                              {"patching", split.patching},
                              {"control", split.control}};
  if (split.host > 0) j["host"] = split.host;  // only packages with host phases
  j["compute_by_kernel"] = by_kernel;
  return j;
}

std::string split_text(const model::CycleSplit& split) {
  std::string kernels;
  for (const auto& [name, cycles] : split.compute_by_kernel) {
    kernels += (kernels.empty() ? "" : ", ") + name + " " + std::to_string(cycles);
  }
  return "cycles on the critical path: exchange " + std::to_string(split.exchange) + ", compute " +
         std::to_string(split.compute) + ", sync " + std::to_string(split.sync) + ", patching " +
         std::to_string(split.patching) + ", control " + std::to_string(split.control) +
         (split.host > 0 ? ", host " + std::to_string(split.host) : std::string()) + "\n" +
         "compute by kernel: " + (kernels.empty() ? "none" : kernels) + "\n";
}

// Events count from the phase's release (event 0 = release_cycle).
nlohmann::ordered_json execution_json(const sim::PhaseExecution& e, bool with_tiles) {
  nlohmann::ordered_json j = {
      {"phase", e.phase},     {"iteration", e.iteration},       {"release_cycle", e.release_cycle},
      {"horizon", e.horizon}, {"last_arrival", e.last_arrival}, {"before", split_json(e.before)}};
  if (!with_tiles) return j;
  nlohmann::ordered_json tiles = nlohmann::ordered_json::array();
  for (const auto& t : e.tiles) {
    nlohmann::ordered_json received = nlohmann::ordered_json::array();
    for (const auto& r : t.received) {
      received.push_back({{"from_tile", r.sender},
                          {"address", r.address},
                          {"source_address", r.source_address},
                          {"bytes", r.bytes},
                          {"first_write_event", r.first_write_event},
                          {"last_write_event", r.last_write_event}});
    }
    tiles.push_back({{"tile", t.tile}, {"row_end", t.row_end}, {"received", received}});
  }
  j["tiles"] = std::move(tiles);
  return j;
}

double milliseconds(uint64_t cycles, const arch::MachineDescription& machine) {
  return 1e3 * double(cycles) / machine.clock_hz;
}

// One comparison with the FP32 reference: an invocation's output against the reference from the
// package's weights or from --reference-weights (before quantisation).
struct ReferenceCheck {
  size_t invocation = 0;
  bool unquantised = false;
  workload::Agreement agreement;
};

// The summary: its size grows with phase executions, hazards and invocations, never with the
// write runs inside a phase (those go to --exchange-detail).
void print_json(const RunArgs& args, const arch::MachineDescription& machine, const sim::RunResult& result,
                const std::vector<ReferenceCheck>& checks) {
  nlohmann::ordered_json j;
  j["package"] = std::filesystem::path(args.package).filename().string();
  j["machine"] = machine.name;
  if (!args.costs.empty()) j["costs"] = args.costs;
  j["total_cycles"] = result.total_cycles;
  j["total_milliseconds"] = milliseconds(result.total_cycles, machine);
  j["cycle_split"] = split_json(result.cycle_split);
  j["invocations"] = nlohmann::ordered_json::array();
  uint64_t start = 0;
  for (uint64_t end : result.invocation_ends) {
    j["invocations"].push_back(
        {{"end_cycle", end}, {"cycles", end - start}, {"milliseconds", milliseconds(end - start, machine)}});
    start = end;
  }
  if (!checks.empty()) {
    j["reference"] = nlohmann::ordered_json::array();
    for (const ReferenceCheck& c : checks) {
      j["reference"].push_back({{"invocation", c.invocation},
                                {"weights", c.unquantised ? "unquantised" : "package"},
                                {"cosine", c.agreement.cosine},
                                {"max_abs_error", c.agreement.max_abs_error}});
    }
  }
  j["executions"] = nlohmann::ordered_json::array();
  for (const auto& e : result.executions) j["executions"].push_back(execution_json(e, false));
  j["hazards"] = nlohmann::ordered_json::array();
  for (const auto& h : result.hazards) {
    const sim::ChipError chip = sim::chip_error(h);
    nlohmann::ordered_json on_chip = nullptr;  // null: the chip raises nothing for it
    if (chip.exception != 0) {
      on_chip = {{"exception", chip.exception},
                 {"exception_name", sim::exception_name(chip.exception)},
                 {"receive_error", chip.receive_error},
                 {"receive_error_name", sim::receive_error_name(chip.receive_error)}};
    }
    j["hazards"].push_back({{"kind", sim::hazard_name(h.kind)},
                            {"tile", h.tile},
                            {"phase", h.phase},
                            {"iteration", h.iteration},
                            {"cycle", h.cycle},
                            {"row_offset", h.row_offset},
                            {"instruction", h.instruction},
                            {"detail", h.detail},
                            {"chip", on_chip}});
  }
  j["expectation_failures"] = nlohmann::ordered_json::array();
  for (const auto& f : result.expectation_failures) {
    j["expectation_failures"].push_back(
        {{"tile", f.tile}, {"address", f.address}, {"expected", f.expected}, {"found", f.found}});
  }
  if (!args.watches.empty()) j["watch"] = watch_json(result.watch_writes);
  j["ok"] = result.ok();
  std::cout << json_text(j) << "\n";
}

void print_text(const arch::MachineDescription& machine, const sim::RunResult& result,
                const std::vector<ReferenceCheck>& checks, bool phases) {
  std::cout << "machine " << machine.name << "\n";
  std::cout << "total cycles " << result.total_cycles << ", " << milliseconds(result.total_cycles, machine) << " ms\n";
  const size_t invocations = result.invocation_ends.size();
  uint64_t start = 0;
  for (size_t i = 0; i < invocations && invocations > 1; ++i) {
    const uint64_t cycles = result.invocation_ends[i] - start;
    std::cout << "invocation " << i << ": " << cycles << " cycles, " << milliseconds(cycles, machine) << " ms\n";
    start = result.invocation_ends[i];
  }
  for (const ReferenceCheck& c : checks) {
    char line[200];
    const std::string which = (c.unquantised ? std::string("unquantised weights: ") : std::string()) +
                              (invocations > 1 ? "invocation " + std::to_string(c.invocation) + ": " : "");
    std::snprintf(line, sizeof line, "reference: %scosine %.9f, max abs error %.6f\n", which.c_str(),
                  c.agreement.cosine, c.agreement.max_abs_error);
    std::cout << line;
  }
  std::cout << split_text(result.cycle_split);
  if (phases) {
    std::cout << "phase  iteration  release_cycle  horizon\n";
    for (const auto& e : result.executions) {
      std::cout << e.phase << "  " << e.iteration << "  " << e.release_cycle << "  " << e.horizon << "\n";
    }
  } else {
    std::cout << "phase executions " << result.executions.size() << " (--phases lists them)\n";
  }
  std::cout << watch_text(result.watch_writes);
  for (const auto& h : result.hazards) std::cout << sim::describe(h) << "\n";
  for (const auto& f : result.expectation_failures) {
    std::cout << "expectation failed: tile " << f.tile << " address 0x" << std::hex << f.address << std::dec
              << ": expected " << f.expected << ", found " << f.found << "\n";
  }
  std::cout << (result.ok() ? "ok" : "FAILED") << "\n";
}

// Every file the run reads: no output may be one of them.
std::vector<std::string> inputs_of(const RunArgs& args) {
  std::vector<std::string> inputs{args.package};
  if (!args.reference_weights.empty()) inputs.push_back(args.reference_weights);
  for (const auto& spec : args.inputs) {
    const size_t equals = spec.find('=');
    inputs.push_back(equals == std::string::npos ? spec : spec.substr(equals + 1));
  }
  return inputs;
}

// The --output files, checked before the run: typed bindings and existing folders.
std::vector<std::pair<const arch::Binding*, std::string>> npy_outputs(const arch::Package& package,
                                                                      const RunArgs& args) {
  std::vector<std::pair<const arch::Binding*, std::string>> outputs;
  for (const auto& [b, file] : bindings_for(package, args.outputs, arch::BindingKind::Output, "--output")) {
    if (!is_npy(file)) throw InputError("--output " + file + ": expected a .npy file");
    arch::check_output_file(file, "--output");
    arch::refuse_overwriting_input(file, inputs_of(args));
    npy_type(*b, file);
    outputs.emplace_back(b, file);
  }
  return outputs;
}

void write_outputs(const RunArgs& args, const std::vector<std::pair<const arch::Binding*, std::string>>& npy,
                   const sim::RunResult& result) {
  if (!args.output_dir.empty()) {
    arch::create_output_directory(args.output_dir, "--output-dir");
    for (const auto& [name, bytes] : result.outputs) {
      const std::string path =
          (std::filesystem::path(args.output_dir) / (arch::escaped_file_name(name) + ".bin")).string();
      arch::write_file_atomically(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    }
  }
  for (const auto& [binding, file] : npy) {
    arch::write_npy(file,
                    arch::make_npy(npy_type(*binding, file), npy_shape(*binding), result.outputs.at(binding->name)));
  }
}

// The run; with a detail file, every phase execution's tiles are written to it as one JSON
// line when the phase ends (so memory does not grow with them), and the file appears whole at
// the end of the run.
sim::RunResult simulate(const arch::Package& package, const arch::MachineDescription& machine, sim::RunOptions options,
                        const std::string& detail) {
  auto backend = sim::make_systemc_backend(machine);
  if (detail.empty()) return backend->run(package, options);
  sim::RunResult result;
  arch::write_file_atomically(detail, [&](int fd) {
    std::string buffer;
    const auto drain = [&] {
      for (size_t done = 0; done < buffer.size();) {
        const ssize_t n = ::write(fd, buffer.data() + done, buffer.size() - done);
        if (n < 0) throw std::runtime_error(std::strerror(errno));
        done += static_cast<size_t>(n);
      }
      buffer.clear();
    };
    options.after_exchange = [&](const sim::PhaseExecution& e, sim::MemoryView&) {
      buffer += execution_json(e, true).dump() + "\n";
      if (buffer.size() > (1u << 20)) drain();
    };
    result = backend->run(package, options);
    drain();
  });
  return result;
}

int run(const RunArgs& args) {
  const ThreadLimit threads(args.jobs);
  const arch::Package package = read_package_input(args.package);
  arch::MachineDescription machine = arch::load_machine(package.machine_name);
  if (!args.costs.empty()) machine.kernel_costs = calibration::read_kernel_costs(args.costs);
  sim::RunOptions options;
  options.keep_going = args.keep_going;
  options.source_name = args.package;
  options.record_tiles = !args.exchange_detail.empty();
  options.keep_tiles = false;  // streamed to --exchange-detail, never kept
  options.invocation_outputs = args.reference || !args.reference_weights.empty();
  if (auto t = trace_tile()) options.trace_tile = *t;
  options.invocations = args.invocations;
  options.watches = parse_watches(args.watches);
  StopArgs stop = args.stop;
  apply_stop(stop, options, inputs_of(args));
  options.max_cycles = args.max_cycles;
  options.timeout_seconds = args.timeout_seconds;
  options.profile = !args.profile.empty();
  if (options.profile) check_profile_output(args.profile, inputs_of(args));
  for (const auto& [b, file] : bindings_for(package, args.inputs, arch::BindingKind::Input, "--input")) {
    options.inputs[b->name] = read_input(*b, file, args.allow_non_finite);
  }
  const auto npy = npy_outputs(package, args);
  if (!args.output_dir.empty()) arch::check_output_directory(args.output_dir, "--output-dir");
  if (!args.exchange_detail.empty()) {
    arch::check_output_file(args.exchange_detail, "--exchange-detail");
    arch::refuse_overwriting_input(args.exchange_detail, inputs_of(args));
  }
  const bool reference_wanted = args.reference || !args.reference_weights.empty();
  std::vector<float> reference, unquantised;
  if (reference_wanted) reference = package_reference(package, machine, args.package, options.inputs);
  if (!args.reference_weights.empty()) {
    unquantised = package_reference(package, machine, args.package, options.inputs, args.reference_weights);
  }
  sim::RunResult result = simulate(package, machine, options, args.exchange_detail);  // its profile is moved out

  if (!result.stopped.empty()) {
    std::cerr << "stopped: " << result.stopped << "; no outputs written\n";
    return kExitFailed;
  }
  std::ostringstream said;
  if (finish_stop(stop, result, args.json ? said : std::cout)) {
    if (args.json) {
      nlohmann::ordered_json j = {
          {"stopped_at", result.stopped_at}, {"total_cycles", result.total_cycles}, {"dumps", stop.files}};
      if (!args.watches.empty()) j["watch"] = watch_json(result.watch_writes);
      std::cout << json_text(j) << "\n";
    } else {
      std::cout << watch_text(result.watch_writes);
    }
    return kExitOk;
  }
  if (args.json && !said.str().empty()) std::cerr << said.str();
  write_outputs(args, npy, result);
  if (result.profile) {
    // Moved, not copied: the whole model's profile holds 1.7 M samples.
    write_run_profile(std::move(*result.profile), std::filesystem::path(args.package).filename().string(),
                      args.profile);
    result.profile.reset();
  }
  std::vector<ReferenceCheck> checks;  // per invocation, against each reference
  if (reference_wanted) {
    std::vector<const std::map<std::string, std::vector<uint8_t>>*> outputs;
    for (const auto& o : result.invocation_outputs) outputs.push_back(&o);
    outputs.push_back(&result.outputs);
    for (size_t i = 0; i < outputs.size(); ++i) {
      checks.push_back({i, false, compare_output(*outputs[i], reference)});
      if (!unquantised.empty()) checks.push_back({i, true, compare_output(*outputs[i], unquantised)});
    }
  }
  if (args.json) {
    print_json(args, machine, result, checks);
  } else {
    print_text(machine, result, checks, args.phases);
  }
  return result.ok() ? kExitOk : kExitFailed;
}

const CommandRegistration registration{
    "run", [](CLI::App& app) {
      auto* cmd = app.add_subcommand(
          "run",
          "Run a package (Cap'n Proto or YAML) on the SystemC model of the machine it names.\n"
          "Prints the total cycles and where they went, the number of phase executions (--phases\n"
          "lists each with its release cycle and horizon), every hazard (class, tile, phase,\n"
          "iteration, cycle, row offset, instruction) and every failed expectation. By default\n"
          "the first hazard stops the run; --keep-going collects all.\n"
          "--reference compares a whole model's output with its FP32 reference (docs/reference.md).\n"
          "Outputs: -o/--output [NAME=]FILE.npy per output binding, or --output-dir DIR for all.\n"
          "Runs on --jobs threads (default: every core); the results are the same at any count.\n"
          "Exit 0 ok, 1 a hazard or failed expectation, 2 bad input.");
      auto args = std::make_shared<RunArgs>();
      cmd->add_option("PACKAGE", args->package, "the package file")->required();
      cmd->add_option("--input", args->inputs,
                      "[NAME=]FILE: an input binding's values, a .npy array of the binding's element type\n"
                      "and shape, or raw bytes (.bin); NAME may be left out when there is one input (repeatable)");
      cmd->add_option("-o,--output", args->outputs,
                      "[NAME=]FILE.npy: write an output binding as a .npy array of its element type and\n"
                      "shape; NAME may be left out when there is one output (repeatable)");
      cmd->add_option("--invocations", args->invocations,
                      "run the resident program this many times back to back and print each one's cycles\n"
                      "and milliseconds at the machine's clock (outputs are the last one's; --reference\n"
                      "compares each)")
          ->check(CLI::Range(1u, 1000u));
      cmd->add_option("--max-cycles", args->max_cycles,
                      "stop the run (exit 1, outputs not written) once a tile passes this simulated cycle;\n"
                      "0: no bound")
          ->check(unsigned_in(0, UINT64_MAX))
          ->capture_default_str();
      cmd->add_option("--timeout", args->timeout_seconds,
                      "stop the run (exit 1) after this many seconds of wall time (default 0: no bound)")
          ->check(finite_non_negative());
      cmd->add_option("--output-dir", args->output_dir,
                      "write each output binding to DIR/NAME.bin, NAME escaped to one file name (/ becomes %2F; DIR is "
                      "made if missing)");
      cmd->add_flag("--json", args->json,
                    "print the result as one JSON object: totals, invocations, the reference per invocation,\n"
                    "each phase execution (phase, iteration, release, horizon), hazards, failed expectations;\n"
                    "its size does not grow with the write runs inside a phase");
      cmd->add_option("--exchange-detail", args->exchange_detail,
                      "write FILE as JSON Lines, one line per phase execution, streamed as the run goes: each\n"
                      "tile's row end and, per received run, its sender, addresses, bytes and first and last\n"
                      "write event (events from the phase's release)");
      cmd->add_flag("--keep-going", args->keep_going, "collect every hazard instead of stopping");
      add_watch_option(*cmd, args->watches);
      add_stop_options(*cmd, args->stop);
      cmd->add_flag("--allow-non-finite", args->allow_non_finite,
                    "keep NaN and infinite values in --input arrays (refused by default, naming the\n"
                    "element: one poisons every output)");
      cmd->add_flag("--phases", args->phases,
                    "print a line per phase execution: phase, Repeat iteration, release cycle, horizon");
      cmd->add_option("--profile", args->profile,
                      "write a cycle profile (Cap'n Proto, docs/profiles.md): per tile, a sample per executed\n"
                      "step with its cycles, kind, phase, epoch, operation, kernel and exchange activities;\n"
                      "read it with `lockstep profile summary|phases|query|render|export`");
      cmd->add_option("--costs", args->costs,
                      "kernel cost parameters from `lockstep calibrate` (docs/calibration.md): the kernels it\n"
                      "lists take their cycles from the fitted parameters, the rest keep their built-in models");
      add_jobs_option(*cmd, args->jobs, "threads for the kernels and the reference (default, or 0: every core)");
      cmd->add_flag("--reference", args->reference,
                    "hold the `output` binding against the separate FP32 reference of the model (a package\n"
                    "made by `lockstep build`: its recorded workload, the weights as its segments hold them,\n"
                    "the `patches` input the run uses) and print the cosine similarity and maximum absolute\n"
                    "error; with --invocations N each invocation's output is compared and printed");
      cmd->add_option("--reference-weights", args->reference_weights,
                      "FILE.safetensors: also compare with the FP32 reference run on these weights as given,\n"
                      "before FP8 quantisation (the file `build --weights` read), which shows what saturation\n"
                      "and rounding cost; implies --reference");
      add_common_options(*cmd);
      return [args]() { return run(*args); };
    }};

}  // namespace run_command_local
}  // namespace lockstep::cli
