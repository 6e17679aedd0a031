// libFuzzer target: any bytes as a runner's result.json, read with the folder it describes: a
// folder (made once) holding outputs/output.bin of 16 bytes and an empty profile. A result or
// an InputError are both fine; anything else is a bug. The sizes result.json claims must be
// checked against the files before anything is allocated for them (a claim of 10^12 bytes was
// a std::bad_alloc).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "io/errors.hpp"
#include "profile/profile.hpp"
#include "sim/device/device_result.hpp"

namespace {

std::string result_folder() {
  static const std::string dir = [] {
    const std::string d =
        std::filesystem::temp_directory_path().string() + "/fuzz-device-result-" + std::to_string(::getpid());
    std::filesystem::create_directories(d + "/outputs");
    std::ofstream(d + "/outputs/output.bin", std::ios::binary) << std::string(16, '\x01');
    lockstep::arch::Profile profile;
    profile.clock_hz = 1'500'000'000;
    lockstep::arch::write_profile(profile, d + "/profile.lsprof");
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string dir = result_folder();
  {
    std::ofstream out(dir + "/" + lockstep::replay::kResultFile, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const lockstep::replay::LoadedResult loaded = lockstep::replay::read_device_result(dir);
    for (const auto& output : loaded.result.outputs) {
      if (output.bytes.size() != 16) __builtin_trap();  // only output.bin exists, 16 bytes
    }
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
