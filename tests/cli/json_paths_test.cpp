// File names need not be UTF-8 on Linux; --json output replaces such bytes (U+FFFD) rather
// than failing with exit 3 after the work is done.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_support.hpp"

namespace lockstep::cli {
namespace {

TEST(JsonPaths, APackagePathThatIsNotUtf8StillGivesJson) {
  const std::string dir = testing::temp_dir("json-paths");
  const std::string package = dir + "/b\xff.yaml";
  std::filesystem::copy_file(testing::source_path("tests/integration/packages/back_to_back.yaml"), package);
  const auto run = testing::run_lockstep({"run", package, "--json"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("b\xef\xbf\xbd.yaml"), std::string::npos) << run.out;
  const auto inspect = testing::run_lockstep({"inspect", package, "--json"});
  EXPECT_EQ(inspect.exit_code, 0) << inspect.err;
}

}  // namespace
}  // namespace lockstep::cli
