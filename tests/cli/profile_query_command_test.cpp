// `lockstep profile summary|phases|query|render` end to end on written profiles: output
// forms, filters that match nothing (an empty table, exit 0) and bad input (one line, exit 2,
// no file left behind).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"
#include "tests/cli/profile_fixture.hpp"

namespace lockstep::testing {
namespace {

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

size_t lines(const std::string& text) { return count_of(text, "\n"); }

class ProfileCommandTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(temp_dir("profile-commands"));
    arch::write_profile(synthetic_profile(16, 6), profile());
  }
  static std::string profile() { return *dir_ + "/small.lsprof"; }
  static std::string path(const std::string& name) { return *dir_ + "/" + name; }

  // Exit 2 with exactly one line on stderr, naming `what`.
  static void expect_bad_input(const std::vector<std::string>& args, const std::string& what) {
    const CommandResult r = run_lockstep(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  }

  static std::string* dir_;
};
std::string* ProfileCommandTest::dir_ = nullptr;

TEST_F(ProfileCommandTest, SummaryPrintsTotalsAndTiles) {
  const CommandResult text = run_lockstep({"profile", "summary", profile()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* part : {"16 tiles", "by kind", "by operation", "by kernel", "busiest tiles", "idlest tiles",
                           "gemm_f16", "exchanges 6"}) {
    EXPECT_NE(text.out.find(part), std::string::npos) << part << "\n" << text.out;
  }
  const CommandResult json = run_lockstep({"profile", "summary", profile(), "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["tiles"], 16);
  EXPECT_EQ(j["samples"], 16 * 6 * 2);
  EXPECT_EQ(j["tiles_by_compute"].size(), 16u);
  EXPECT_EQ(j["by_kind"].size(), 3u);  // compute, exchange, synchronization
}

TEST_F(ProfileCommandTest, QueryGroupsInEveryForm) {
  const CommandResult json = run_lockstep({"profile", "query", profile(), "--group-by", "kernel", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  std::set<std::string> names;
  for (const auto& g : j["groups"]) names.insert(g["name"].get<std::string>());
  EXPECT_EQ(names, (std::set<std::string>{"exchange", "gemm_f16", "layernorm_f16", "softmax_f16", "sync"}));
  const CommandResult csv = run_lockstep({"profile", "query", profile(), "--group-by", "tile", "--csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("tile,samples,tiles,phases,phase_cycles,", 0), 0u) << csv.out;
  EXPECT_EQ(lines(csv.out), 17u);
  const CommandResult filtered = run_lockstep({"profile", "query", profile(), "--group-by", "meta:reason", "--kind",
                                               "synchronization", "--tiles", "0-9", "--longest", "3"});
  ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
  EXPECT_NE(filtered.out.find("ExchangeBarrier"), std::string::npos) << filtered.out;
  EXPECT_NE(filtered.out.find("longest samples"), std::string::npos) << filtered.out;
  const CommandResult phase = run_lockstep(
      {"profile", "query", profile(), "--group-by", "phase", "--phases", "0x80000000-0x80000002", "--json"});
  ASSERT_EQ(phase.exit_code, 0) << phase.err;
  EXPECT_EQ(nlohmann::json::parse(phase.out)["groups"].size(), 3u);
}

TEST_F(ProfileCommandTest, FiltersThatMatchNothingPrintAnEmptyTable) {
  const CommandResult text = run_lockstep({"profile", "query", profile(), "--kernel", "no_such_kernel"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("(no samples match)"), std::string::npos) << text.out;
  const CommandResult json = run_lockstep({"profile", "query", profile(), "--tiles", "900", "--json"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(nlohmann::json::parse(json.out)["groups"].empty());
  const CommandResult csv = run_lockstep({"profile", "query", profile(), "--operation", "zzz", "--csv"});
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(lines(csv.out), 1u) << csv.out;  // the header alone
  const CommandResult phases = run_lockstep({"profile", "phases", profile(), "--epoch", "7", "--json"});
  EXPECT_EQ(phases.exit_code, 0) << phases.err;
  EXPECT_TRUE(nlohmann::json::parse(phases.out)["phases"].empty());
  const CommandResult none = run_lockstep({"profile", "phases", profile(), "--max-cycles", "1"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("(no phases match)"), std::string::npos) << none.out;
}

TEST_F(ProfileCommandTest, PhasesGroupsByExchangeAndSorts) {
  const CommandResult json = run_lockstep({"profile", "phases", profile(), "--json", "--sort-by", "occupancy"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto phases = nlohmann::json::parse(json.out)["phases"];
  ASSERT_EQ(phases.size(), 6u);
  for (size_t i = 0; i < phases.size(); ++i) {
    EXPECT_EQ(phases[i]["tiles"], 16);
    EXPECT_EQ(phases[i]["exchange"]["sync_only_tiles"], 2);  // tiles 3 and 10
    EXPECT_EQ(phases[i]["exchange"]["tiles"], 14);
    EXPECT_EQ(phases[i]["exchange"]["event_cycles"], 400);
    if (i > 0) {
      EXPECT_LE(phases[i - 1]["occupancy"].get<double>(), phases[i]["occupancy"].get<double>());
    }
  }
  const CommandResult at = run_lockstep({"profile", "phases", profile(), "--at-offset", "10", "--json"});
  ASSERT_EQ(at.exit_code, 0) << at.err;
  EXPECT_EQ(nlohmann::json::parse(at.out)["phases"].size(), 1u);
  const CommandResult csv = run_lockstep({"profile", "phases", profile(), "--csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(lines(csv.out), 7u);
  EXPECT_NE(csv.out.find(",partner_busy,idle\n"), std::string::npos) << csv.out;
  const CommandResult text = run_lockstep({"profile", "phases", profile(), "--shared-clock"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("shared clock"), std::string::npos) << text.out;
}

TEST_F(ProfileCommandTest, BadInputIsOneLineAndExitTwo) {
  expect_bad_input({"profile", "query", profile(), "--at-offset", "99999999"}, "--at-offset");
  expect_bad_input({"profile", "phases", profile(), "--at-offset", "99999999"}, "--at-offset");
  expect_bad_input({"profile", "query", profile(), "--group-by", "colour"}, "--group-by");
  expect_bad_input({"profile", "query", profile(), "--tiles", "9-3"}, "--tiles");
  expect_bad_input({"profile", "query", profile(), "--kind", "busy"}, "--kind");
  expect_bad_input({"profile", "phases", profile(), "--sort-by", "colour"}, "--sort-by");
  expect_bad_input({"profile", "phases", profile(), "--max-occupancy=-1"}, "--max-occupancy");
  expect_bad_input({"profile", "summary", path("missing.lsprof")}, "missing.lsprof");
  write_file(path("garbage.lsprof"), "not a profile at all, just text\n");
  expect_bad_input({"profile", "summary", path("garbage.lsprof")}, "garbage.lsprof");
  expect_bad_input({"profile", "query", profile(), "--json", "--csv"}, "--csv");
}

TEST_F(ProfileCommandTest, RenderWritesOneBandPerExchangeWindow) {
  const std::string html = path("small.html");
  const CommandResult r = run_lockstep({"profile", "render", profile(), "-o", html});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string page = read_file(html);
  EXPECT_EQ(count_of(page, "class=\"phase-band\""), 6u);
  EXPECT_EQ(count_of(page, "<script"), 2u);  // the data and the script, both inline
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  const std::string again = path("again.html");
  ASSERT_EQ(run_lockstep({"profile", "render", profile(), "-o", again}).exit_code, 0);
  EXPECT_EQ(read_file(again), page);  // deterministic
}

TEST_F(ProfileCommandTest, RenderRefusesBadInputAndLeavesNoFile) {
  const std::string out = path("bad.html");
  write_file(path("truncated.lsprof"), read_file(profile()).substr(0, 100));
  expect_bad_input({"profile", "render", path("truncated.lsprof"), "-o", out}, "truncated.lsprof");
  EXPECT_FALSE(std::filesystem::exists(out));
  expect_bad_input({"profile", "render", profile(), "-o", path("no/such/dir/x.html")}, "-o");
  expect_bad_input({"profile", "render", profile(), "-o", profile()}, profile());
}

}  // namespace
}  // namespace lockstep::testing
