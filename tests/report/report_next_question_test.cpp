// The report answers the next question, on tests/data/results/two_phases.csv (numbers by hand):
//
// Reference B1024: phase 17 9824 x 27 = 265248 weighted cycles, phase 18 19194 x 1 = 19194
// (284442 together). Best passing horizon: 17 -> B128 7000 (S32's 5000 failed), 18 -> B256
// 12307. Bounds 4000 and 9000, gaps 3000 (x 27 = 81000) and 3307.
// Savings (comparison_windows_test.cpp): 10780, 73037, 83135, 83135 weighted cycles =
// 3.79 %, 25.68 %, 29.23 %, 29.23 % of the reference's exchange cycles; of a 1,000,000-cycle
// program 1.08 %, 7.30 %, 8.31 %, 8.31 %.
#include <gtest/gtest.h>

#include <filesystem>

#include "report/comparison.hpp"
#include "report/phase_summary.hpp"
#include "report/plot_groups.hpp"
#include "report/report.hpp"
#include "results/provenance.hpp"
#include "support/test_support.hpp"

namespace lockstep::replay {
namespace {

std::vector<ResultRow> two_phases() {
  return read_results_csv(testing::source_path("tests/data/results/two_phases.csv"));
}

ReportProvenance sample_provenance() {
  ReportProvenance p;
  p.capture = "capture.capnp";
  p.capture_fnv1a64 = "0x0123456789abcdef";
  p.machine = "ipu21-c600-t16";
  p.machine_digest = "fedcba9876543210";
  p.sweep_lockstep = "0.9.0 (commit abc)";
  p.report_lockstep = "0.9.1 (commit def)";
  p.program_cycles = 1000000;
  return p;
}

TEST(ReportNextQuestion, PhaseSummariesBestBoundGapAndRankings) {
  const auto rows = two_phases();
  const auto sweep = load_sweep_definition(kDefaultSweep);
  const auto c = compare_to_reference(rows, sweep.reference, comparison_windows(sweep), 1.5e9);
  const auto phases = group_by_phase(rows);
  const auto s = summarize_phases(rows, phases, {c.by_phase[0].reference_row, c.by_phase[1].reference_row});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].weighted_cycles, 265248u);
  EXPECT_EQ(s[0].best_horizon, 7000u);
  EXPECT_EQ(s[0].best_point, "B128");
  EXPECT_EQ(s[0].lower_bound, 4000u);
  EXPECT_EQ(s[0].gap, 3000u);
  EXPECT_EQ(s[0].weighted_gap, 81000u);
  EXPECT_EQ(s[1].weighted_cycles, 19194u);
  EXPECT_EQ(s[1].best_horizon, 12307u);
  EXPECT_EQ(s[1].best_point, "B256");
  EXPECT_EQ(s[1].gap, 3307u);
  EXPECT_EQ(rank_by_weighted_cycles(s), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(rank_by_gap(s), (std::vector<size_t>{0, 1}));
  // Scaled so phase 18 carries more: the two rankings can differ.
  auto t = s;
  t[1].weighted_gap = 90000;
  EXPECT_EQ(rank_by_gap(t), (std::vector<size_t>{1, 0}));
  EXPECT_EQ(rank_by_weighted_cycles(t), (std::vector<size_t>{0, 1}));
}

TEST(ReportNextQuestion, IndexCarriesTheNewColumnsPercentagesAndProvenance) {
  const std::string dir = testing::temp_dir("report-next");
  write_report(two_phases(), load_sweep_definition(kDefaultSweep), 1.5e9, dir, sample_provenance());
  const std::string index = testing::read_file(dir + "/index.html");
  for (const char* text :
       {"<th title=\"smallest horizon of a passing point\">best horizon</th>", ">bound</th>", ">gap</th>",
        "<td>265248</td><td>7000</td><td class=\"text\">B128</td>"
        "<td>4000</td><td>3000</td>",
        "<td>19194</td><td>12307</td><td class=\"text\">B256</td><td>9000</td><td>3307</td>",
        "Phases by weighted cycles", "Phases by gap", "<td>81000</td>",
        // same-storage: 3.79 % of the reference's exchange, 1.08 % of the program
        "<td>10780</td><td>3.79</td><td>1.08</td>", "<td>73037</td><td>25.68</td><td>7.30</td>",
        "<td>93.25</td>",  // phase 17's share of the reference's exchange cycles
        "Whole program: 1000000 cycles", "capture.capnp, FNV-1a 64 0x0123456789abcdef",
        "ipu21-c600-t16, digest fedcba9876543210", "Lockstep 0.9.0 (commit abc)", "Lockstep 0.9.1 (commit def)",
        "href=\"provenance.json\"", "overflow-wrap:anywhere", "overflow-x:auto"}) {
    EXPECT_NE(index.find(text), std::string::npos) << text;
  }
  EXPECT_EQ(testing::read_file(dir + "/comparisons.csv"),
            "window,phases,reference_weighted_cycles,selected_weighted_cycles,weighted_cycles_saved,"
            "saved_ms,"
            "window_id,saved_percent_of_exchange,saved_percent_of_program\n"
            "neither storage metric grows,2,284442,273662,10780,0.007187,same-storage,3.79,1.08\n"
            "max row grows by at most 64 bytes,2,284442,211405,73037,0.048691,row+64,25.68,7.30\n"
            "max row grows by at most 256 bytes,2,284442,201307,83135,0.055423,row+256,29.23,8.31\n"
            "max row grows by at most 1024 bytes,2,284442,201307,83135,0.055423,row+1024,29.23,8.31\n");
  const ReportProvenance back = parse_provenance_json(testing::read_file(dir + "/provenance.json"), "p");
  EXPECT_EQ(back.capture_fnv1a64, "0x0123456789abcdef");
  EXPECT_EQ(back.machine_digest, "fedcba9876543210");
  EXPECT_EQ(back.program_cycles, 1000000u);
  EXPECT_EQ(provenance_json_text(back), testing::read_file(dir + "/provenance.json"));
}

TEST(ReportNextQuestion, UnknownProgramCyclesSayNotApplicable) {
  const std::string dir = testing::temp_dir("report-next-unknown");
  write_report(two_phases(), load_sweep_definition(kDefaultSweep), 1.5e9, dir);
  const std::string index = testing::read_file(dir + "/index.html");
  EXPECT_NE(index.find("<td>3.79</td><td>n/a</td>"), std::string::npos);
  EXPECT_NE(index.find("Whole program: unknown"), std::string::npos);
  EXPECT_NE(index.find("<dd>unknown, FNV-1a 64 unknown</dd>"), std::string::npos);
  EXPECT_NE(testing::read_file(dir + "/provenance.json").find("\"program_cycles\": null"), std::string::npos);
  EXPECT_NE(testing::read_file(dir + "/comparisons.csv").find(",same-storage,3.79,\n"), std::string::npos);
}

TEST(ReportNextQuestion, ATieKeepsTheReference) {
  // B256 ties the reference's horizon with less storage: not a saving, so B1024 stays.
  std::vector<ResultRow> rows(2);
  for (auto& r : rows) {
    r.phase = 4;
    r.label = "layer.mlp.up";
    r.execution_count = 3;
    r.payload_pass = true;
    r.horizon = 5000;
  }
  rows[0].config = "B256";
  rows[0].max_row_bytes = 100;
  rows[0].total_row_bytes = 1000;
  rows[1].config = "B1024";
  rows[1].max_row_bytes = 200;
  rows[1].total_row_bytes = 2000;
  const auto sweep = load_sweep_definition(kDefaultSweep);
  const auto c = compare_to_reference(rows, sweep.reference, comparison_windows(sweep), 1.5e9);
  for (const auto& s : c.by_phase) {
    EXPECT_EQ(s.selected_row, 1u) << c.windows[s.window].name;
    EXPECT_EQ(s.weighted_cycles_saved, 0);
  }
  // One cycle faster is a saving again.
  rows[0].horizon = 4999;
  const auto d = compare_to_reference(rows, sweep.reference, comparison_windows(sweep), 1.5e9);
  EXPECT_EQ(d.by_phase[0].selected_row, 0u);
  EXPECT_EQ(d.by_phase[0].weighted_cycles_saved, 3);
}

TEST(ReportNextQuestion, LongMergedLabelsGetAShortFormAndAFootnote) {
  std::vector<PlotPoint> points;
  for (const char* name : {"S1024", "S2048", "S4096", "B2048", "B4096"}) points.push_back({name, 10, 20});
  points.push_back({"S64", 30, 40});
  points.push_back({"S128", 30, 40});
  points.push_back({"remaining-combinedp", 50, 60});
  points.push_back({"latency", 70, 80});
  const PlotGroups g = group_points(points);
  ASSERT_EQ(g.groups.size(), 4u);
  EXPECT_EQ(g.groups[0].label, "S1024 +4 [1]");
  EXPECT_EQ(g.groups[1].label, "S64/S128");
  EXPECT_EQ(g.groups[2].label, "remaining-combinedp [2]");
  EXPECT_EQ(g.groups[3].label, "latency");
  ASSERT_EQ(g.footnotes.size(), 2u);
  EXPECT_EQ(g.footnotes[0].text, "S1024/S2048/S4096/B2048/B4096");
  EXPECT_EQ(g.footnotes[1].text, "remaining-combinedp");

  // On a phase page: the footnote list under the plot; the plot has the bound line.
  auto rows = two_phases();
  for (auto& r : rows) {
    if (r.phase == 18 && r.config != "B1024") {
      r.horizon = 17162;
      r.max_row_bytes = 1024;
    }
  }
  const std::string dir = testing::temp_dir("report-next-labels");
  write_report(rows, load_sweep_definition(kDefaultSweep), 1.5e9, dir);
  const std::string page = testing::read_file(dir + "/phase-18.html");
  EXPECT_NE(page.find("Labels shortened in the plot:</p>\n<ol "
                      "class=\"notes\">\n<li>latency/S64/S128/B256</li>"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("lower bound 9000"), std::string::npos);
  EXPECT_NE(testing::read_file(dir + "/phase-18.svg").find("stroke-dasharray"), std::string::npos);
}

TEST(ReportNextQuestion, ALongLabelIsCutInThePlotTitleAndWholeOnThePage) {
  auto rows = two_phases();
  std::string label;
  for (int i = 0; i < 40; ++i) label += "encoder.layer" + std::to_string(i) + ".";
  label += "\u00e9nd";  // a two-byte character at the end: the cut keeps whole characters
  for (auto& r : rows) r.label = label;
  const std::string dir = testing::temp_dir("report-next-long");
  write_report(rows, load_sweep_definition(kDefaultSweep), 1.5e9, dir);
  const std::string page = testing::read_file(dir + "/phase-17.html");
  EXPECT_NE(page.find("<h1>Phase 17: " + label + "</h1>"), std::string::npos);
  EXPECT_NE(page.find("encoder.<wbr>layer0.<wbr>"), std::string::npos);  // table cells break at dots
  EXPECT_GT(testing::read_file(dir + "/phase-17.svg").size(), 1000u);
}

}  // namespace
}  // namespace lockstep::replay
