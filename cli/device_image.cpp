#include "cli/device_image.hpp"

#include "arch/machine.hpp"
#include "cli/options.hpp"
#include "cli/version.hpp"

namespace lockstep::cli {

size_t write_device_image(const std::string& package_path, const std::string& image_path,
                          arch::ExportOptions options) {
  const arch::Package package = read_package_input(package_path);
  const arch::MachineDescription machine = arch::load_machine(package.machine_name);
  arch::validate_package(package, machine, package_path);
  // The version without the commit: an image's bytes depend on the package and the
  // lowering, not on which build of the same version wrote it.
  options.compiler_version = "lockstep " LOCKSTEP_VERSION;
  const arch::Application app = arch::export_application(package, machine, options);
  arch::write_application(app, image_path);
  return app.tiles.size();
}

}  // namespace lockstep::cli
