// Every file of the package fuzzer's corpus (tests/fuzz/corpus/package) goes through the
// reader as an ordinary test: it must give a Package or an InputError, never anything else.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "formats/package_io.hpp"
#include "io/errors.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

TEST(PackageReaderCorpus, EveryFileReadsOrFailsAsBadInput) {
  const std::filesystem::path dir = testing::source_path("tests/fuzz/corpus/package");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 5u);
  size_t packages = 0, rejected = 0;
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    try {
      const Package p = read_package(file.string());
      // What was read also converts both ways without loss.
      const std::string capnp = package_to_capnp_bytes(p);
      EXPECT_EQ(read_package_from_bytes(reinterpret_cast<const uint8_t*>(capnp.data()), capnp.size(), "again"), p);
      ++packages;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      ++rejected;
    }
  }
  EXPECT_GT(packages, 0u);
  EXPECT_GT(rejected, 0u);
}

}  // namespace
}  // namespace lockstep::arch
