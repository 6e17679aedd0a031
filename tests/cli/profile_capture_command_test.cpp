// `run --profile`, `replay --profile` and `profile export --chrome` as a user runs them:
// files that read back, a Chrome trace whose events add up, and bad input refused with
// one line, exit 2 and no file left behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "profile/profile.hpp"
#include "support/test_support.hpp"

namespace lockstep {
namespace {

using testing::expect_bad_input;
using testing::run_lockstep;

using testing::integration_package;

TEST(ProfileCommands, RunWritesAProfileAndExportMakesAChromeTrace) {
  const std::string dir = testing::temp_dir("profile_cli");
  const auto run = run_lockstep({"run", integration_package("repeat27"), "--profile", dir + "/r.lsprof"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const arch::Profile profile = arch::read_profile(dir + "/r.lsprof");
  size_t samples = 0;
  for (const auto& t : profile.tiles) samples += t.samples.size();
  EXPECT_NE(run.err.find("profile " + dir + "/r.lsprof: " + std::to_string(samples) + " samples"), std::string::npos)
      << run.err;
  EXPECT_EQ(profile.source, "repeat27.yaml");
  EXPECT_EQ(profile.producer.rfind("lockstep ", 0), 0u);

  const auto exported = run_lockstep({"profile", "export", dir + "/r.lsprof", "--chrome", dir + "/t.json"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const auto trace = nlohmann::json::parse(testing::read_file(dir + "/t.json"));
  size_t complete = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++complete;
    EXPECT_GE(e["dur"].get<double>(), 0.0);
  }
  EXPECT_EQ(complete, samples);
  // One tile of one invocation: only its events (and its thread's name).
  ASSERT_EQ(run_lockstep({"profile", "export", dir + "/r.lsprof", "--chrome", dir + "/one.json", "--tiles", "0",
                          "--invocation", "0"})
                .exit_code,
            0);
  size_t tile0 = 0;
  const auto one = nlohmann::json::parse(testing::read_file(dir + "/one.json"));
  for (const auto& e : one["traceEvents"]) {
    if (e["ph"] == "X") {
      EXPECT_EQ(e["tid"], 0);
      ++tile0;
    }
  }
  EXPECT_EQ(tile0, profile.tiles.front().samples.size());
  // The same bytes from a second export.
  ASSERT_EQ(run_lockstep({"profile", "export", dir + "/r.lsprof", "--chrome", dir + "/t2.json"}).exit_code, 0);
  EXPECT_EQ(testing::read_file(dir + "/t.json"), testing::read_file(dir + "/t2.json"));
}

TEST(ProfileCommands, ReplayWritesTheReplayedPhasesProfile) {
  const std::string dir = testing::temp_dir("profile_cli");
  const std::string capture = dir + "/c.capnp";
  ASSERT_EQ(run_lockstep({"capture", "synth", "--family", "uniform", "--tiles", "16", "--machine", "ipu21-c600-t16",
                          "-o", capture})
                .exit_code,
            0);
  const auto r =
      run_lockstep({"replay", capture, "--phase", "0", "--config", "latency", "--profile", dir + "/p.lsprof"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const arch::Profile profile = arch::read_profile(dir + "/p.lsprof");
  EXPECT_FALSE(profile.tiles.empty());
  EXPECT_NE(profile.source.find("phase 0 config latency"), std::string::npos) << profile.source;
}

TEST(ProfileCommands, BadInputIsOneLineAndLeavesNoFile) {
  const std::string dir = testing::temp_dir("profile_cli");
  expect_bad_input(run_lockstep({"run", integration_package("p2p_3w"), "--profile", dir + "/missing/p.lsprof"}),
                   "--profile");
  expect_bad_input(run_lockstep({"run", integration_package("p2p_3w"), "--profile", integration_package("p2p_3w")}),
                   "the output is the input");
  testing::write_file(dir + "/cut.lsprof", std::string("\x00\x00\x00\x00\x10\x00\x00\x00", 8));
  expect_bad_input(run_lockstep({"profile", "export", dir + "/cut.lsprof", "--chrome", dir + "/t.json"}), "cut.lsprof");
  expect_bad_input(run_lockstep({"profile", "export", integration_package("p2p_3w"), "--chrome", dir + "/t.json"}),
                   "p2p_3w.yaml");
  EXPECT_FALSE(std::filesystem::exists(dir + "/t.json"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing"));
}

}  // namespace
}  // namespace lockstep
