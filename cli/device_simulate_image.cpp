// `lockstep device simulate IMAGE.ipuexe -o DIR`: a stack image run as the stack's `host-run`
// would run it (IPU21-DEVICE.md 17.1): its host calls in order, each call's input file raw in
// the call's layout, each call's output file raw; the result folder's outputs are the last
// call's output file cut into the image's output bindings, its profile what `profile-extract`
// makes of `profile.cycles` (the model's own profile when the image has none).
#include <algorithm>
#include <iostream>
#include <map>

#include "arch/topology.hpp"
#include "calibration/costs_file.hpp"
#include "cli/device_simulate.hpp"
#include "cli/options.hpp"
#include "cli/version.hpp"
#include "cli/watch_option.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "io/input_file.hpp"
#include "io/staged_directory.hpp"
#include "sim/backend.hpp"
#include "sim/device/application.hpp"
#include "sim/device/application_import.hpp"
#include "sim/device/device_result.hpp"
#include "sim/device/profile_extract.hpp"

namespace lockstep::cli {
namespace device_simulate_image_local {}
using namespace device_simulate_image_local;
namespace device_simulate_image_local {

// CALL=FILE specs by call name; the last of a name wins, as host-run's.
std::map<std::string, std::string> call_files(const std::vector<std::string>& specs, const char* option,
                                              const arch::Application& app) {
  std::map<std::string, std::string> out;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      throw InputError(std::string(option) + " " + spec + ": expected CALL=FILE (a host call of the image)");
    }
    const std::string call = spec.substr(0, eq);
    const bool known = std::any_of(app.host_exchange.calls.begin(), app.host_exchange.calls.end(),
                                   [&](const arch::HostCall& c) { return c.name == call; });
    if (!known) throw InputError(std::string(option) + " " + spec + ": unknown host call " + call);
    out[call] = spec.substr(eq + 1);
  }
  return out;
}

std::vector<std::string> call_sequence(const SimulateImageArgs& args, const arch::Application& app) {
  if (!args.calls.empty()) {
    for (const std::string& name : args.calls) {
      const bool known = std::any_of(app.host_exchange.calls.begin(), app.host_exchange.calls.end(),
                                     [&](const arch::HostCall& c) { return c.name == name; });
      if (!known) throw InputError(args.image + ": --call " + name + ": unknown host call " + name);
    }
    return args.calls;
  }
  std::vector<std::string> out;
  for (const arch::HostCall& c : app.host_exchange.calls) out.push_back(c.name);
  return out;
}

arch::Profile result_profile(const arch::Application& app, const sim::RunResult& result,
                             const arch::MachineDescription& machine, const std::string& image) {
  const bool extracted = std::any_of(app.outputs.begin(), app.outputs.end(),
                                     [](const arch::AppBinding& b) { return b.name == "profile.cycles"; });
  if (!extracted || result.host_outputs.empty()) return result.profile.value_or(arch::Profile{});
  arch::Profile profile =
      arch::extract_profile(app, result.host_outputs.back().second, static_cast<uint64_t>(machine.clock_hz), image);
  const arch::Topology topology(machine);
  for (arch::TileProfile& t : profile.tiles) t.logical_tile = topology.logical(t.physical_tile);
  return profile;
}

}  // namespace device_simulate_image_local

int simulate_image(const SimulateImageArgs& args) {
  arch::check_staged_directory(args.output_dir, "-o");
  const ThreadLimit threads(args.jobs);
  arch::MachineDescription machine = arch::load_machine(args.machine);
  if (!args.costs.empty()) machine.kernel_costs = calibration::read_kernel_costs(args.costs);
  const arch::Application app = arch::read_application(args.image);
  const auto inputs = call_files(args.inputs, "--input", app);
  const auto outputs = call_files(args.call_outputs, "--call-output", app);
  for (const auto& [call, path] : outputs) arch::check_output_file(path, "--call-output");
  const arch::Package package = arch::import_application(app, machine, args.image);
  sim::RunOptions options;
  options.source_name = args.image;
  options.profile = true;
  options.max_cycles = args.max_cycles;
  options.timeout_seconds = args.timeout_seconds;
  options.watches = parse_watches(args.watches);
  options.host_calls.emplace();
  const std::vector<std::string> sequence = call_sequence(args, app);
  for (const auto& [call, path] : outputs) {
    if (std::find(sequence.begin(), sequence.end(), call) == sequence.end())
      throw InputError("--call-output " + call + "=" + path + ": the call " + call + " is not run (see --call)");
  }
  for (const std::string& call : sequence) {
    const auto it = inputs.find(call);
    std::vector<uint8_t> bytes;
    if (it != inputs.end()) {
      const std::string text = arch::read_regular_file(it->second);
      bytes.assign(text.begin(), text.end());
    }
    options.host_calls->push_back({call, std::move(bytes)});
  }
  const sim::RunResult result = sim::make_systemc_backend(machine)->run(package, options);
  if (!result.stopped.empty()) {
    std::cerr << "stopped: " << result.stopped << "; no result folder written\n";
    return kExitFailed;
  }
  replay::DeviceResult described =
      describe_simulation(args.image, arch::read_regular_file(args.image), machine, 1, result);
  // Without host calls (an image `device export` wrote) the outputs are read from tile memory, as
  // for a package; with them, exactly what the last call moved.
  if (!result.host_outputs.empty()) {
    described.outputs.clear();
    for (auto& [name, bytes] : arch::split_call_file(app.outputs, result.host_outputs.back().second)) {
      described.outputs.push_back({name, replay::output_file_name(name), std::move(bytes)});
    }
  }
  arch::Profile profile = result_profile(app, result, machine, args.image);
  profile.producer = "lockstep " LOCKSTEP_VERSION " (commit " LOCKSTEP_COMMIT ")";
  profile.source = described.package;
  {
    arch::StagedDirectory staged(args.output_dir, "-o");
    replay::write_device_result(described, profile, staged.path());
    staged.commit();
  }
  std::map<std::string, const std::vector<uint8_t>*> last;  // a call run twice: its last output
  for (const auto& [name, bytes] : result.host_outputs) last[name] = &bytes;
  for (const auto& [call, path] : outputs) {
    const std::vector<uint8_t>& bytes = *last.at(call);
    arch::write_file_atomically(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  if (args.json) {
    std::cout << replay::result_json_text(described);
    std::cerr << watch_text(result.watch_writes);  // result.json's text stays alone on stdout
  } else {
    std::cout << args.output_dir << ": " << described.status << ", " << described.total_cycles << " cycles ("
              << result.host_cycles << " in host phases), " << result.host_outputs.size() << " host calls, "
              << described.outputs.size() << " outputs" << (described.detail.empty() ? "" : "; " + described.detail)
              << "\n"
              << watch_text(result.watch_writes);
  }
  return result.ok() ? kExitOk : kExitFailed;
}

}  // namespace lockstep::cli
