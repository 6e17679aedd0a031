// `lockstep calibrate PROFILE... -o costs.yaml`: fit every kernel's cost parameters to the
// compute samples of measured profiles (docs/calibration.md).
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "calibration/costs_file.hpp"
#include "calibration/fit.hpp"
#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "cli/profile_cli.hpp"
#include "io/atomic_file.hpp"
#include "sim/device/device_result.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace calibrate_command_local {}
using namespace calibrate_command_local;
namespace calibrate_command_local {

struct CalibrateArgs {
  std::vector<std::string> profiles;
  std::string output;
  std::string machine = arch::kDefaultMachine;
  bool json = false;
};

// A runner's result folder holds its profile as DIR/profile.lsprof (docs/device.md).
std::string profile_path(const std::string& argument) {
  if (std::filesystem::is_directory(argument)) return (std::filesystem::path(argument) / replay::kProfileFile).string();
  return argument;
}

// "per_value 12, launch 15 (held)"
std::string parameters_text(const calibration::KernelFit& fit) {
  std::string out;
  for (size_t i = 0; i < fit.parameters.size(); ++i) {
    out += (i ? ", " : "") + fit.parameters[i] + " " + calibration::cost_text(fit.fitted[i]) +
           (fit.held[i] ? " (held)" : "");
  }
  return out;
}

void print_text(const calibration::Calibration& c) {
  TextTable table;
  table.headers = {"kernel",     "samples",    "shapes",    "mean_cycles", "parameters",
                   "rms_before", "max_before", "rms_after", "max_after"};
  for (const auto& fit : c.kernels) {
    table.rows.push_back({fit.kernel, std::to_string(fit.samples), std::to_string(fit.shapes),
                          calibration::cost_text(fit.mean_cycles), parameters_text(fit),
                          calibration::cost_text(fit.rms_before), calibration::cost_text(fit.max_before),
                          calibration::cost_text(fit.rms_after), calibration::cost_text(fit.max_after)});
  }
  table.print_text(std::cout);
  for (const auto& [symbol, count] : c.skipped) {
    std::cout << "skipped " << count << " compute samples of '" << symbol
              << "': no kernelSpec a Lockstep cost model reads\n";
  }
  if (c.without_call_cycles > 0) {
    std::cout << c.without_call_cycles << " samples had no callCycles: their call sequence is in the constant term\n";
  }
}

nlohmann::ordered_json calibration_json(const calibration::Calibration& c) {
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const auto& fit : c.kernels) {
    nlohmann::ordered_json parameters = nlohmann::ordered_json::object();
    for (size_t i = 0; i < fit.parameters.size(); ++i) {
      parameters[fit.parameters[i]] = {
          {"default", fit.defaults[i]}, {"fitted", fit.fitted[i]}, {"held", bool(fit.held[i])}};
    }
    kernels.push_back({{"kernel", fit.kernel},
                       {"samples", fit.samples},
                       {"shapes", fit.shapes},
                       {"mean_cycles", fit.mean_cycles},
                       {"parameters", parameters},
                       {"residual_before", {{"rms", fit.rms_before}, {"max", fit.max_before}}},
                       {"residual_after", {{"rms", fit.rms_after}, {"max", fit.max_after}}}});
  }
  nlohmann::ordered_json skipped = nlohmann::ordered_json::object();
  for (const auto& [symbol, count] : c.skipped) skipped[symbol] = count;
  return {{"clock_hz", c.clock_hz},
          {"kernels", kernels},
          {"skipped", skipped},
          {"without_call_cycles", c.without_call_cycles}};
}

int calibrate(const CalibrateArgs& args) {
  std::vector<std::string> paths;
  for (const std::string& p : args.profiles) paths.push_back(profile_path(p));
  if (!args.output.empty()) {
    arch::check_output_file(args.output, "-o");
    arch::refuse_overwriting_input(args.output, paths);
  }
  const arch::MachineDescription machine = arch::load_machine(args.machine);
  std::vector<arch::Profile> profiles;
  for (const std::string& path : paths) profiles.push_back(arch::read_profile(path));
  const calibration::Calibration result = calibration::calibrate(profiles, paths, machine);
  if (result.kernels.empty()) {
    throw InputError(paths.front() + (paths.size() > 1 ? " and the others" : "") +
                     ": no compute sample names a kernel with a cost model (kernelSpec metadata); nothing to fit");
  }
  if (!args.output.empty()) arch::write_file_atomically(args.output, calibration::kernel_costs_text(result));
  if (args.json) {
    std::cout << json_text(calibration_json(result)) << "\n";
  } else {
    print_text(result);
  }
  return kExitOk;
}

const CommandRegistration registration{
    "calibrate", [](CLI::App& app) {
      auto* cmd = app.add_subcommand(
          "calibrate",
          "Fit each kernel's cost parameters to the compute samples of measured profiles: a\n"
          "device's (a runner's result folder, or profile-extract's output) or Lockstep's own, in\n"
          "either layout. A sample counts when its kernelSpec metadata names a kernel with a cost\n"
          "model (`lockstep run --profile` and `device export --profiling full` write it); its\n"
          "cycles per call are (duration - callCycles) / invocations. Least squares per kernel;\n"
          "parameters the measured shapes cannot tell apart keep their defaults (marked held).\n"
          "Prints per kernel the samples, distinct shapes, fitted parameters and the residual per\n"
          "call before (built-in parameters) and after; -o writes the costs file `run --costs`\n"
          "reads. docs/calibration.md.\n"
          "Example: lockstep calibrate device-result/ -o costs.yaml && lockstep run m.lkspkg --costs costs.yaml\n"
          "Exit 0 ok, 2 bad input (nothing written).");
      auto args = std::make_shared<CalibrateArgs>();
      cmd->add_option("PROFILE", args->profiles, "profiles (.lsprof, either layout) or result folders")->required();
      cmd->add_option("-o,--output", args->output, "the costs file to write (YAML)");
      cmd->add_option("--machine", args->machine,
                      "the machine whose issue interval and worker count the cost terms use (default ipu21-c600)");
      cmd->add_flag("--json", args->json, "print one JSON object");
      add_common_options(*cmd);
      return [args]() { return calibrate(*args); };
    }};

}  // namespace calibrate_command_local
}  // namespace lockstep::cli
