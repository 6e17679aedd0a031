// The full-size 27-layer workload, not a toy: lower configs/workloads/siglip-so400m.yaml,
// sweep three phases of different kinds (an embedding scatter, a reduce and a scatter
// inside the 27-iteration layer Repeat) under two configurations, every destination word of
// every iteration checked; one worker and two workers write the same bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "support/test_support.hpp"

namespace lockstep::slow {
namespace {

std::map<std::string, std::string> files_of(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().lexically_relative(dir).string();
    // Plots are drawn by cairo; their bytes depend on its version, not on the sweep.
    if (name.ends_with(".png") || name.ends_with(".pdf")) continue;
    files[name] = testing::read_file(e.path().string());
  }
  return files;
}

TEST(FullSizeSweep, ThreePhasesPassEveryWordAndDoNotDependOnWorkers) {
  const std::string dir = testing::temp_dir("full-size-sweep");
  const std::string capture = dir + "/siglip.capnp", sweep = dir + "/sweep.yaml";
  const auto lowered =
      testing::run_lockstep({"lower", testing::source_path("configs/workloads/siglip-so400m.yaml"), "-o", capture});
  ASSERT_EQ(lowered.exit_code, 0) << lowered.err;
  testing::write_file(sweep, "configurations: [B1024, S256]\nreference: B1024\nmax_row_growth_bytes: [256]\n");

  std::map<std::string, std::string> first;
  for (const char* jobs : {"1", "2"}) {
    SCOPED_TRACE(jobs);
    const std::string out = dir + "/j" + jobs;
    const auto run = testing::run_lockstep(
        {"sweep", capture, "--configs", sweep, "--phases", "2,4,17", "--jobs", jobs, "--no-timings", "-o", out});
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    const std::string results = testing::read_file(out + "/results.csv");
    size_t rows = 0, passed = 0;
    for (size_t at = results.find('\n'); at != std::string::npos && at + 1 < results.size();
         at = results.find('\n', at + 1)) {
      ++rows;
      const size_t end = results.find('\n', at + 1);
      passed += results.substr(at + 1, end - at - 1).ends_with(",pass");
    }
    EXPECT_EQ(rows, 3u * 2u * 2u) << results;  // phases x configurations x widths
    EXPECT_EQ(passed, rows) << results;
    const auto files = files_of(out);
    if (first.empty()) {
      first = files;
    } else {
      EXPECT_EQ(files, first);
    }
  }
}

}  // namespace
}  // namespace lockstep::slow
