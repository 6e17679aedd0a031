#include "cli/device_image.hpp"

#include <filesystem>

#include "arch/machine.hpp"
#include "cli/binding_files.hpp"
#include "cli/options.hpp"
#include "cli/version.hpp"
#include "io/atomic_file.hpp"
#include "sim/device/application.hpp"

namespace lockstep::cli {

arch::Application write_device_image(const arch::Package& package, const std::string& package_path,
                                     const std::string& image_path, arch::ExportOptions options) {
  const arch::MachineDescription machine = arch::load_machine(package.machine_name);
  arch::validate_package(package, machine, package_path);
  // The version without the commit: an image's bytes depend on the package and the
  // lowering, not on which build of the same version wrote it.
  options.compiler_version = "lockstep " LOCKSTEP_VERSION;
  arch::Application app = arch::export_application(package, machine, options);
  arch::write_application(app, image_path);
  return app;
}

std::vector<std::string> write_host_inputs(const arch::Package& package, const arch::Application& app,
                                           const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> written;
  for (const arch::HostCall& call : app.host_exchange.calls) {
    if (call.inputs.empty()) continue;
    std::vector<uint8_t> file;
    for (const arch::AppBinding& b : call.name == "initialize" ? app.weights : app.inputs) {
      for (const arch::Binding& pb : package.bindings) {
        if (pb.name != b.name) continue;
        const std::vector<uint8_t> bytes = package_binding_bytes(package, pb);
        file.insert(file.end(), bytes.begin(), bytes.end());
      }
    }
    // Call names are the exported image's own (`initialize`, `run`), safe as file names.
    const std::string path = dir + "/" + call.name + ".bin";
    arch::write_file_atomically(path, std::string_view(reinterpret_cast<const char*>(file.data()), file.size()));
    written.push_back(path);
  }
  return written;
}

}  // namespace lockstep::cli
