// The `profile` command: a parent for the subcommands that read cycle profiles.
#include "cli/profile_command.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace profile_command_local {}
using namespace profile_command_local;
namespace profile_command_local {

std::vector<RegisteredCommand>& profile_subcommands() {
  static std::vector<RegisteredCommand> subcommands;
  return subcommands;
}

const CommandRegistration kProfile{
    "profile", [](CLI::App& app) {
      return add_parent_command(
          app, "profile",
          "Read cycle profiles written by `run --profile` or `replay --profile` (or captured on\n"
          "the chip by the IPU21 stack): totals, phase queries, an HTML timeline, Chrome traces.\n"
          "Format: docs/profiles.md.",
          profile_subcommands());
    }};

}  // namespace profile_command_local

ProfileSubcommandRegistration::ProfileSubcommandRegistration(std::string name, CommandSetup setup) {
  profile_subcommands().push_back({std::move(name), std::move(setup)});
}

}  // namespace lockstep::cli
