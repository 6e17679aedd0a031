#pragma once
// The runner contract's result folder (docs/device.md, "Runner contract: the result
// folder"): what a device runner leaves behind and what `lockstep crosscheck` reads.
//
//   DIR/result.json        format, version, runner, status, package, clock, cycles, outputs
//   DIR/outputs/NAME.bin   each output binding's bytes, exactly
//   DIR/profile.lsprof     the run's cycle profile (profile/profile.hpp; a stack profile reads too)
//
// `lockstep device simulate` writes one with the SystemC model as the runner.
#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.hpp"

namespace lockstep::replay {

inline constexpr const char* kDeviceResultFormat = "lockstep-device-result";
inline constexpr uint32_t kDeviceResultVersion = 1;
inline constexpr const char* kSimulatorRunner = "lockstep-simulator";
inline constexpr const char* kResultFile = "result.json";
inline constexpr const char* kProfileFile = "profile.lsprof";

struct DeviceOutput {
  std::string name;  // the output binding
  std::string file;  // relative to the folder: outputs/NAME.bin
  std::vector<uint8_t> bytes;
};

struct DeviceResult {
  std::string runner;          // "lockstep-simulator", or the site's runner
  std::string status;          // "ok" or "failed"
  std::string detail;          // one line: why it failed ("" when ok)
  std::string package;         // the package's file name
  std::string package_digest;  // "fnv1a64:<16 hex digits>" of the package file's bytes
  std::string machine;         // the machine's name
  uint64_t clock_hz = 0;
  uint32_t invocations = 1;
  uint64_t total_cycles = 0;
  std::vector<DeviceOutput> outputs;   // by name
  std::string profile = kProfileFile;  // relative to the folder
};

// "fnv1a64:0123456789abcdef": the digest result.json records for a package file's bytes.
std::string package_file_digest(const std::string& bytes);

// The file an output binding's bytes go to: outputs/NAME.bin, with every byte of NAME
// outside [A-Za-z0-9._-] (and a leading '.') written as %XX, so any name is a safe file name.
std::string output_file_name(const std::string& binding);

// result.json's text for `result` (keys in a fixed order, outputs by name; no timestamps).
std::string result_json_text(const DeviceResult& result);

// Writes result.json, outputs/ and the profile into the existing folder `dir` (a staged
// folder: io/staged_directory.hpp). Each file atomically; result.json last.
void write_device_result(const DeviceResult& result, const arch::Profile& profile, const std::string& dir);

// A result folder and its profile, read and checked. InputError naming the file for a
// missing folder or file, JSON that is not a result, a field of the wrong type, an output
// whose size differs from what result.json says, or a malformed profile.
struct LoadedResult {
  std::string dir;
  DeviceResult result;
  arch::Profile profile;
};
LoadedResult read_device_result(const std::string& dir);

}  // namespace lockstep::replay
