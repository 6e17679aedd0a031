// The `device` command: a parent for the subcommands of the device path.
#include "cli/device_command.hpp"

#include <algorithm>

namespace lockstep::cli {
namespace {

std::vector<RegisteredCommand>& device_subcommands() {
  static std::vector<RegisteredCommand> subcommands;
  return subcommands;
}

const CommandRegistration kDevice{
    "device", [](CLI::App& app) -> std::function<int()> {
      CLI::App* command = app.add_subcommand(
          "device",
          "The device path: runners that execute a package and leave a result folder (output\n"
          "bindings' bytes, a cycle profile, result.json) for `lockstep crosscheck`.\n"
          "`device simulate` is the simulator as such a runner. Contract: docs/device.md.");
      command->require_subcommand(1);
      auto subcommands = device_subcommands();
      std::sort(subcommands.begin(), subcommands.end(),
                [](const auto& a, const auto& b) { return a.name < b.name; });
      std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
      for (auto& sub : subcommands) {
        auto run = sub.setup(*command);
        runners.emplace_back(command->get_subcommand(sub.name), std::move(run));
      }
      return [runners]() {
        for (const auto& [sub, run] : runners) {
          if (sub->parsed()) return run();
        }
        return kExitBadInput;
      };
    }};

}  // namespace

DeviceSubcommandRegistration::DeviceSubcommandRegistration(std::string name, CommandSetup setup) {
  device_subcommands().push_back({std::move(name), std::move(setup)});
}

}  // namespace lockstep::cli
