// `lockstep device run PACKAGE --runner CMD -o DIR`: export the image to a temporary folder,
// run the site's runner on it (docs/device.md "Running on a device: the runner contract"),
// check the result folder it leaves with the cross-check's reader, and rename it to DIR.
// A runner that fails, times out or leaves a malformed folder: one line, exit 2, nothing left.
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "arch/machine.hpp"
#include "cli/device_command.hpp"
#include "cli/device_image.hpp"
#include "cli/options.hpp"
#include "io/errors.hpp"
#include "io/input_file.hpp"
#include "io/staged_directory.hpp"
#include "sim/device/device_result.hpp"
#include "sim/device/runner_process.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace device_run_command_local {}
using namespace device_run_command_local;
namespace device_run_command_local {

namespace fs = std::filesystem;

struct RunArgs {
  std::string package;
  std::string runner;
  std::string output_dir;
  uint32_t invocations = 1;
  double timeout_seconds = 3600;
  bool json = false;
  std::string object;
  std::string profiling = "none";
};

// A private folder for the image, removed with everything in it.
class TempFolder {
 public:
  TempFolder() {
    const char* tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/lockstep-device-run-XXXXXX";
    if (::mkdtemp(path.data()) == nullptr) {
      throw InputError(path + ": cannot create the image's folder: " + std::strerror(errno));
    }
    path_ = path;
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string clock_text(double hz) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(0) << hz;
  return out.str();
}

void check_outcome(const RunnerOutcome& outcome, const RunArgs& args) {
  if (outcome.timed_out) {
    throw InputError("device run: the runner took longer than --timeout " + std::to_string(args.timeout_seconds) +
                     " s and was stopped; no result folder written");
  }
  if (outcome.signal != 0) {
    throw InputError("device run: the runner was ended by signal " + std::to_string(outcome.signal) +
                     "; no result folder written");
  }
  if (outcome.exit_code != 0) {
    throw InputError("device run: the runner exited with status " + std::to_string(outcome.exit_code) +
                     "; no result folder written");
  }
}

int run(const RunArgs& args) {
  arch::check_staged_directory(args.output_dir, "-o");
  const std::string package_bytes = arch::read_regular_file(args.package);
  const arch::Package package = read_package_input(args.package);
  const arch::MachineDescription machine = arch::load_machine(package.machine_name);
  TempFolder images;
  const std::string image = images.path() + "/" + fs::path(args.package).stem().string() + ".ipuexe";
  arch::ExportOptions options;
  options.invocations = args.invocations;
  options.host_calls = args.invocations == 1;  // a host call runs the program once
  options.object_path = args.object;
  options.profiling = args.profiling == "full"      ? arch::ProfilingMode::Full
                      : args.profiling == "overall" ? arch::ProfilingMode::Overall
                                                    : arch::ProfilingMode::None;
  const arch::Application app = write_device_image(package, args.package, image, options);
  const std::string host_inputs = images.path() + "/host-inputs";
  write_host_inputs(package, app, host_inputs);
  arch::StagedDirectory staged(args.output_dir, "-o");
  const std::string package_path = fs::absolute(args.package).string();
  const std::string result_dir = fs::absolute(staged.path()).string();
  const std::map<std::string, std::string> env = {
      {"LOCKSTEP_IMAGE", image},
      {"LOCKSTEP_PACKAGE", package_path},
      {"LOCKSTEP_RESULT_DIR", result_dir},
      {"LOCKSTEP_INVOCATIONS", std::to_string(args.invocations)},
      {"LOCKSTEP_CLOCK_HZ", clock_text(machine.clock_hz)},
      {"LOCKSTEP_MACHINE", machine.name},
      {"LOCKSTEP_HOST_INPUTS", host_inputs},
  };
  check_outcome(run_runner(args.runner, {image, result_dir, package_path}, env, args.timeout_seconds), args);
  replay::LoadedResult loaded;
  try {
    loaded = replay::read_device_result(result_dir);
  } catch (const InputError& e) {
    throw InputError(std::string("device run: the runner left a malformed result folder: ") + e.what());
  }
  const std::string digest = replay::package_file_digest(package_bytes);
  if (!loaded.result.package_digest.empty() && loaded.result.package_digest != digest) {
    throw InputError("device run: the runner's result.json names package_digest " + loaded.result.package_digest +
                     ", not this package's " + digest);
  }
  staged.commit();
  if (args.json) {
    std::cout << replay::result_json_text(loaded.result);
  } else {
    std::cout << args.output_dir << ": " << loaded.result.runner << ": " << loaded.result.status << ", "
              << loaded.profile.total_cycles << " cycles, " << loaded.result.outputs.size() << " outputs"
              << (loaded.result.detail.empty() ? "" : "; " + loaded.result.detail) << "\n";
  }
  return loaded.result.status == "ok" ? kExitOk : kExitFailed;
}

const DeviceSubcommandRegistration registration{
    "run", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("run",
                             "Run a package through a site's runner (docs/device.md \"The runner contract\"): export\n"
                             "the device image to a temporary folder, run `/bin/sh -c CMD lockstep-runner IMAGE\n"
                             "RESULT_DIR PACKAGE` with LOCKSTEP_IMAGE, LOCKSTEP_PACKAGE, LOCKSTEP_RESULT_DIR,\n"
                             "LOCKSTEP_INVOCATIONS, LOCKSTEP_CLOCK_HZ and LOCKSTEP_MACHINE set; the runner fills\n"
                             "RESULT_DIR (a temporary sibling of DIR) with the result folder, which is checked and\n"
                             "renamed to DIR. scripts/host-run-runner.sh wraps the IPU21 stack's host-run.\n"
                             "Exit 0 ok, 1 the runner's result says \"failed\", 2 bad input or a runner that exits\n"
                             "non-zero, times out or leaves a malformed folder (nothing written).");
      auto args = std::make_shared<RunArgs>();
      cmd->add_option("PACKAGE", args->package, "the package file")->required();
      cmd->add_option("--runner", args->runner, "the runner command, run by /bin/sh -c")->required();
      cmd->add_option("-o,--output", args->output_dir, "the result folder to make")->required();
      cmd->add_option("--invocations", args->invocations,
                      "run the resident program this many times back to back (the image loops in code)")
          ->check(CLI::Range(1u, 1000u));
      cmd->add_option("--object", args->object,
                      "an ELF object defining the kernels' (and the cycle sample's) symbols, as device export");
      cmd->add_option("--profiling", args->profiling,
                      "cycle samples in the image: none, overall or full, as device export")
          ->check(CLI::IsMember({"none", "overall", "full"}));
      cmd->add_option("--timeout", args->timeout_seconds,
                      "stop the runner and its process group after this many seconds (0: no bound)")
          ->check(finite_non_negative())
          ->capture_default_str();
      cmd->add_flag("--json", args->json, "print result.json's text instead of the one-line summary");
      add_common_options(*cmd);
      return [args]() { return run(*args); };
    }};

}  // namespace device_run_command_local
}  // namespace lockstep::cli
