#pragma once
// `lockstep profile SUBCOMMAND`: each subcommand (summary, phases, query, render, export)
// lives in its own file and registers itself here, as commands do in command_registry.hpp.
#include "cli/command_registry.hpp"

namespace lockstep::cli {

struct ProfileSubcommandRegistration {
  ProfileSubcommandRegistration(std::string name, CommandSetup setup);
};

}  // namespace lockstep::cli
