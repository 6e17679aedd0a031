// `lockstep report DIR` end to end: files exist, every link resolves, bad input exits 2
// with the file, line and column.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "support/test_support.hpp"

namespace lockstep::replay {
namespace {

std::string sweep_dir(const std::string& name, const std::string& data_file) {
  const std::string dir = testing::temp_dir(name);
  testing::write_file(dir + "/results.csv",
                      testing::read_file(testing::source_path("tests/data/results/" + data_file)));
  return dir;
}

// Every href= and src= of an HTML file, relative to its directory.
std::vector<std::string> links_of(const std::string& html) {
  std::vector<std::string> links;
  const std::regex attribute("(href|src)=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), attribute); it != std::sregex_iterator(); ++it) {
    links.push_back((*it)[2].str());
  }
  return links;
}

TEST(ReportCommand, BuildsTheReportAndEveryLinkResolves) {
  const std::string dir = sweep_dir("report-cmd", "two_phases.csv");
  const std::string results_before = testing::read_file(dir + "/results.csv");
  const auto result = testing::run_lockstep({"report", dir});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(testing::read_file(dir + "/results.csv"), results_before);
  for (const char* name : {"frontier.csv", "comparisons.csv", "comparisons_by_phase.csv"}) {
    EXPECT_EQ(testing::read_file(dir + "/" + name),
              testing::read_file(testing::source_path(std::string("tests/data/results/expected/") + name)))
        << name;
  }
  std::vector<std::string> pages{"index.html"};
  size_t checked = 0;
  for (size_t i = 0; i < pages.size(); ++i) {
    const std::string html = testing::read_file(dir + "/" + pages[i]);
    for (const std::string& link : links_of(html)) {
      EXPECT_EQ(link.find('/'), std::string::npos) << pages[i] << " links outside: " << link;
      EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/" + link)) << pages[i] << " links to missing " << link;
      ++checked;
      if (link.size() > 5 && link.substr(link.size() - 5) == ".html" &&
          std::find(pages.begin(), pages.end(), link) == pages.end()) {
        pages.push_back(link);
      }
    }
  }
  EXPECT_EQ(pages.size(), 3u);  // index, phase-17, phase-18
  EXPECT_GT(checked, 15u);
  EXPECT_NE(testing::read_file(dir + "/phase-17.html").find("src=\"phase-17.svg\""), std::string::npos);
  EXPECT_NE(result.out.find("13 points, 2 phases"), std::string::npos);
}

// `make demo` renders the model's profile into the report folder: the index links to it
// then, and only then.
TEST(ReportCommand, LinksAProfileTimelineInItsFolder) {
  const std::string dir = sweep_dir("report-timeline", "two_phases.csv");
  ASSERT_EQ(testing::run_lockstep({"report", dir}).exit_code, 0);
  EXPECT_EQ(testing::read_file(dir + "/index.html").find("href=\"profile.html\""), std::string::npos);
  testing::write_file(dir + "/profile.html", "<!doctype html><title>timeline</title>\n");
  ASSERT_EQ(testing::run_lockstep({"report", dir}).exit_code, 0);
  EXPECT_NE(testing::read_file(dir + "/index.html").find("href=\"profile.html\""), std::string::npos);
}

TEST(ReportCommand, TwoProcessesWriteIdenticalBytes) {
  // Separate processes: nothing time- or process-dependent (PDF dates, cairo serial
  // numbers) may reach the files.
  const std::string a = sweep_dir("report-cmd-a", "two_phases.csv");
  const std::string b = sweep_dir("report-cmd-b", "two_phases.csv");
  ASSERT_EQ(testing::run_lockstep({"report", a}).exit_code, 0);
  ASSERT_EQ(testing::run_lockstep({"report", b}).exit_code, 0);
  size_t compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(a)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(testing::read_file(a + "/" + name) == testing::read_file(b + "/" + name)) << name << " differs";
    ++compared;
  }
  EXPECT_EQ(compared, 1u + 4u + 2u * 4u + 1u);  // results.csv and the report (provenance.json too)
}

TEST(ReportCommand, OtherReferenceMachineAndSweepFile) {
  const std::string dir = sweep_dir("report-cmd-ref", "two_phases.csv");
  const std::string sweep = dir + "/sweep.yaml";
  testing::write_file(sweep,
                      "configurations: [latency, S32, S64, S128, B128, B256, B512, B1024]\n"
                      "reference: B1024\nmax_row_growth_bytes: [8]\n");
  auto result =
      testing::run_lockstep({"report", dir, "--configs", sweep, "--reference", "S64", "--machine", "ipu21-c600-t16"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string summary = testing::read_file(dir + "/comparisons.csv");
  // Against S64, neither metric may grow: S64 stays in both phases.
  EXPECT_NE(summary.find("neither storage metric grows,2,273662,273662,0,0.000000,same-storage,0.00,\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("max row grows by at most 8 bytes,2,"), std::string::npos);
  EXPECT_EQ(summary.find("64 bytes"), std::string::npos);
  EXPECT_NE(testing::read_file(dir + "/comparisons_by_phase.csv")
                .find("neither storage metric grows,17,layer.attn.scores,27,S64,9500,S64,word32,"
                      "9500,0\n"),
            std::string::npos);
}

TEST(ReportCommand, MalformedResultsExitTwoWithLineAndColumn) {
  const std::string dir = sweep_dir("report-cmd-bad", "bad_horizon.csv");
  const auto result = testing::run_lockstep({"report", dir});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("results.csv:3: horizon: expected an unsigned integer, got '98x4'"), std::string::npos)
      << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/index.html"));
}

TEST(ReportCommand, MissingReferenceExitsTwoNamingThePhase) {
  const std::string dir = sweep_dir("report-cmd-noref", "missing_reference.csv");
  const auto result = testing::run_lockstep({"report", dir});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("phase 21 (layer.mlp.up): no row for the reference policy B1024"), std::string::npos)
      << result.err;
}

TEST(ReportCommand, BadOptionsExitTwo) {
  const std::string dir = sweep_dir("report-cmd-opts", "two_phases.csv");
  EXPECT_EQ(testing::run_lockstep({"report", dir, "--reference", "B10x"}).exit_code, 2);
  EXPECT_EQ(testing::run_lockstep({"report", dir, "--configs", dir + "/none.yaml"}).exit_code, 2);
  EXPECT_EQ(testing::run_lockstep({"report", dir + "/missing"}).exit_code, 2);
  EXPECT_EQ(testing::run_lockstep({"report", dir, "--machine", "no-such-machine"}).exit_code, 2);
}

}  // namespace
}  // namespace lockstep::replay
