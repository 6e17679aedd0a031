// The `profile` command: a parent for the subcommands that read cycle profiles.
#include "cli/profile_command.hpp"

#include <algorithm>

namespace lockstep::cli {
namespace {

std::vector<RegisteredCommand>& profile_subcommands() {
  static std::vector<RegisteredCommand> subcommands;
  return subcommands;
}

const CommandRegistration kProfile{"profile", [](CLI::App& app) -> std::function<int()> {
  CLI::App* command = app.add_subcommand(
      "profile",
      "Read cycle profiles written by `run --profile` or `replay --profile` (or captured on\n"
      "the chip by the IPU21 stack): totals, phase queries, an HTML timeline, Chrome traces.\n"
      "Format: docs/profiles.md.");
  command->require_subcommand(1);
  auto subcommands = profile_subcommands();
  std::sort(subcommands.begin(), subcommands.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
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

ProfileSubcommandRegistration::ProfileSubcommandRegistration(std::string name, CommandSetup setup) {
  profile_subcommands().push_back({std::move(name), std::move(setup)});
}

}  // namespace lockstep::cli
