// `lockstep device import app.ipuexe -o PACKAGE [--machine NAME]`: a device image back to a
// package the simulator runs (docs/device.md "Import").
#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>

#include "arch/machine.hpp"
#include "cli/device_command.hpp"
#include "cli/options.hpp"
#include "io/atomic_file.hpp"
#include "sim/device/application.hpp"
#include "sim/device/application_import.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace device_import_command_local {}
using namespace device_import_command_local;
namespace device_import_command_local {

struct ImportArgs {
  std::string image;
  std::string output;
  std::string machine = arch::kDefaultMachine;
};

int import_image(const ImportArgs& args) {
  arch::check_output_file(args.output, "-o");
  arch::refuse_overwriting_input(args.output, {args.image});
  const arch::MachineDescription machine = arch::load_machine(args.machine);
  const arch::Application app = arch::read_application(args.image);
  const arch::Package package = arch::import_application(app, machine, args.image);
  for (const std::string& note : arch::untyped_bindings(app, args.image)) spdlog::warn("{}", note);
  arch::write_package(package, args.output);
  std::cout << args.output << ": " << package.tiles.size() << " tiles with code or data, " << package.phases.size()
            << (package.phases.size() == 1 ? " phase\n" : " phases\n");
  return kExitOk;
}

const DeviceSubcommandRegistration registration{
    "import", [](CLI::App& app) {
      auto* cmd = app.add_subcommand(
          "import",
          "Read a device image (.ipuexe) back into a package the simulator runs (docs/device.md\n"
          "\"Import\"): each tile's supervisor code is read back into steps, which are lowered\n"
          "again and must give the image's words exactly; data segments become package segments;\n"
          "bindings come back on logical tiles. Images `device export` wrote import (export,\n"
          "import, export gives the same bytes); images the IPU21 stack built import when they hold\n"
          "exchanges, patches, Repeats, cycle samples, calls of the stack's kernels the model\n"
          "runs by symbol (docs/kernels-stack.md) and host phases with their host calls (docs/\n"
          "device.md \"Host phases\"); checkpoints and device config writes are refused.\n"
          "Exit 0 ok, 2 bad input (a word Lockstep cannot execute is named; nothing written).");
      auto args = std::make_shared<ImportArgs>();
      cmd->add_option("IMAGE", args->image, "the device image (.ipuexe)")->required();
      cmd->add_option("-o,--output", args->output, "the package to write (.yaml or .yml: YAML, else Cap'n Proto)")
          ->required();
      cmd->add_option("--machine", args->machine, "the package's machine (name or file)")->capture_default_str();
      add_common_options(*cmd);
      return [args]() { return import_image(*args); };
    }};

}  // namespace device_import_command_local
}  // namespace lockstep::cli
