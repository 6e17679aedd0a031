// `lockstep replay` end to end: the printed figures, pass, and bad input.
#include <gtest/gtest.h>

#include <sstream>

#include "support/test_support.hpp"

namespace lockstep::replay {
namespace {

const std::string& repeat_capture() {
  static const std::string path = [] {
    const std::string p = testing::temp_dir("replay-cmd") + "/transformer.yaml";
    const auto r = testing::run_lockstep({"capture", "synth", "--family", "transformer", "--tiles", "16", "--seed",
                                          "15", "--phases", "6", "--machine", "ipu21-c600", "-o", p});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return p;
  }();
  return path;
}

TEST(ReplayCommand, ReplaysEveryIterationAndPasses) {
  const auto stats = testing::run_lockstep({"capture", "stats", repeat_capture()});
  ASSERT_EQ(stats.exit_code, 0);
  // Find a phase with a Repeat (iterations > 1) in the stats table.
  std::string phase;
  std::istringstream lines(stats.out);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    if (cells.size() == 8 && cells[0] != "phase" && cells[3] != "1") phase = cells[0];
  }
  ASSERT_FALSE(phase.empty()) << stats.out;
  const auto r = testing::run_lockstep({"replay", repeat_capture(), "--phase", phase, "--config", "B256", "--all"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("27 of 27 iteration(s) replayed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x 27 execution(s)"), std::string::npos) << r.out;
  for (const char* field : {"horizon", "lower bound", "max row", "total row", "patch words"}) {
    EXPECT_NE(r.out.find(field), std::string::npos) << field;
  }
  EXPECT_NE(r.out.find("payload      pass"), std::string::npos) << r.out;

  const auto first = testing::run_lockstep(
      {"replay", repeat_capture(), "--phase", phase, "--config", "B256", "--iterations", "first", "--samples", "100"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("word32, 1 of 27 iteration(s)"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("100 sampled"), std::string::npos) << first.out;

  // The paired width, every iteration.
  const auto paired =
      testing::run_lockstep({"replay", repeat_capture(), "--phase", phase, "--config", "B256p", "--samples", "100"});
  ASSERT_EQ(paired.exit_code, 0) << paired.out << paired.err;
  EXPECT_NE(paired.out.find("paired64, 27 of 27 iteration(s)"), std::string::npos) << paired.out;
  EXPECT_NE(paired.out.find("payload      pass"), std::string::npos) << paired.out;
}

TEST(ReplayCommand, BadInputExitsTwo) {
  const auto phase = testing::run_lockstep({"replay", repeat_capture(), "--phase", "99", "--config", "B256"});
  EXPECT_EQ(phase.exit_code, 2);
  EXPECT_NE(phase.err.find("phase 99"), std::string::npos) << phase.err;
  const auto config = testing::run_lockstep({"replay", repeat_capture(), "--phase", "0", "--config", "Q7"});
  EXPECT_EQ(config.exit_code, 2);
  EXPECT_NE(config.err.find("--config"), std::string::npos) << config.err;
  const auto both = testing::run_lockstep(
      {"replay", repeat_capture(), "--phase", "0", "--config", "B256", "--all", "--samples", "5"});
  EXPECT_EQ(both.exit_code, 2);
}

}  // namespace
}  // namespace lockstep::replay

namespace lockstep::replay {
namespace {

// A phase with no transfers moves nothing: replay and sweep pass it with horizon 0.
TEST(ReplayCommand, AnEmptyPhasePassesWithNothingToMove) {
  const std::string capture = testing::source_path("tests/data/captures/small.yaml");
  const auto r = testing::run_lockstep({"replay", capture, "--phase", "9", "--config", "B256"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("nothing to move"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("payload      pass"), std::string::npos) << r.out;
  const std::string dir = testing::temp_dir("replay-empty-phase");
  const auto s =
      testing::run_lockstep({"sweep", capture, "--phases", "9", "--word32-only", "--no-timings", "-o", dir + "/sweep"});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  const std::string results = testing::read_file(dir + "/sweep/results.csv");
  EXPECT_EQ(results.find(",fail"), std::string::npos) << results;
  EXPECT_NE(results.find("9,\"empty: \"\"quoted\"\"\",1,latency,word32,0,0,"), std::string::npos) << results;
}

}  // namespace
}  // namespace lockstep::replay
