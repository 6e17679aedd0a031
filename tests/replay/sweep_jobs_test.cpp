// `lockstep sweep` end to end on a small synthetic capture: every point passes its payload
// check and the outputs are byte-identical whatever the worker count.
#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/compile.hpp"
#include "formats/capture.hpp"
#include "replay/point.hpp"
#include "results/results.hpp"
#include "support/test_support.hpp"

namespace lockstep::replay {
namespace {

// A two-phase, 16-tile capture and a three-configuration sweep file, made once.
struct SmallSweep {
  std::string dir, capture, sweep;
};

const SmallSweep& small_sweep() {
  static const SmallSweep s = [] {
    SmallSweep s;
    s.dir = testing::temp_dir("sweep-small");
    s.capture = s.dir + "/capture.yaml";
    const auto synth = testing::run_lockstep({"capture", "synth", "--family", "permutation", "--tiles", "16", "--seed",
                                              "3", "--phases", "2", "--machine", "ipu21-c600", "-o", s.capture});
    EXPECT_EQ(synth.exit_code, 0) << synth.err;
    s.sweep = s.dir + "/sweep.yaml";
    testing::write_file(s.sweep,
                        "configurations: [latency, S64, B256]\n"
                        "reference: B256\n"
                        "max_row_growth_bytes: [64]\n");
    return s;
  }();
  return s;
}

using testing::files_of;

TEST(SweepJobs, EveryPointPassesAndOutputIsIndependentOfJobs) {
  const auto& s = small_sweep();
  std::map<std::string, std::string> first;
  for (const char* jobs : {"1", "2", "3"}) {
    const std::string out = s.dir + "/out-" + jobs;
    const auto r =
        testing::run_lockstep({"sweep", s.capture, "--configs", s.sweep, "--jobs", jobs, "--no-timings", "-o", out});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const auto files = files_of(out);
    if (first.empty()) {
      first = files;
      continue;
    }
    ASSERT_EQ(files.size(), first.size());
    for (const auto& [name, bytes] : first) EXPECT_EQ(files.at(name), bytes) << name << " jobs " << jobs;
  }
  for (const char* name : {"results.csv", "frontier.csv", "comparisons.csv", "index.html"}) {
    EXPECT_TRUE(first.count(name)) << name;
  }
  const auto rows = parse_results_csv(first.at("results.csv"), "results.csv");
  ASSERT_EQ(rows.size(), 2u * 3 * 2);  // phases x configurations x widths
  EXPECT_EQ(point_name(rows[0]), "latency");
  EXPECT_EQ(point_name(rows[1]), "latencyp");
  EXPECT_EQ(point_name(rows[2]), "S64");
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].width, i % 2 ? compiler::Width::Paired64 : compiler::Width::Word32) << i;
  }
  for (const auto& row : rows) {
    EXPECT_TRUE(row.payload_pass) << row.phase << " " << point_name(row);
    EXPECT_GT(row.horizon, 0u);
    EXPECT_GE(row.horizon, row.lower_bound);
    EXPECT_EQ(row.compile_ms, 0.0);
  }
}

TEST(SweepJobs, TimingsAndOptions) {
  const auto& s = small_sweep();
  const std::string out = s.dir + "/out-timed";
  const auto r = testing::run_lockstep(
      {"sweep", s.capture, "--configs", s.sweep, "--phases", "1", "--samples", "64", "--word32-only", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_results_csv(out + "/results.csv");
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) {
    EXPECT_EQ(row.phase, 1u);
    EXPECT_EQ(row.width, compiler::Width::Word32);
    EXPECT_GT(row.compile_ms + row.simulate_ms, 0.0);
  }
  EXPECT_NE(r.err.find("64 sampled destination words"), std::string::npos) << r.err;
}

TEST(SweepJobs, BadInputExitsTwo) {
  const auto& s = small_sweep();
  const auto missing_phase =
      testing::run_lockstep({"sweep", s.capture, "--configs", s.sweep, "--phases", "9", "-o", s.dir + "/x"});
  EXPECT_EQ(missing_phase.exit_code, 2);
  EXPECT_NE(missing_phase.err.find("phase 9"), std::string::npos) << missing_phase.err;
  const auto bad_list =
      testing::run_lockstep({"sweep", s.capture, "--configs", s.sweep, "--phases", "1-", "-o", s.dir + "/x"});
  EXPECT_EQ(bad_list.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(s.dir + "/x"));
}

// A paired twin of a phase without a pair-eligible transfer takes its word32 twin's result;
// one of a phase with such a transfer is compiled and simulated. Either way its figures equal
// a run of its own.
TEST(SweepJobs, PairedTwinTakesTheWord32ResultOnlyWithoutAnEligibleTransfer) {
  const std::string dir = testing::temp_dir("sweep-twins");
  const std::string path = dir + "/multicast.yaml";
  const auto synth = testing::run_lockstep({"capture", "synth", "--family", "multicast", "--tiles", "16", "--seed", "3",
                                            "--phases", "4", "--machine", "ipu21-c600", "-o", path});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const auto capture = arch::read_capture(path);
  const auto machine = machine_for(capture, "");
  PointOptions options;
  options.payload_digest = true;
  size_t taken = 0, simulated = 0;
  for (const auto& phase : capture.phases) {
    const PointSpec word32{phase.id, "B256", false}, paired{phase.id, "B256", true};
    const auto both = run_points(capture, machine, {word32, paired}, options);
    ASSERT_EQ(both.size(), 2u);
    const auto alone = run_point(capture, machine, paired, options);
    const auto& twin = both[1];
    EXPECT_TRUE(twin.spec.paired);
    EXPECT_TRUE(twin.payload_ok()) << twin.error;
    EXPECT_EQ(twin.horizon, alone.horizon) << phase.id;
    EXPECT_EQ(twin.compiled_horizon, alone.compiled_horizon) << phase.id;
    EXPECT_EQ(twin.total_row_bytes, alone.total_row_bytes) << phase.id;
    EXPECT_EQ(twin.executions, alone.executions) << phase.id;
    EXPECT_EQ(twin.words_checked, alone.words_checked) << phase.id;
    EXPECT_EQ(twin.payload_digest, alone.payload_digest) << phase.id;
    if (!compiler::paired_width_applies(phase, machine)) {
      ++taken;
      EXPECT_EQ(twin.simulate_ms, 0.0);
      EXPECT_EQ(twin.compile_ms, 0.0);
      EXPECT_EQ(twin.horizon, both[0].horizon);
    } else {
      ++simulated;
      EXPECT_GT(twin.simulate_ms, 0.0);
    }
  }
  // This capture has both kinds: phases without a pair-eligible transfer and phases with.
  EXPECT_GE(taken, 1u);
  EXPECT_GE(simulated, 1u);
}

}  // namespace
}  // namespace lockstep::replay
