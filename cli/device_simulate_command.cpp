// `lockstep device simulate PACKAGE -o DIR`: the simulator as a device runner. Runs the
// package on the SystemC model with a cycle profile and leaves the runner contract's result
// folder (docs/device.md): outputs/NAME.bin, profile.lsprof, result.json. The folder is
// written under a temporary name and renamed into place, so it appears whole or not at all.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "arch/machine.hpp"
#include "calibration/costs_file.hpp"
#include "cli/binding_files.hpp"
#include "cli/device_command.hpp"
#include "cli/device_simulate.hpp"
#include "cli/options.hpp"
#include "cli/version.hpp"
#include "cli/watch_option.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "io/input_file.hpp"
#include "io/staged_directory.hpp"
#include "sim/backend.hpp"
#include "sim/device/device_result.hpp"

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
  std::string machine = arch::kDefaultMachine;   // images only
  std::vector<std::string> calls, call_outputs;  // images only
  std::vector<std::string> watches;
  std::string costs;  // --costs FILE
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
    first = "expectation failed: tile " + std::to_string(f.tile) + " address " + address + ": expected " + f.expected +
            ", found " + f.found;
  }
  return first + (count > 1 ? " (and " + std::to_string(count - 1) + " more)" : "");
}

}  // namespace device_simulate_command_local

replay::DeviceResult describe_simulation(const std::string& source, const std::string& source_bytes,
                                         const arch::MachineDescription& machine, uint32_t invocations,
                                         const sim::RunResult& result) {
  replay::DeviceResult r;
  r.runner = replay::kSimulatorRunner;
  r.status = result.ok() ? "ok" : "failed";
  if (!result.ok()) r.detail = failure_detail(result);
  r.package = std::filesystem::path(source).filename().string();
  r.package_digest = replay::package_file_digest(source_bytes);
  r.machine = machine.name;
  r.clock_hz = static_cast<uint64_t>(machine.clock_hz);
  r.invocations = invocations;
  r.total_cycles = result.total_cycles;
  for (const auto& [name, bytes] : result.outputs) {
    r.outputs.push_back({name, replay::output_file_name(name), bytes});
  }
  return r;
}

namespace device_simulate_command_local {

// A device image: binary content without the package's "LKSPKG01" magic (a YAML package is text).
bool is_device_image(const std::string& path) {
  const int fd = arch::open_regular_file(path);
  char head[4096];
  const ssize_t n = ::read(fd, head, sizeof head);
  ::close(fd);
  const std::string_view text(head, n > 0 ? static_cast<size_t>(n) : 0);
  return text.rfind("LKSPKG01", 0) != 0 && text.find('\0') != std::string_view::npos;
}

int simulate(const SimulateArgs& args) {
  if (is_device_image(args.package)) {
    SimulateImageArgs image{args.package, args.output_dir,   args.machine,    args.calls,
                            args.inputs,  args.call_outputs, args.max_cycles, args.timeout_seconds,
                            args.jobs,    args.json,         args.watches,    args.costs};
    if (args.invocations != 1)
      throw InputError(args.package + ": --invocations: an image's calls say how often it runs");
    return simulate_image(image);
  }
  if (!args.calls.empty() || !args.call_outputs.empty())
    throw InputError(args.package +
                     ": --call and --call-output are for device images; a package runs its own host calls");
  arch::check_staged_directory(args.output_dir, "-o");
  const ThreadLimit threads(args.jobs);
  const arch::Package package = read_package_input(args.package);
  const std::string package_bytes = arch::read_regular_file(args.package);
  arch::MachineDescription machine = arch::load_machine(package.machine_name);
  if (!args.costs.empty()) machine.kernel_costs = calibration::read_kernel_costs(args.costs);
  sim::RunOptions options;
  options.source_name = args.package;
  options.profile = true;
  options.invocations = args.invocations;
  options.max_cycles = args.max_cycles;
  options.timeout_seconds = args.timeout_seconds;
  options.watches = parse_watches(args.watches);
  for (const auto& [b, file] : bindings_for(package, args.inputs, arch::BindingKind::Input, "--input")) {
    options.inputs[b->name] = read_input(*b, file);
  }
  const sim::RunResult result = sim::make_systemc_backend(machine)->run(package, options);
  if (!result.stopped.empty()) {
    std::cerr << "stopped: " << result.stopped << "; no result folder written\n";
    return kExitFailed;
  }
  const replay::DeviceResult described =
      describe_simulation(args.package, package_bytes, machine, args.invocations, result);
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
    std::cerr << watch_text(result.watch_writes);  // result.json's text stays alone on stdout
  } else {
    std::cout << args.output_dir << ": " << described.status << ", " << described.total_cycles << " cycles, "
              << described.outputs.size() << " outputs" << (described.detail.empty() ? "" : "; " + described.detail)
              << "\n"
              << watch_text(result.watch_writes);
  }
  return result.ok() ? kExitOk : kExitFailed;
}

