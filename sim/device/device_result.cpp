// Writing the runner contract's result folder.
#include "sim/device/device_result.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>

#include "formats/package.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "io/file_names.hpp"

namespace lockstep::replay {

std::string package_file_digest(const std::string& bytes) {
  const uint64_t digest = arch::fnv1a64(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  char text[32];
  std::snprintf(text, sizeof text, "fnv1a64:%016llx", static_cast<unsigned long long>(digest));
  return text;
}

std::string output_file_name(const std::string& binding) {
  return "outputs/" + arch::escaped_file_name(binding) + ".bin";
}

std::string result_json_text(const DeviceResult& result) {
  nlohmann::ordered_json j;
  j["format"] = kDeviceResultFormat;
  j["version"] = kDeviceResultVersion;
  j["runner"] = result.runner;
  j["status"] = result.status;
  if (!result.detail.empty()) j["detail"] = result.detail;
  j["package"] = result.package;
  j["package_digest"] = result.package_digest;
  j["machine"] = result.machine;
  j["clock_hz"] = result.clock_hz;
  j["invocations"] = result.invocations;
  j["total_cycles"] = result.total_cycles;
  j["outputs"] = nlohmann::ordered_json::array();
  for (const auto& output : result.outputs) {
    j["outputs"].push_back({{"name", output.name}, {"file", output.file}, {"bytes", output.bytes.size()}});
  }
  j["profile"] = result.profile;
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void write_device_result(const DeviceResult& result, const arch::Profile& profile, const std::string& dir) {
  if (!result.outputs.empty()) {
    const std::string outputs = dir + "/outputs";
    if (::mkdir(outputs.c_str(), 0777) != 0 && errno != EEXIST) {
      throw InputError(outputs + ": cannot create: " + std::strerror(errno));
    }
  }
  for (const auto& output : result.outputs) {
    arch::write_file_atomically(
        dir + "/" + output.file,
        std::string_view(reinterpret_cast<const char*>(output.bytes.data()), output.bytes.size()));
  }
  arch::write_profile(profile, dir + "/" + result.profile);
  arch::write_file_atomically(dir + "/" + kResultFile, result_json_text(result));
}

}  // namespace lockstep::replay
