// `lockstep device export PACKAGE -o app.ipuexe [--object FILE]`: the package as the IPU21
// stack's application package (docs/device.md "Export", IPU21-DEVICE.md section 12).
#include <iostream>
#include <memory>

#include "cli/device_command.hpp"
#include "cli/device_image.hpp"
#include "cli/options.hpp"
#include "io/atomic_file.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace device_export_command_local {}
using namespace device_export_command_local;
namespace device_export_command_local {

struct ExportArgs {
  std::string package;
  std::string output;
  std::string object;
  uint32_t invocations = 1;
  std::string host_io = "stack";
  std::string host_inputs;
  std::string profiling = "none";
};

int export_image(const ExportArgs& args) {
  arch::check_output_file(args.output, "-o");
  arch::refuse_overwriting_input(args.output, {args.package});
  arch::ExportOptions options;
  options.invocations = args.invocations;
  options.object_path = args.object;
  options.host_calls = args.host_io == "stack";
  options.profiling = args.profiling == "full"      ? arch::ProfilingMode::Full
                      : args.profiling == "overall" ? arch::ProfilingMode::Overall
                                                    : arch::ProfilingMode::None;
  const arch::Package package = read_package_input(args.package);
  const arch::Application app = write_device_image(package, args.package, args.output, options);
  std::cout << args.output << ": " << app.tiles.size() << " tiles\n";
  if (!args.host_inputs.empty()) {
    for (const std::string& file : write_host_inputs(package, app, args.host_inputs)) {
      std::cout << file << ": the call's input file\n";
    }
  }
  return kExitOk;
}

const DeviceSubcommandRegistration registration{
    "export", [](CLI::App& app) {
      auto* cmd = app.add_subcommand(
          "export",
          "Write the package as a device image: the IPU21 stack's application package (.ipuexe,\n"
          "docs/device.md \"Export\"). Every tile of the package's machine gets an image, sorted by\n"
          "physical id: the entry stub at 0x4c010, its supervisor code (the steps lowered as\n"
          "`lockstep run` executes them), the package's data; bindings on physical tiles; one\n"
          "entry point \"run\". A package without host phases gets the IPU21 stack's host calls\n"
          "(--host-io stack, the default): `initialize` brings its weights and `run` its inputs,\n"
          "and `run` sends its outputs back, each tile's bytes in 4 KiB chunks through its slot of\n"
          "the host pages, so `host-run IMAGE BOOT CFG initialize run --input ... --output run=...`\n"
          "runs it; --host-io none leaves the bindings in tile memory (no host calls: only\n"
          "`lockstep device simulate` runs such an image). Kernel steps call worker code only a vendor compiler makes: "
          "such\n"
          "a package needs --object FILE, an ELF object defining their symbols\n"
          "(lockstep_kernel_<name>_<operands>, Lockstep's kernel ABI), which is linked into every\n"
          "tile's free SRAM (RELA relocations of types 0, 3, 4, 8) with each kernel's slot\n"
          "branching to it; without one the export lists the kernels and refuses.\n"
          "Exit 0 ok, 2 bad input (nothing written).");
      auto args = std::make_shared<ExportArgs>();
      cmd->add_option("PACKAGE", args->package, "the package file")->required();
      cmd->add_option("-o,--output", args->output, "the image to write (.ipuexe)")->required();
      cmd->add_option("--object", args->object,
                      "an ELF object (ELF32 LE, e_machine 0xf8) defining the kernels' symbols");
      cmd->add_option("--host-io", args->host_io,
                      "stack: inputs, weights and outputs move through host calls (default); none: they "
                      "stay in tile memory")
          ->check(CLI::IsMember({"stack", "none"}));
      cmd->add_option("--profiling", args->profiling,
                      "cycle samples as the stack places them: none (default), overall (each tile's start and "
                      "end: profile.start-cycle, profile.end-cycle), full (also before every step: "
                      "profile.cycles and the profile plans profile-extract reads); samples call "
                      "ipu_stack_static_sample_cycle, which --object must define")
          ->check(CLI::IsMember({"none", "overall", "full"}));
      cmd->add_option("--host-inputs", args->host_inputs,
                      "also write DIR/CALL.bin, each host call's input file from the bytes the package "
                      "loads (host-run --input CALL=DIR/CALL.bin)");
      cmd->add_option("--invocations", args->invocations,
                      "the program runs this many times back to back, looping in code")
          ->check(CLI::Range(1u, 1000000u));
      add_common_options(*cmd);
      return [args]() { return export_image(*args); };
    }};

}  // namespace device_export_command_local
}  // namespace lockstep::cli
