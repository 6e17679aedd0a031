// write_report: every file appears, two writes are byte-identical, and timings, the
// output directory's path or temporary names never leak into the outputs.
#include <gtest/gtest.h>

#include <filesystem>

#include "report/report.hpp"
#include "support/test_support.hpp"

namespace lockstep::replay {
namespace {

std::vector<ResultRow> two_phases() {
  return read_results_csv(testing::source_path("tests/data/results/two_phases.csv"));
}

TEST(Report, WritesEveryFileAndNothingElse) {
  const auto rows = two_phases();
  const std::string dir = testing::temp_dir("report-files");
  write_report(rows, load_sweep_definition(kDefaultSweep), 1.5e9, dir + "/out");
  std::set<std::string> written;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/out")) {
    written.insert(entry.path().filename().string());
  }
  const auto expected = report_file_names(rows);
  EXPECT_EQ(written, std::set<std::string>(expected.begin(), expected.end()));
  EXPECT_EQ(expected.size(), 4u + 2u * 4u + 1u);  // CSVs and provenance.json, phase files, index
  EXPECT_TRUE(written.count("phase-17.png"));
  EXPECT_TRUE(written.count("phase-18.pdf"));
}

TEST(Report, TwoWritesAreByteIdenticalWhateverTheTimings) {
  auto rows = two_phases();
  const auto sweep = load_sweep_definition(kDefaultSweep);
  const std::string a = testing::temp_dir("report-a"), b = testing::temp_dir("report-b");
  write_report(rows, sweep, 1.5e9, a);
  for (auto& r : rows) {
    r.compile_ms += 1234.5;
    r.simulate_ms = 0;
  }
  write_report(rows, sweep, 1.5e9, b);
  for (const auto& name : report_file_names(rows)) {
    const std::string text = testing::read_file(a + "/" + name);
    EXPECT_TRUE(text == testing::read_file(b + "/" + name)) << name << " differs";
    EXPECT_EQ(text.find(a), std::string::npos) << name << " contains its directory";
    EXPECT_EQ(text.find("/tmp"), std::string::npos) << name;
  }
  // The timing values of the input appear nowhere.
  const std::string page = testing::read_file(a + "/phase-17.html");
  EXPECT_EQ(page.find("120.500"), std::string::npos);
  EXPECT_EQ(page.find("compile_ms"), std::string::npos);
  EXPECT_NE(page.find("<td>800444</td>"), std::string::npos);
}

TEST(Report, CsvFilesMatchTheHandWorkedExpectations) {
  const std::string dir = testing::temp_dir("report-csv");
  write_report(two_phases(), load_sweep_definition(kDefaultSweep), 1.5e9, dir);
  for (const char* name : {"frontier.csv", "comparisons.csv", "comparisons_by_phase.csv"}) {
    EXPECT_EQ(testing::read_file(dir + "/" + name),
              testing::read_file(testing::source_path(std::string("tests/data/results/expected/") + name)))
        << name;
  }
}

TEST(Report, ClockScalesMilliseconds) {
  const std::string dir = testing::temp_dir("report-clock");
  write_report(two_phases(), load_sweep_definition(kDefaultSweep), 1.0e9, dir);
  // 73037 cycles at 1 GHz.
  EXPECT_NE(testing::read_file(dir + "/comparisons.csv")
                .find("max row grows by at most 64 bytes,2,284442,211405,73037,0.073037,row+64,25.68,\n"),
            std::string::npos);
}

TEST(Report, HtmlEscapesLabels) {
  auto rows = two_phases();
  for (auto& r : rows) {
    if (r.phase == 18) r.label = "a<b>&\"c\"";
  }
  const std::string dir = testing::temp_dir("report-escape");
  write_report(rows, load_sweep_definition(kDefaultSweep), 1.5e9, dir);
  const std::string page = testing::read_file(dir + "/phase-18.html");
  EXPECT_NE(page.find("a&lt;b&gt;&amp;&quot;c&quot;"), std::string::npos);
  EXPECT_EQ(page.find("a<b>"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::replay
