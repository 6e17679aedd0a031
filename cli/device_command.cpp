// The `device` command: a parent for the subcommands of the device path.
#include "cli/device_command.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace device_command_local {}
using namespace device_command_local;
namespace device_command_local {

std::vector<RegisteredCommand>& device_subcommands() {
  static std::vector<RegisteredCommand> subcommands;
  return subcommands;
}

const CommandRegistration kDevice{
    "device", [](CLI::App& app) {
      return add_parent_command(app, "device",
                                "Device images (.ipuexe) and the site runners that execute them on a device.\n"
                                "A runner executes a package and leaves a result folder (output bindings' bytes, a\n"
                                "cycle profile, result.json) for `lockstep crosscheck`.\n"
                                "`device simulate` is the simulator as such a runner. Contract: docs/device.md.",
                                device_subcommands());
    }};

}  // namespace device_command_local

DeviceSubcommandRegistration::DeviceSubcommandRegistration(std::string name, CommandSetup setup) {
  device_subcommands().push_back({std::move(name), std::move(setup)});
}

}  // namespace lockstep::cli
