#pragma once
// `lockstep device SUBCOMMAND`: the device path (docs/device.md). Each subcommand lives in
// its own file and registers itself here, as `profile`'s do (simulate, export, import, run).
#include "cli/command_registry.hpp"

namespace lockstep::cli {

struct DeviceSubcommandRegistration {
  DeviceSubcommandRegistration(std::string name, CommandSetup setup);
};

}  // namespace lockstep::cli
