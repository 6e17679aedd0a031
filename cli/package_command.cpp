// `lockstep package convert IN OUT`: between the Cap'n Proto and YAML forms of a package.
#include <spdlog/spdlog.h>

#include <iostream>

#include "arch/machine.hpp"
#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "formats/package.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace package_command_local {}
using namespace package_command_local;
namespace package_command_local {

const CommandRegistration registration{
    "package", [](CLI::App& app) {
      auto* cmd = app.add_subcommand("package", "Work with package files (see docs/formats.md for both forms).");
      cmd->require_subcommand(1);
      add_common_options(*cmd);
      auto* convert =
          cmd->add_subcommand("convert",
                              "Read a package in either form (picked from its content), validate it against the\n"
                              "machine it names (an embedded machine or a machine file path), and write it in the\n"
                              "form picked by the output's extension: .yaml or .yml give the canonical YAML form,\n"
                              "anything else the Cap'n Proto form. The output is checked before the work and written\n"
                              "to a temporary name, then renamed. Example: lockstep package convert a.capnp -o a.yaml\n"
                              "(IN OUT works too).");
      auto in = std::make_shared<std::string>();
      auto out = std::make_shared<std::string>();
      convert->add_option("IN", *in, "the package to read")->required();
      auto* out_positional = convert->add_option("OUT", *out, "the file to write (the older spelling of -o)");
      convert->add_option("-o,--output", *out, "the file to write")->excludes(out_positional);
      add_common_options(*convert);
      return [in, out]() {
        if (out->empty()) throw InputError("package convert: -o/--output is required (the file to write)");
        arch::check_output_file(*out, "-o");
        arch::refuse_overwriting_input(*out, {*in});
        const arch::Package package = read_package_input(*in);
        const arch::MachineDescription machine = arch::load_machine(package.machine_name);
        arch::validate_package(package, machine, *in);
        arch::write_package(package, *out);
        spdlog::info("wrote {}", *out);
        return kExitOk;
      };
    }};

}  // namespace package_command_local
}  // namespace lockstep::cli
