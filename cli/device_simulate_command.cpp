// `lockstep device simulate PACKAGE -o DIR`: the simulator as a device runner. Runs the
// package on the SystemC model with a cycle profile and leaves the runner contract's result
// folder (docs/device.md): outputs/NAME.bin, profile.lsprof, result.json. The folder is
// written under a temporary name and renamed into place, so it appears whole or not at all.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "io/input_file.hpp"
#include "arch/machine.hpp"
#include "io/staged_directory.hpp"
#include "cli/binding_files.hpp"
#include "cli/device_command.hpp"
#include "cli/options.hpp"
#include "cli/version.hpp"
#include "sim/device/device_result.hpp"
#include "sim/backend.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace device_simulate_command_local {}
using namespace device_simulate_command_local;
namespace device_simulate_command_local {

struct SimulateArgs {
  std::string package;
  std::string output_dir;
  std::vector<std::string> inputs;
  uint32_t invocations = 1;
  uint64_t max_cycles = 10'000'000'000;
  double timeout_seconds = 0;
  size_t jobs = 0;
  bool json = false;
};

// One line: the first problem of a run that went to its end, and how many there were.
std::string failure_detail(const sim::RunResult& result) {
  const size_t count = result.hazards.size() + result.expectation_failures.size();
  std::string first;
  if (!result.hazards.empty()) {
    first = sim::describe(result.hazards.front());
  } else {
    const auto& f = result.expectation_failures.front();
    char address[16];
    std::snprintf(address, sizeof address, "0x%x", f.address);
    first = "expectation failed: tile " + std::to_string(f.tile) + " address " + address +
            ": expected " + f.expected + ", found " + f.found;
  }
  return first + (count > 1 ? " (and " + std::to_string(count - 1) + " more)" : "");
}

replay::DeviceResult describe_run(const SimulateArgs& args, const std::string& package_bytes,
                                  const arch::MachineDescription& machine,
                                  const sim::RunResult& result) {
  replay::DeviceResult r;
  r.runner = replay::kSimulatorRunner;
  r.status = result.ok() ? "ok" : "failed";
  if (!result.ok()) r.detail = failure_detail(result);
  r.package = std::filesystem::path(args.package).filename().string();
  r.package_digest = replay::package_file_digest(package_bytes);
  r.machine = machine.name;
  r.clock_hz = static_cast<uint64_t>(machine.clock_hz);
  r.invocations = args.invocations;
  r.total_cycles = result.total_cycles;
  for (const auto& [name, bytes] : result.outputs) {
    r.outputs.push_back({name, replay::output_file_name(name), bytes});
  }
  return r;
}

int simulate(const SimulateArgs& args) {
  arch::check_staged_directory(args.output_dir, "-o");
  const ThreadLimit threads(args.jobs);
  const arch::Package package = read_package_input(args.package);
  const std::string package_bytes = arch::read_regular_file(args.package);
  const arch::MachineDescription machine = arch::load_machine(package.machine_name);
  sim::RunOptions options;
  options.source_name = args.package;
  options.profile = true;
  options.invocations = args.invocations;
  options.max_cycles = args.max_cycles;
  options.timeout_seconds = args.timeout_seconds;
  for (const auto& [b, file] : bindings_for(package, args.inputs, arch::BindingKind::Input, "--input")) {
    options.inputs[b->name] = read_input(*b, file);
  }
  const sim::RunResult result = sim::make_systemc_backend(machine)->run(package, options);
  if (!result.stopped.empty()) {
    std::cerr << "stopped: " << result.stopped << "; no result folder written\n";
    return kExitFailed;
  }
  const replay::DeviceResult described = describe_run(args, package_bytes, machine, result);
  arch::Profile profile = result.profile.value_or(arch::Profile{});
  profile.producer = "lockstep " LOCKSTEP_VERSION " (commit " LOCKSTEP_COMMIT ")";
  profile.source = described.package;
  {
    arch::StagedDirectory staged(args.output_dir, "-o");
    replay::write_device_result(described, profile, staged.path());
    staged.commit();
  }
  if (args.json) {
    std::cout << replay::result_json_text(described);
  } else {
    std::cout << args.output_dir << ": " << described.status << ", " << described.total_cycles
              << " cycles, " << described.outputs.size() << " outputs"
              << (described.detail.empty() ? "" : "; " + described.detail) << "\n";
  }
  return result.ok() ? kExitOk : kExitFailed;
}

const DeviceSubcommandRegistration registration{
    "simulate", [](CLI::App& app) {
      auto* cmd = app.add_subcommand(
          "simulate",
          "Run a package on the SystemC model as a device runner would, and leave the runner\n"
          "contract's result folder in DIR (docs/device.md): outputs/NAME.bin per output binding,\n"
          "profile.lsprof (the cycle profile) and result.json (status, cycles, package digest,\n"
          "runner \"lockstep-simulator\", clock). DIR must be missing or empty; it appears whole "
          "or\n"
          "not at all. Compare two such folders with `lockstep crosscheck`.\n"
          "Exit 0 ok, 1 a hazard or failed expectation (the folder is written with status\n"
          "\"failed\") or a run stopped at --max-cycles/--timeout (nothing written), 2 bad input.");
      auto args = std::make_shared<SimulateArgs>();
      cmd->add_option("PACKAGE", args->package, "the package file")->required();
      cmd->add_option("-o,--output", args->output_dir, "the result folder to make")->required();
      cmd->add_option(
          "--input", args->inputs,
          "[NAME=]FILE: an input binding's values, a .npy array of the binding's element type\n"
          "and shape, or raw bytes (.bin); NAME may be left out when there is one input "
          "(repeatable)");
      cmd->add_option(
             "--invocations", args->invocations,
             "run the resident program this many times back to back (outputs are the last one's)")
          ->check(CLI::Range(1u, 1000u));
      cmd->add_option("--max-cycles", args->max_cycles,
                      "stop the run (exit 1, nothing written) past this cycle; 0: no bound")
          ->check(unsigned_in(0, UINT64_MAX))
          ->capture_default_str();
      cmd->add_option("--timeout", args->timeout_seconds,
                      "stop the run (exit 1) after this many seconds (0: no bound)")
          ->check(finite_non_negative());
      cmd->add_flag("--json", args->json,
                    "print result.json's text instead of the one-line summary");
      add_jobs_option(*cmd, args->jobs, "threads for the kernels (default, or 0: every core)");
      add_common_options(*cmd);
      return [args]() { return simulate(*args); };
    }};

}  // namespace
}  // namespace lockstep::cli
