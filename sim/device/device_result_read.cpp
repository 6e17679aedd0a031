// Reading and checking a runner's result folder (docs/device.md).
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "io/errors.hpp"
#include "io/input_file.hpp"
#include "sim/device/device_result.hpp"

namespace lockstep::replay {

namespace {

constexpr uint64_t kMaxResultJsonBytes = 1 << 20;

using Json = nlohmann::json;

const Json& field(const Json& object, const char* name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end()) throw InputError(where + ": missing field '" + name + "'");
  return *it;
}

std::string text_field(const Json& object, const char* name, const std::string& where, bool required = true) {
  if (!required && !object.contains(name)) return "";
  const Json& value = field(object, name, where);
  if (!value.is_string()) throw InputError(where + ": '" + name + "' must be a string");
  return value.get<std::string>();
}

uint64_t count_field(const Json& object, const char* name, const std::string& where, bool required = true,
                     uint64_t fallback = 0) {
  if (!required && !object.contains(name)) return fallback;
  const Json& value = field(object, name, where);
  if (!value.is_number_unsigned()) throw InputError(where + ": '" + name + "' must be a non-negative integer");
  return value.get<uint64_t>();
}

// A path inside the folder: relative, no "..", no empty parts.
std::string relative_path(const std::string& path, const std::string& where) {
  if (path.empty() || path.front() == '/') throw InputError(where + ": '" + path + "' must be a relative path");
  size_t at = 0;
  while (at <= path.size()) {
    const size_t slash = std::min(path.find('/', at), path.size());
    const std::string part = path.substr(at, slash - at);
    if (part.empty() || part == "." || part == "..") {
      throw InputError(where + ": '" + path + "' must name a file inside the result folder");
    }
    at = slash + 1;
  }
  return path;
}

// An output as result.json lists it: its size is only a claim until the file is looked at,
// so nothing is allocated for it before load_output has checked the file's length.
struct ListedOutput {
  DeviceOutput output;
  uint64_t bytes = 0;
};

DeviceResult parse_result(const std::string& text, const std::string& file, std::vector<ListedOutput>& listed) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    throw InputError(file + ": not JSON (is this a result folder?): " + e.what());
  }
  if (!j.is_object()) throw InputError(file + ": not a result: expected a JSON object");
  if (text_field(j, "format", file) != kDeviceResultFormat) {
    throw InputError(file + ": 'format' must be \"" + std::string(kDeviceResultFormat) + "\"");
  }
  if (count_field(j, "version", file) != kDeviceResultVersion) {
    throw InputError(file + ": version " + field(j, "version", file).dump() + " is not one this build reads (1)");
  }
  DeviceResult r;
  r.runner = text_field(j, "runner", file);
  r.status = text_field(j, "status", file);
  if (r.status != "ok" && r.status != "failed") throw InputError(file + ": 'status' must be \"ok\" or \"failed\"");
  r.detail = text_field(j, "detail", file, false);
  r.package = text_field(j, "package", file, false);
  r.package_digest = text_field(j, "package_digest", file, false);
  r.machine = text_field(j, "machine", file, false);
  r.clock_hz = count_field(j, "clock_hz", file);
  if (r.clock_hz == 0) throw InputError(file + ": 'clock_hz' must be positive");
  const uint64_t invocations = count_field(j, "invocations", file, false, 1);
  if (invocations == 0 || invocations > UINT32_MAX) throw InputError(file + ": 'invocations' out of range");
  r.invocations = static_cast<uint32_t>(invocations);
  r.total_cycles = count_field(j, "total_cycles", file, false);
  r.profile = relative_path(text_field(j, "profile", file), file + ": profile");
  const Json& outputs = field(j, "outputs", file);
  if (!outputs.is_array()) throw InputError(file + ": 'outputs' must be an array");
  std::set<std::string> names;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string where = file + ": outputs[" + std::to_string(i) + "]";
    if (!outputs[i].is_object()) throw InputError(where + ": expected an object");
    ListedOutput entry;
    entry.output.name = text_field(outputs[i], "name", where);
    entry.output.file = relative_path(text_field(outputs[i], "file", where), where + ": file");
    entry.bytes = count_field(outputs[i], "bytes", where);
    if (!names.insert(entry.output.name).second)
      throw InputError(where + ": binding '" + entry.output.name + "' listed twice");
    listed.push_back(std::move(entry));
  }
  std::sort(listed.begin(), listed.end(), [](const auto& a, const auto& b) { return a.output.name < b.output.name; });
  return r;
}

// The file's length is checked against result.json's count before its bytes are read.
DeviceOutput load_output(ListedOutput listed, const std::string& dir) {
  DeviceOutput output = std::move(listed.output);
  const std::string path = dir + "/" + output.file;
  const uint64_t expected = listed.bytes;
  if (!arch::regular_file_exists(path)) throw InputError(path + ": missing (result.json lists it)");
  std::error_code error;
  const uint64_t size = std::filesystem::file_size(path, error);
  if (error || size != expected) {
    throw InputError(path + ": " + (error ? error.message() : std::to_string(size) + " bytes") +
                     ", but result.json says " + std::to_string(expected));
  }
  const std::string bytes = arch::read_regular_file(path, expected);
  if (bytes.size() != expected) {  // it shrank since it was looked at
    throw InputError(path + ": " + std::to_string(bytes.size()) + " bytes, but result.json says " +
                     std::to_string(expected));
  }
  output.bytes.assign(bytes.begin(), bytes.end());
  return output;
}

}  // namespace

LoadedResult read_device_result(const std::string& dir) {
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw InputError(dir + ": not a result folder (no such folder)");
  }
  const std::string file = dir + "/" + kResultFile;
  if (!arch::regular_file_exists(file)) throw InputError(file + ": missing; is '" + dir + "' a result folder?");
  LoadedResult loaded;
  loaded.dir = dir;
  std::vector<ListedOutput> listed;
  loaded.result = parse_result(arch::read_regular_file(file, kMaxResultJsonBytes), file, listed);
  for (auto& entry : listed) loaded.result.outputs.push_back(load_output(std::move(entry), dir));
  loaded.profile = arch::read_profile(dir + "/" + loaded.result.profile);
  return loaded;
}

}  // namespace lockstep::replay
