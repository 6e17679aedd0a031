// `lockstep device inspect IMAGE [--json]`: what a device image holds and what the IPU21 stack's
// loader and `host-run` would refuse in it (IPU21-DEVICE.md 12, 13, 17.4), without running it.
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/device_command.hpp"
#include "cli/options.hpp"
#include "io/hex.hpp"
#include "sim/device/application.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace device_inspect_command_local {}
using namespace device_inspect_command_local;
namespace device_inspect_command_local {

struct InspectArgs {
  std::string image;
  bool json = false;
};

constexpr uint32_t kLoaderBatch = 64, kLoaderMaxTiles = 2048, kLowestSegment = 0x4c010, kLoaderEnd = 0xe7bb0;

// A binding's bytes in a call's file: max(fileOffset + size) over its slices (17.1).
uint64_t binding_bytes(const arch::AppBinding& b) {
  uint64_t end = 0;
  for (const auto& s : b.slices) end = std::max(end, s.file_offset + s.size);
  return end;
}

uint64_t call_bytes(const std::vector<arch::HostSlice>& slices) {
  uint64_t end = 0;
  for (const auto& s : slices) end = std::max(end, s.file_offset + s.size);
  return end;
}

// What the stack's loader and tools check beyond section 12.3 (17.2, 17.4), one line each.
std::vector<std::string> loader_problems(const arch::Application& app) {
  std::vector<std::string> problems;
  const size_t tiles = app.tiles.size();
  if (tiles == 0 || tiles % kLoaderBatch != 0 || tiles > kLoaderMaxTiles) {
    problems.push_back("tile count " + std::to_string(tiles) +
                       " is not a whole number of loader batches of 64 (at most " + std::to_string(kLoaderMaxTiles) +
                       ")");
  }
  for (const auto& t : app.tiles) {
    uint32_t lowest = UINT32_MAX;
    uint64_t end = 0;
    for (const auto& s : t.segments) {
      lowest = std::min(lowest, s.address);
      end = std::max<uint64_t>(end, uint64_t{s.address} + s.memory_size);
    }
    const std::string tile = "physical tile " + std::to_string(t.physical_tile);
    if (lowest != kLowestSegment) {
      problems.push_back(tile + ": lowest segment at " + arch::hex(lowest) + ", not 0x4c010");
      break;
    }
    if (end > kLoaderEnd) {
      problems.push_back(tile + ": data ends at " + arch::hex(static_cast<uint32_t>(end)) +
                         ", after 0xe7bb0 (643 frames)");
      break;
    }
  }
  for (const auto& c : app.host_exchange.calls) {
    if (!c.inputs.empty() && c.input_batch_ends.empty())
      problems.push_back("host call " + c.name + ": inputs without inputBatchEnds");
    if (!c.outputs.empty() && c.output_batch_ends.empty())
      problems.push_back("host call " + c.name + ": outputs without outputBatchEnds");
  }
  if (app.host_exchange.calls.empty()) problems.push_back("no host calls: `host-run` knows no call to run");
  const bool cycles = std::any_of(app.outputs.begin(), app.outputs.end(),
                                  [](const arch::AppBinding& b) { return b.name == "profile.cycles"; });
  if (!cycles) {
    problems.push_back("no profile.cycles output binding: `profile-extract` finds no cycle profile");
    return problems;
  }
  // profile-extract (17.3): profile.cycles sits in run's output at the sum of the sizes of the
  // outputs before it, and each plan's tile has a slice of exactly (steps + 1) words there.
  uint64_t base = 0;
  const arch::AppBinding* binding = nullptr;
  for (const arch::AppBinding& b : app.outputs) {
    uint64_t size = 0;
    for (const arch::RegionSlice& s : b.slices) size = std::max(size, s.file_offset + s.size);
    if (b.name == "profile.cycles") {
      binding = &b;
      base += size;
      break;
    }
    base += size;
  }
  uint64_t run_output = 0;
  for (const auto& c : app.host_exchange.calls) {
    if (c.name != "run") continue;
    for (const auto& s : c.outputs) run_output = std::max(run_output, s.file_offset + s.size);
  }
  if (run_output < base) {
    problems.push_back("host call run: its output file (" + std::to_string(run_output) +
                       " bytes) ends before profile.cycles does (" + std::to_string(base) + " bytes in)");
  }
  for (const arch::TileProfilePlan& plan : app.profile_tiles) {
    const auto slice = std::find_if(binding->slices.begin(), binding->slices.end(),
                                    [&](const arch::RegionSlice& s) { return s.tile == plan.physical_tile; });
    const uint64_t want = 4 * (uint64_t{plan.steps.size()} + 1);
    if (slice == binding->slices.end() || slice->size != want) {
      problems.push_back("physical tile " + std::to_string(plan.physical_tile) + ": profile plan of " +
                         std::to_string(plan.steps.size()) + " steps needs a profile.cycles slice of " +
                         std::to_string(want) + " bytes");
      break;
    }
  }
  return problems;
}

nlohmann::ordered_json inspect_json(const arch::Application& app, const std::string& file) {
  nlohmann::ordered_json j;
  j["file"] = file;
  j["target"] = app.target;
  j["compiler_version"] = app.compiler_version;
  j["tiles"] = app.tiles.size();
  j["bindings"] = nlohmann::ordered_json::array();
  for (const auto& [kind, list] :
       {std::pair{"input", &app.inputs}, {"output", &app.outputs}, {"weight", &app.weights}}) {
    for (const auto& b : *list) {
      j["bindings"].push_back({{"kind", kind},
                               {"name", b.name},
                               {"dtype", b.dtype},
                               {"shape", b.shape},
                               {"bytes", binding_bytes(b)},
                               {"slices", b.slices.size()}});
    }
  }
  j["host_calls"] = nlohmann::ordered_json::array();
  for (const auto& c : app.host_exchange.calls) {
    j["host_calls"].push_back({{"name", c.name},
                               {"command", c.command},
                               {"phases", c.phases},
                               {"invocations", c.invocations},
                               {"input_bytes", call_bytes(c.inputs)},
                               {"output_bytes", call_bytes(c.outputs)}});
  }
  j["entry_points"] = nlohmann::ordered_json::array();
  for (const auto& e : app.entry_points) j["entry_points"].push_back(e.name);
  j["device_config_writes"] = app.device_config_writes.size();
  j["profile_plan_tiles"] = app.profile_tiles.size();
  j["debug_symbols"] = app.debug_symbols.size();
  j["debug_regions"] = app.debug_regions.size();
  j["stack_tool_problems"] = loader_problems(app);
  return j;
}

void print_text(const nlohmann::ordered_json& j) {
  std::cout << j["file"].get<std::string>() << ": " << j["target"].get<std::string>() << ", "
            << j["tiles"].get<size_t>() << " tiles, compiler \"" << j["compiler_version"].get<std::string>() << "\"\n";
  for (const auto& b : j["bindings"]) {
    std::string shape;
    for (const auto& d : b["shape"]) shape += (shape.empty() ? "" : ", ") + std::to_string(d.get<uint32_t>());
    std::cout << b["kind"].get<std::string>() << " " << b["name"].get<std::string>() << ": "
              << b["dtype"].get<std::string>() << " [" << shape << "], " << b["bytes"].get<uint64_t>() << " bytes in "
              << b["slices"].get<size_t>() << " slices\n";
  }
  for (const auto& c : j["host_calls"]) {
    std::cout << "host call " << c["name"].get<std::string>() << ": command " << c["command"].get<uint32_t>() << ", "
              << c["phases"].get<uint32_t>() << " phases, input " << c["input_bytes"].get<uint64_t>()
              << " bytes, output " << c["output_bytes"].get<uint64_t>() << " bytes\n";
  }
  std::string entries;
  for (const auto& e : j["entry_points"]) entries += (entries.empty() ? "" : ", ") + e.get<std::string>();
  std::cout << "entry points: " << (entries.empty() ? "none" : entries) << "\n"
            << "device config writes: " << j["device_config_writes"].get<size_t>() << "\n"
            << "profile plans: " << j["profile_plan_tiles"].get<size_t>() << " tiles\n"
            << "debug map: " << j["debug_symbols"].get<size_t>() << " symbols, " << j["debug_regions"].get<size_t>()
            << " regions\n";
  for (const auto& p : j["stack_tool_problems"])
    std::cout << "the stack's tools would refuse: " << p.get<std::string>() << "\n";
}

int inspect_image(const InspectArgs& args) {
  const arch::Application app = arch::read_application(args.image);
  const nlohmann::ordered_json j = inspect_json(app, args.image);
  if (args.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    print_text(j);
  }
  return kExitOk;
}

const DeviceSubcommandRegistration registration{
    "inspect", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("inspect",
                             "Describe a device image (.ipuexe) without running it: its tiles, bindings (each with\n"
                             "the bytes it takes in a host call's file: max(fileOffset + size) over its slices), "
                             "host\n"
                             "calls (input and output bytes), entry points, device config writes, profile plans and\n"
                             "debug map, and what the IPU21 stack's loader, `host-run` or `profile-extract` would\n"
                             "refuse in it (IPU21-DEVICE.md 13, 17.2, 17.4: tiles in whole batches of 64, every\n"
                             "tile's lowest segment at 0x4c010, nothing after 0xe7bb0, batch ends for calls with\n"
                             "slices, at least one host call, a profile.cycles output binding). The image is read\n"
                             "and checked as `device import` reads it (section 12.3).\n"
                             "Exit 0 ok (problems for the stack's tools are reported, not failures), 2 bad input.");
      auto args = std::make_shared<InspectArgs>();
      cmd->add_option("IMAGE", args->image, "the device image (.ipuexe)")->required();
      cmd->add_flag("--json", args->json, "print one JSON object instead of text");
      add_common_options(*cmd);
      return [args]() { return inspect_image(*args); };
    }};

}  // namespace device_inspect_command_local
}  // namespace lockstep::cli
