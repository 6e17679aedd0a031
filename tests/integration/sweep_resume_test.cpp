// An interrupted sweep loses nothing it finished: `sweep --resume DIR` completes it with
// every file byte-identical to an uninterrupted run. The sweep is killed (SIGKILL, workers
// included) after a number of journalled points drawn with a fixed seed, and sometimes the
// journal's last record is cut short too, as a crash in the middle of a write would leave it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "support/test_support.hpp"

namespace lockstep::integration {
namespace {

using testing::files_of;
using testing::start_lockstep_in_own_group;

size_t journalled_points(const std::string& journal) {
  std::error_code error;
  if (!std::filesystem::exists(journal, error)) return 0;
  const std::string text = testing::read_file(journal);
  size_t count = 0;
  for (size_t at = text.find("\npoint "); at != std::string::npos; at = text.find("\npoint ", at + 1)) ++count;
  return count;
}

// Starts `lockstep ARGS` in its own process group and kills the group (the sweep and its
// worker processes) once the journal holds `points` records. False if it finished first.
bool run_and_kill(const std::vector<std::string>& args, const std::string& journal, size_t points) {
  const pid_t pid = start_lockstep_in_own_group(args);
  int status = 0;
  while (true) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return false;
    if (journalled_points(journal) >= points) break;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return true;
}

class SweepResume : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::temp_dir("sweep-resume");
    capture_ = dir_ + "/capture.capnp";
    const auto lower =
        testing::run_lockstep({"lower", testing::source_path("configs/workloads/vit-tiny.yaml"), "-o", capture_});
    ASSERT_EQ(lower.exit_code, 0) << lower.err;
  }
  std::vector<std::string> sweep_args(const std::string& out, const std::string& jobs) const {
    return {"sweep", capture_, "--phases", "0-5", "--no-timings", "--jobs", jobs, "-o", out};
  }
  std::string dir_, capture_;
};

TEST_F(SweepResume, InterruptedAtRandomPointsResumesToTheSameFiles) {
  const auto whole = testing::run_lockstep(sweep_args(dir_ + "/whole", "1"));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const auto expected = files_of(dir_ + "/whole");
  ASSERT_GE(expected.size(), 10u);
  EXPECT_FALSE(expected.count("points.journal"));  // removed once the files are written

  std::mt19937 random(20261130);
  size_t interrupted = 0;
  for (int trial = 0; trial < 4; ++trial) {
    const std::string out = dir_ + "/cut" + std::to_string(trial);
    const std::string journal = out + "/points.journal";
    const size_t points = 1 + random() % 200;  // of 228
    if (!run_and_kill(sweep_args(out, "2"), journal, points)) continue;
    ++interrupted;
    if (trial % 2 == 1) {  // a record cut short by the crash
      const auto size = std::filesystem::file_size(journal);
      std::filesystem::resize_file(journal, size - 1 - random() % 40);
    }
    const auto resumed = testing::run_lockstep({"sweep", "--resume", out, "--jobs", "2"});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_NE(resumed.err.find("resuming:"), std::string::npos) << resumed.err;
    EXPECT_EQ(files_of(out), expected) << "trial " << trial << " killed after " << points;
  }
  EXPECT_GE(interrupted, 2u);
}

TEST_F(SweepResume, RefusesWhatWouldLoseOrMixWork) {
  const std::string out = dir_ + "/cut";
  ASSERT_TRUE(run_and_kill(sweep_args(out, "1"), out + "/points.journal", 20));
  // A fresh sweep into the folder would throw the finished points away.
  const auto fresh = testing::run_lockstep(sweep_args(out, "1"));
  EXPECT_EQ(fresh.exit_code, 2);
  EXPECT_NE(fresh.err.find("--resume"), std::string::npos) << fresh.err;
  // The options come from the journal.
  const auto with_seed = testing::run_lockstep({"sweep", "--resume", out, "--seed", "3"});
  EXPECT_EQ(with_seed.exit_code, 2);
  EXPECT_NE(with_seed.err.find("--seed"), std::string::npos) << with_seed.err;
  // A changed capture is refused, not mixed in.
  const auto other = testing::run_lockstep(
      {"capture", "synth", "--family", "skewed", "--tiles", "16", "--phases", "6", "-o", capture_});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  const auto changed = testing::run_lockstep({"sweep", "--resume", out});
  EXPECT_EQ(changed.exit_code, 2);
  EXPECT_NE(changed.err.find("different sweep"), std::string::npos) << changed.err;
  // Nothing to resume in a folder without a journal.
  const auto none = testing::run_lockstep({"sweep", "--resume", dir_});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no sweep to resume"), std::string::npos) << none.err;
}

TEST_F(SweepResume, AnOutputThatCannotBeWrittenFailsBeforeAnyPointRuns) {
  testing::write_file(dir_ + "/file", "x");
  const auto result = testing::run_lockstep(sweep_args(dir_ + "/file/sub", "1"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err.find("points ("), std::string::npos) << result.err;  // no sweep started
  EXPECT_NE(result.err.find("-o"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace lockstep::integration
