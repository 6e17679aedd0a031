#pragma once
// Package file -> device image file, shared by `device export` and `device run`.
#include <string>
#include <vector>

#include "formats/package.hpp"
#include "sim/device/application.hpp"
#include "sim/device/application_export.hpp"

namespace lockstep::cli {

// Validates the package against its machine, exports it (compilerVersion "lockstep
// VERSION") and writes the image atomically. Returns the image.
arch::Application write_device_image(const arch::Package& package, const std::string& package_path,
                                     const std::string& image_path, arch::ExportOptions options);

// Each host call's input file (IPU21-DEVICE.md 17.1: its bindings' bytes back to back,
// `initialize` the weights, any other call the inputs), made from the bytes the package loads,
// as DIR/CALL.bin for every call of the image with input bytes (DIR is made if missing).
// Returns the files written.
std::vector<std::string> write_host_inputs(const arch::Package& package, const arch::Application& app,
                                           const std::string& dir);

}  // namespace lockstep::cli
