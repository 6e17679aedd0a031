// Commands killed while writing leave nothing that lasts: `sweep --resume` ends with a folder
// byte-identical to an uninterrupted run's and no temporaries in it, a damaged journal record
// is run again instead of failing every resume, and the next `build -o OUT` or `run
// --output-dir DIR` removes the OUT.tmp-XXXXXX files a killed one left (and no other name).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

// A two-phase, 16-tile capture and a three-configuration sweep file (12 points), made once.
struct SmallSweep {
  std::string dir, capture, sweep;
  std::map<std::string, std::string> expected;  // the files of an uninterrupted run
};

using testing::files_of;

std::vector<std::string> sweep_args(const SmallSweep& s, const std::string& out) {
  return {"sweep", s.capture, "--configs", s.sweep, "--jobs", "2", "--no-timings", "-o", out};
}

const SmallSweep& small_sweep() {
  static const SmallSweep s = [] {
    SmallSweep s;
    s.dir = temp_dir("interrupted-sweep");
    s.capture = s.dir + "/capture.yaml";
    const auto synth = run_lockstep({"capture", "synth", "--family", "permutation", "--tiles", "16", "--seed", "3",
                                     "--phases", "2", "--machine", "ipu21-c600", "-o", s.capture});
    EXPECT_EQ(synth.exit_code, 0) << synth.err;
    s.sweep = s.dir + "/sweep.yaml";
    write_file(s.sweep, "configurations: [latency, S64, B256]\nreference: B256\n");
    const auto whole = run_lockstep(sweep_args(s, s.dir + "/whole"));
    EXPECT_EQ(whole.exit_code, 0) << whole.err;
    s.expected = files_of(s.dir + "/whole");
    return s;
  }();
  return s;
}

// A sweep stopped after every point, part way through writing its report (index.html, the
// last file, cannot be written: a folder is in its place), with its journal left behind.
std::string stopped_in_report(const std::string& name) {
  const SmallSweep& s = small_sweep();
  const std::string out = temp_dir(name) + "/sweep";
  std::filesystem::create_directories(out + "/index.html");
  const auto stopped = run_lockstep(sweep_args(s, out));
  EXPECT_EQ(stopped.exit_code, 2) << stopped.err;
  EXPECT_NE(stopped.err.find("index.html"), std::string::npos) << stopped.err;
  EXPECT_TRUE(std::filesystem::exists(out + "/points.journal"));
  std::filesystem::remove(out + "/index.html");
  return out;
}

std::vector<std::string> temporaries_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".tmp-") != std::string::npos) names.push_back(name);
  }
  return names;
}

TEST(InterruptedWrites, ASweepKilledWhileWritingItsReportResumesToTheSameFiles) {
  const SmallSweep& s = small_sweep();
  const std::string out = stopped_in_report("interrupted-report");
  // What SIGKILL in the middle of each write would leave: half of every file, temporarily
  // named; and names that are not the writer's, which must survive.
  for (const auto& [name, bytes] : s.expected) {
    write_file(out + "/" + name + ".tmp-AbC123", bytes.substr(0, bytes.size() / 2));
  }
  const std::set<std::string> near_misses = {"index.html.tmp-AbC12", "results.csv.tmp_AbC123", "notes.tmp-AbC1234",
                                             "index.html.tmp-AbC12!"};
  for (const auto& name : near_misses) write_file(out + "/" + name, "not a temporary\n");
  const auto resumed = run_lockstep({"sweep", "--resume", out, "--jobs", "2"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming: 12 already done"), std::string::npos) << resumed.err;
  auto files = files_of(out);
  for (const auto& name : near_misses) EXPECT_EQ(files.erase(name), 1u) << name;
  EXPECT_EQ(files, s.expected);
}

// One byte flipped in the middle of a journalled point: that point runs again and the sweep
// finishes (it once exited 3, "point result: truncated", on this and every later resume).
TEST(InterruptedWrites, AJournalRecordDamagedInPlaceIsRunAgain) {
  const SmallSweep& s = small_sweep();
  const std::string out = stopped_in_report("interrupted-damaged");
  const std::string journal = out + "/points.journal";
  std::string text = read_file(journal);
  size_t start = text.find('\n');
  for (int k = 0; k < 4; ++k) start = text.find("\npoint ", start + 1);
  const size_t end = text.find("\npoint ", start + 1);
  ASSERT_NE(end, std::string::npos);
  const size_t middle = text.find('\n', start + 1) + (end - text.find('\n', start + 1)) / 2;
  text[middle] = static_cast<char>(text[middle] ^ 0x01);
  write_file(journal, text);
  const auto resumed = run_lockstep({"sweep", "--resume", out, "--jobs", "2"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("cut-short or damaged"), std::string::npos) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming: 11 already done"), std::string::npos) << resumed.err;
  EXPECT_EQ(files_of(out), s.expected);
}

// The sweep killed for real (SIGKILL, workers included) as soon as a temporary appears in its
// folder, so most often in the middle of writing a report file; whatever the kill caught,
// the resumed folder equals an uninterrupted run's and holds no temporaries.
TEST(InterruptedWrites, ASweepKilledAtItsFirstTemporaryResumesToTheSameFiles) {
  const SmallSweep& s = small_sweep();
  size_t caught = 0;
  for (int trial = 0; trial < 3; ++trial) {
    const std::string out = temp_dir("interrupted-kill-" + std::to_string(trial)) + "/sweep";
    std::filesystem::create_directories(out);
    const auto args = sweep_args(s, out);
    const pid_t pid = start_lockstep_in_own_group(args);
    int status = 0;
    bool finished = false;
    while (!(finished = ::waitpid(pid, &status, WNOHANG) == pid) && temporaries_in(out).empty()) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    if (!finished) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    if (!std::filesystem::exists(out + "/points.journal")) continue;  // it finished first
    caught += temporaries_in(out).empty() ? 0 : 1;
    const auto resumed = run_lockstep({"sweep", "--resume", out, "--jobs", "2"});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_EQ(files_of(out), s.expected) << "trial " << trial;
  }
  std::cerr << "killed with a temporary on disk in " << caught << " of 3 trials\n";
  EXPECT_GE(caught, 1u);
}

TEST(InterruptedWrites, BuildAndRunRemoveTheTemporariesAKilledOneLeft) {
  const std::string dir = temp_dir("interrupted-build");
  const std::string package = dir + "/tiny.lkspkg";
  write_file(package + ".tmp-AbC123", std::string(4096, 'x'));  // a killed build's
  write_file(package + ".tmp-AbC12", "near miss\n");
  const auto built = run_lockstep({"build", "vit-tiny", "-o", package});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  EXPECT_FALSE(std::filesystem::exists(package + ".tmp-AbC123"));
  EXPECT_TRUE(std::filesystem::exists(package + ".tmp-AbC12"));

  const std::string out = dir + "/out";
  std::filesystem::create_directories(out);
  write_file(out + "/output.bin.tmp-x1Y2z3", "half");  // a killed `run --output-dir`'s
  write_file(out + "/output.bin.tmp-x1Y2z", "near miss\n");
  write_file(dir + "/output.npy.tmp-Q9q9Q9", "half");  // a killed `run --output`'s
  const auto ran = run_lockstep({"run", package, "--output-dir", out, "--output", dir + "/output.npy"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(out)) names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"output.bin", "output.bin.tmp-x1Y2z"}));
  EXPECT_FALSE(std::filesystem::exists(dir + "/output.npy.tmp-Q9q9Q9"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/output.npy"));
}

}  // namespace
}  // namespace lockstep::testing