const DeviceSubcommandRegistration registration{
    "simulate", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("simulate",
                             "Run a package, or an image the IPU21 stack built, on the SystemC model as a device\n"
                             "runner would, and leave the runner\n"
                             "contract's result folder in DIR (docs/device.md): outputs/NAME.bin per output binding,\n"
                             "profile.lsprof (the cycle profile) and result.json (status, cycles, package digest,\n"
                             "runner \"lockstep-simulator\", clock). DIR must be missing or empty; it appears whole "
                             "or\n"
                             "not at all. Compare two such folders with `lockstep crosscheck`.\n"
                             "An image (.ipuexe: binary, not a package) runs as the stack's `host-run` runs it\n"
                             "(docs/device.md \"Host phases\"): its host calls in order (--call to choose), each\n"
                             "call's input file raw in the call's layout (--input CALL=FILE; absent: empty), each\n"
                             "call's output file raw (--call-output CALL=FILE); outputs/ holds the last call's output\n"
                             "cut into the image's output bindings, profile.lsprof what `profile-extract` makes of\n"
                             "its profile.cycles binding (the model's own profile without one).\n"
                             "Exit 0 ok, 1 a hazard or failed expectation (the folder is written with status\n"
                             "\"failed\") or a run stopped at --max-cycles/--timeout (nothing written), 2 bad input.");
      auto args = std::make_shared<SimulateArgs>();
      cmd->add_option("PACKAGE", args->package, "the package file")->required();
      cmd->add_option("-o,--output", args->output_dir, "the result folder to make")->required();
      cmd->add_option("--input", args->inputs,
                      "[NAME=]FILE: an input binding's values, a .npy array of the binding's element type\n"
                      "and shape, or raw bytes (.bin); NAME may be left out when there is one input "
                      "(repeatable). Images: CALL=FILE, a host call's input file, raw");
      cmd->add_option("--call", args->calls,
                      "images: a host call to invoke, in order (repeatable; default: every call of "
                      "the image once, in its order)");
      cmd->add_option("--call-output", args->call_outputs,
                      "images: CALL=FILE, write the call's output file raw (repeatable)");
      cmd->add_option("--machine", args->machine, "images: the machine to import onto (name or file)")
          ->capture_default_str();
      add_watch_option(*cmd, args->watches);
      cmd->add_option("--costs", args->costs,
                      "kernel cost parameters from `lockstep calibrate` (docs/calibration.md), as `run --costs`");
      cmd->add_option("--invocations", args->invocations,
                      "run the resident program this many times back to back (outputs are the last one's)")
          ->check(CLI::Range(1u, 1000u));
      cmd->add_option("--max-cycles", args->max_cycles,
                      "stop the run (exit 1, nothing written) past this cycle; 0: no bound")
          ->check(unsigned_in(0, UINT64_MAX))
          ->capture_default_str();
      cmd->add_option("--timeout", args->timeout_seconds, "stop the run (exit 1) after this many seconds (0: no bound)")
          ->check(finite_non_negative());
      cmd->add_flag("--json", args->json, "print result.json's text instead of the one-line summary");
      add_jobs_option(*cmd, args->jobs, "threads for the kernels (default, or 0: every core)");
      add_common_options(*cmd);
      return [args]() { return simulate(*args); };
    }};

}  // namespace device_simulate_command_local
}  // namespace lockstep::cli
