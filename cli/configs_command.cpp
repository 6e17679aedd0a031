// `lockstep configs [PATH]`: list the embedded machines, workloads and sweeps, or print one.
#include <iostream>

#include "arch/embedded_configs.hpp"
#include "arch/errors.hpp"
#include "cli/command_registry.hpp"

namespace lockstep::cli {
namespace {

const CommandRegistration registration{"configs", [](CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "configs",
      "List the configuration files built into lockstep (machines, workloads, sweeps), or\n"
      "print one of them. Any command that takes a machine, workload or sweep accepts\n"
      "either a path on disk or one of these names.");
  auto path = std::make_shared<std::string>();
  cmd->add_option("PATH", *path, "an embedded file to print, e.g. configs/machines/ipu21-c600.yaml");
  add_common_options(*cmd);
  return [path]() {
    const auto& files = arch::embedded_configs();
    if (path->empty()) {
      for (const auto& [name, text] : files) std::cout << name << "\n";
      return kExitOk;
    }
    const auto it = files.find(*path);
    if (it == files.end()) throw InputError(*path + ": no such embedded configuration");
    std::cout << it->second;
    return kExitOk;
  };
}};

}  // namespace
}  // namespace lockstep::cli
