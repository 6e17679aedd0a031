// `lockstep configs [PATH]`: list the embedded machines, workloads and sweeps, or print one.
#include <iostream>

#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "io/embedded_configs.hpp"
#include "io/errors.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace configs_command_local {}
using namespace configs_command_local;
namespace configs_command_local {

const CommandRegistration registration{
    "configs", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("configs",
                             "List the configuration files built into lockstep (machines, workloads, sweeps), or\n"
                             "print one of them. Any command that takes a machine, workload or sweep accepts\n"
                             "either a path on disk, one of these paths or its short name (ipu21-c600, vit-tiny,\n"
                             "frontier). --json prints the list (or the one file) as one JSON object.");
      auto path = std::make_shared<std::string>();
      auto json = std::make_shared<bool>(false);
      cmd->add_option("PATH", *path, "an embedded file to print, e.g. configs/machines/ipu21-c600.yaml");
      cmd->add_flag("--json", *json, "print {\"configs\": [{\"path\", \"kind\", \"name\"}]} (or {\"path\", \"text\"})");
      add_common_options(*cmd);
      return [path, json]() {
        const auto& files = arch::embedded_configs();
        if (path->empty()) {
          if (*json) {
            nlohmann::ordered_json list = nlohmann::ordered_json::array();
            for (const auto& [name, text] : files) {
              // configs/KIND/NAME.yaml: the short name works wherever a config is taken.
              const size_t slash = name.rfind('/');
              const size_t kind_start = name.find('/') + 1;
              std::string base = name.substr(slash + 1);
              if (base.ends_with(".yaml")) base.resize(base.size() - 5);
              list.push_back({{"path", name}, {"kind", name.substr(kind_start, slash - kind_start)}, {"name", base}});
            }
            print_json({{"configs", list}});
            return kExitOk;
          }
          for (const auto& [name, text] : files) std::cout << name << "\n";
          return kExitOk;
        }
        auto it = files.find(*path);
        for (const char* kind : {"machines", "workloads", "sweeps"}) {
          if (it == files.end()) it = files.find(std::string("configs/") + kind + "/" + *path + ".yaml");
        }
        if (it == files.end())
          throw InputError(*path + ": no such embedded configuration (`lockstep configs` lists them)");
        if (*json) {
          print_json({{"path", it->first}, {"text", std::string(it->second)}});
          return kExitOk;
        }
        std::cout << it->second;
        return kExitOk;
      };
    }};

}  // namespace configs_command_local
}  // namespace lockstep::cli
