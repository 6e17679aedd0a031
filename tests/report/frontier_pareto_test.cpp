// The Pareto frontier of tests/data/results/two_phases.csv, worked out by hand.
#include <gtest/gtest.h>

#include "report/frontier.hpp"
#include "support/test_support.hpp"

namespace lockstep::replay {
namespace {

std::vector<std::string> names(const std::vector<ResultRow>& rows, const std::vector<size_t>& indices) {
  std::vector<std::string> out;
  for (size_t i : indices) out.push_back(std::to_string(rows[i].phase) + ":" + point_name(rows[i]));
  return out;
}

TEST(Frontier, HandWorkedExample) {
  const auto rows = read_results_csv(testing::source_path("tests/data/results/two_phases.csv"));
  const auto frontier = frontier_points(rows);
  // Phase 17: S32 would dominate everything but failed its payload check; B256p (same
  // horizon and total as B256, smaller max row) knocks out B256 and its copy B512; S64
  // dominates the reference B1024. Phase 18: S128 ties S64 exactly and S64 comes first.
  EXPECT_EQ(names(rows, frontier), (std::vector<std::string>{"17:latency", "17:S64", "17:B128", "17:B256p",
                                                             "18:latency", "18:S64", "18:B256"}));
  EXPECT_EQ(frontier_csv_text(rows, frontier),
            testing::read_file(testing::source_path("tests/data/results/expected/frontier.csv")));
}

TEST(Frontier, DominanceNeedsOneStrictImprovement) {
  ResultRow a, b;
  a.horizon = b.horizon = 10;
  a.max_row_bytes = b.max_row_bytes = 100;
  a.total_row_bytes = b.total_row_bytes = 1000;
  EXPECT_FALSE(dominates(a, b));
  EXPECT_FALSE(dominates(b, a));
  a.total_row_bytes = 999;
  EXPECT_TRUE(dominates(a, b));
  EXPECT_FALSE(dominates(b, a));
  a.horizon = 11;  // now each is better in one metric
  EXPECT_FALSE(dominates(a, b));
  EXPECT_FALSE(dominates(b, a));
}

TEST(Frontier, ExactTiesKeepTheFirstAndFailuresNeverQualify) {
  std::vector<ResultRow> rows(4);
  for (auto& r : rows) {
    r.phase = 3;
    r.label = "x";
    r.payload_pass = true;
    r.horizon = 50;
    r.max_row_bytes = 8;
    r.total_row_bytes = 64;
  }
  rows[0].config = "S16";
  rows[0].payload_pass = false;
  rows[0].horizon = 1;
  rows[1].config = "S32";
  rows[2].config = "S64";
  rows[3].config = "S128";
  EXPECT_EQ(frontier_points(rows), (std::vector<size_t>{1}));
}

TEST(Frontier, PhasesAreIndependent) {
  std::vector<ResultRow> rows(2);
  rows[0].phase = 1;
  rows[0].horizon = 100;
  rows[1].phase = 2;
  rows[1].horizon = 1;
  for (auto& r : rows) r.payload_pass = true;
  EXPECT_EQ(frontier_points(rows), (std::vector<size_t>{0, 1}));
}

}  // namespace
}  // namespace lockstep::replay
