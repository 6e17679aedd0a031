#include "io/embedded_configs.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

TEST(EmbeddedConfigs, HoldTheMachineFilesVerbatim) {
  const auto& files = embedded_configs();
  const auto it = files.find("configs/machines/ipu21-c600.yaml");
  ASSERT_NE(it, files.end());
  EXPECT_EQ(std::string(it->second), testing::read_file(testing::source_path("configs/machines/ipu21-c600.yaml")));
}

}  // namespace
}  // namespace lockstep::arch
