#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

TEST(ConfigsCommand, ListsEmbeddedMachines) {
  const auto result = run_lockstep({"configs"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("configs/machines/ipu21-c600.yaml"), std::string::npos);
}

TEST(ConfigsCommand, UnknownNameIsBadInput) {
  const auto result = run_lockstep({"configs", "configs/machines/nope.yaml"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("nope.yaml"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::testing
