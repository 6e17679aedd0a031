// `lockstep compile` end to end: a synthetic capture in, a package and a JSON report out,
// and the package runs clean in the simulator.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "sim/backend.hpp"
#include "support/test_support.hpp"

namespace lockstep::compiler {
namespace {

using lockstep::testing::run_lockstep;

class CompileCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = lockstep::testing::temp_dir("compile_command");
    capture = dir + "/capture.yaml";
    const auto synth = run_lockstep({"capture", "synth", "--family", "transformer", "--tiles", "16", "--phases", "5",
                                     "--machine", "ipu21-c600", "-o", capture});
    ASSERT_EQ(synth.exit_code, 0) << synth.err;
  }
  std::string dir;
  std::string capture;
};

TEST_F(CompileCommand, ProductionPolicyWritesPackageAndReport) {
  const std::string package = dir + "/out.lkspkg";
  const std::string report = dir + "/report.json";
  const auto result =
      run_lockstep({"compile", capture, "--exchange-stream-words", "1024", "-o", package, "--report", report});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("table peak"), std::string::npos) << result.out;
  const auto json = nlohmann::json::parse(lockstep::testing::read_file(report));
  EXPECT_EQ(json["config"], "B1024");
  ASSERT_EQ(json["phases"].size(), 5u);
  for (const auto& phase : json["phases"]) {
    EXPECT_EQ(phase["gap"].get<int64_t>(), phase["horizon"].get<int64_t>() - phase["lower_bound"].get<int64_t>());
    EXPECT_TRUE(phase.contains("max_row_bytes"));
    EXPECT_TRUE(phase.contains("total_row_bytes"));
    EXPECT_TRUE(phase.contains("patch_calls"));
    EXPECT_TRUE(phase.contains("patch_words"));
  }
  EXPECT_LE(json["table_bytes_shared"].get<uint32_t>(), json["table_bytes_unshared"].get<uint32_t>());
  EXPECT_TRUE(json.contains("orders_considered"));
  EXPECT_TRUE(json.contains("orders_deduplicated"));

  const arch::MachineDescription machine = arch::load_machine("ipu21-c600");
  const arch::Package loaded = arch::read_package(package);
  arch::validate_package(loaded, machine, package);
  EXPECT_TRUE(sim::make_systemc_backend(machine)->run(loaded, {}).ok());
}

TEST_F(CompileCommand, JobsLimitThreadsWithoutChangingThePackage) {
  const std::string every_core = dir + "/every.lkspkg", one = dir + "/one.lkspkg";
  const auto a = run_lockstep({"compile", capture, "--exchange-stream-words", "1024", "-o", every_core});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto b = run_lockstep({"compile", capture, "--exchange-stream-words", "1024", "--jobs", "1", "-o", one});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(lockstep::testing::read_file(one), lockstep::testing::read_file(every_core));
}

TEST_F(CompileCommand, ConfigAndPhaseSelectionInYaml) {
  const std::string package = dir + "/out.yaml";
  const auto result = run_lockstep({"compile", capture, "--config", "S256", "--phases", "0,2-3", "-o", package});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(arch::read_package(package).phases.size(), 3u);
}

TEST_F(CompileCommand, BadInputExitsTwo) {
  const std::string package = dir + "/bad.lkspkg";
  EXPECT_EQ(run_lockstep({"compile", capture, "--config", "X12", "-o", package}).exit_code, 2);
  EXPECT_EQ(run_lockstep({"compile", capture, "--phases", "7-3", "-o", package}).exit_code, 2);
  EXPECT_EQ(run_lockstep({"compile", capture, "--phases", "999", "-o", package}).exit_code, 2);
  EXPECT_EQ(
      run_lockstep({"compile", capture, "--config", "S64", "--exchange-stream-words", "64", "-o", package}).exit_code,
      2);
  EXPECT_EQ(run_lockstep({"compile", dir + "/missing.yaml", "-o", package}).exit_code, 2);
  EXPECT_EQ(run_lockstep({"compile", capture, "--machine", "ipu21-c600-t16", "-o", package}).exit_code, 2);
}

}  // namespace
}  // namespace lockstep::compiler
