// The device-result fuzzer's corpus (tests/fuzz/corpus/device_result): each file as the
// result.json of a folder holding outputs/output.bin (16 bytes) and a profile, as the fuzzer
// reads them. Every file reads, or fails with one line naming result.json; a size claimed
// beyond the file (10^12 bytes, 2^32) fails by the file's length, not by an allocation.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "io/errors.hpp"
#include "profile/profile.hpp"
#include "sim/device/device_result.hpp"
#include "support/test_support.hpp"

namespace lockstep::replay {
namespace {

TEST(DeviceResultCorpus, EveryFileReadsOrIsRefusedInOneLine) {
  const std::string dir = testing::temp_dir("device-result-corpus");
  std::filesystem::create_directories(dir + "/outputs");
  testing::write_file(dir + "/outputs/output.bin", std::string(16, '\x01'));
  arch::Profile profile;
  profile.clock_hz = 1'500'000'000;
  arch::write_profile(profile, dir + "/profile.lsprof");
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(testing::source_path("tests/fuzz/corpus/device_result"))) {
    files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  size_t read = 0, refused = 0;
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    testing::write_file(dir + "/result.json", testing::read_file(file.string()));
    try {
      const LoadedResult loaded = read_device_result(dir);
      for (const auto& output : loaded.result.outputs) EXPECT_EQ(output.bytes.size(), 16u);
      ++read;
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_NE(message.find(dir + "/"), std::string::npos) << message;
      if (file.filename().string().rfind("claims_", 0) == 0) {
        EXPECT_NE(message.find("16 bytes, but result.json says"), std::string::npos) << message;
      }
      ++refused;
    }
  }
  EXPECT_GE(files.size(), 8u);
  EXPECT_GE(read, 2u);
  EXPECT_GE(refused, 6u);
}

}  // namespace
}  // namespace lockstep::replay
