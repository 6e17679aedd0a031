#pragma once
// Package file -> device image file, shared by `device export` and `device run`.
#include <string>

#include "sim/device/application_export.hpp"

namespace lockstep::cli {

// Reads and validates the package against its machine, exports it (compilerVersion
// "lockstep VERSION") and writes the image atomically. Returns the image's tile count.
size_t write_device_image(const std::string& package_path, const std::string& image_path,
                          arch::ExportOptions options);

}  // namespace lockstep::cli
