// Comparison windows on tests/data/results/two_phases.csv, numbers worked out by hand.
//
// Reference B1024: phase 17 (27 executions) 9824 cycles, max row 1140, total 708796;
// phase 18 (once) 19194 cycles, max row 1280, total 1080596.
//   neither grows: 17 -> S64 9500 (B256 cuts max row to 1128 but grows total to 800444:
//                  rejected, as the seed report's old aggregate cap rejects it),
//                  18 -> S64 17162 (S128 ties exactly; S64 comes first).
//                  saved (9824-9500)*27 + (19194-17162) = 8748 + 2032 = 10780.
//   +64 bytes:     17 -> B256p 7374 (ties B256 and B512 on horizon, smaller max row),
//                  18 -> B256 12307 (max row 1288 <= 1280+64).
//                  saved 2450*27 + 6887 = 66150 + 6887 = 73037 (0.048691 ms at 1.5 GHz).
//   +256 bytes:    17 -> B128 7000 (max row 1300 <= 1396), 18 -> B256.
//                  saved 2824*27 + 6887 = 76248 + 6887 = 83135.
// S32 (5000 cycles) failed its payload check and is never selected.
#include <gtest/gtest.h>

#include "io/errors.hpp"
#include "report/comparison.hpp"
#include "support/test_support.hpp"

namespace lockstep::replay {
namespace {

std::vector<ResultRow> two_phases() {
  return read_results_csv(testing::source_path("tests/data/results/two_phases.csv"));
}

SweepDefinition frontier_sweep() { return load_sweep_definition(kDefaultSweep); }

TEST(Comparison, WindowsComeFromTheSweepFile) {
  const auto windows = comparison_windows(frontier_sweep());
  ASSERT_EQ(windows.size(), 4u);
  EXPECT_EQ(windows[0].name, "neither storage metric grows");
  EXPECT_FALSE(windows[0].max_row_growth_bytes.has_value());
  EXPECT_EQ(windows[1].name, "max row grows by at most 64 bytes");
  EXPECT_EQ(windows[2].max_row_growth_bytes, 256u);
  EXPECT_EQ(windows[3].max_row_growth_bytes, 1024u);
}

TEST(Comparison, HandWorkedNumbers) {
  const auto rows = two_phases();
  const auto sweep = frontier_sweep();
  const auto c = compare_to_reference(rows, sweep.reference, comparison_windows(sweep), 1.5e9);
  ASSERT_EQ(c.summary.size(), 4u);
  EXPECT_EQ(c.summary[0].phases, 2u);
  EXPECT_EQ(c.summary[0].reference_weighted_cycles, 284442u);
  EXPECT_EQ(c.summary[0].selected_weighted_cycles, 273662u);
  EXPECT_EQ(c.summary[0].weighted_cycles_saved, 10780);
  EXPECT_EQ(c.summary[1].weighted_cycles_saved, 73037);
  EXPECT_EQ(format_saved_ms(c.summary[1].saved_ms), "0.048691");
  EXPECT_EQ(c.summary[2].weighted_cycles_saved, 83135);
  EXPECT_EQ(c.summary[3].weighted_cycles_saved, 83135);

  auto selected = [&](size_t window, size_t phase_index) {
    return point_name(rows[c.by_phase[window * 2 + phase_index].selected_row]);
  };
  EXPECT_EQ(selected(0, 0), "S64");
  EXPECT_EQ(selected(0, 1), "S64");
  EXPECT_EQ(selected(1, 0), "B256p");
  EXPECT_EQ(selected(1, 1), "B256");
  EXPECT_EQ(selected(2, 0), "B128");
  EXPECT_EQ(c.by_phase[0].weighted_cycles_saved, 8748);
  EXPECT_EQ(c.by_phase[2].weighted_cycles_saved, 66150);

  EXPECT_EQ(comparisons_csv_text(c),
            testing::read_file(testing::source_path("tests/data/results/expected/comparisons.csv")));
  EXPECT_EQ(comparisons_by_phase_csv_text(rows, c),
            testing::read_file(testing::source_path("tests/data/results/expected/comparisons_by_phase.csv")));
}

TEST(Comparison, MaxRowShrinksButTotalGrows) {
  // Only the reference and a point that trades total row bytes for a smaller max row.
  std::vector<ResultRow> rows(2);
  for (auto& r : rows) {
    r.phase = 17;
    r.label = "layer.attn.scores";
    r.execution_count = 27;
    r.payload_pass = true;
  }
  rows[0].config = "B256";
  rows[0].horizon = 7374;
  rows[0].max_row_bytes = 1128;
  rows[0].total_row_bytes = 800444;
  rows[1].config = "B1024";
  rows[1].horizon = 9824;
  rows[1].max_row_bytes = 1140;
  rows[1].total_row_bytes = 708796;
  SweepDefinition sweep = frontier_sweep();
  const auto c = compare_to_reference(rows, sweep.reference, comparison_windows(sweep), 1.5e9);
  EXPECT_EQ(c.summary[0].weighted_cycles_saved, 0);  // total grows: not allowed
  EXPECT_EQ(c.by_phase[0].selected_row, 1u);
  EXPECT_EQ(c.summary[1].weighted_cycles_saved, (9824 - 7374) * 27);  // max row shrank
}

TEST(Comparison, OtherReference) {
  const auto rows = two_phases();
  const auto sweep = frontier_sweep();
  const auto c = compare_to_reference(rows, parse_point_ref("S64", "--reference"), comparison_windows(sweep), 1.5e9);
  // S64 is the fastest within its own storage in both phases; S128 only ties it.
  EXPECT_EQ(c.summary[0].weighted_cycles_saved, 0);
  // Phase 17 max row may grow to 1164: B256p (7374, max row 1100) wins.
  EXPECT_EQ(c.by_phase[2].weighted_cycles_saved, (9500 - 7374) * 27);
  const auto paired = parse_point_ref("B256p", "--reference");
  EXPECT_EQ(paired.config, "B256");
  EXPECT_EQ(paired.width, compiler::Width::Paired64);
  EXPECT_THROW(parse_point_ref("B25x", "--reference"), InputError);
}

TEST(Comparison, MissingReferenceNamesThePhase) {
  const auto rows = read_results_csv(testing::source_path("tests/data/results/missing_reference.csv"));
  const auto sweep = frontier_sweep();
  try {
    compare_to_reference(rows, sweep.reference, comparison_windows(sweep), 1.5e9);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "results.csv: phase 21 (layer.mlp.up): no row for the reference policy B1024 "
                 "word32");
  }
}

TEST(Comparison, WeightedCyclesThatOverflowAreRefusedNotWrapped) {
  auto rows = two_phases();
  const auto sweep = frontier_sweep();
  for (auto& row : rows) {
    if (row.phase == 17) row.execution_count = UINT32_MAX;
    row.horizon = UINT32_MAX - (row.horizon % 7);
  }
  // One phase: (2^32 - 1)^2 < 2^64 but above 2^63 - 1.
  try {
    compare_to_reference(rows, sweep.reference, comparison_windows(sweep), 1.5e9, "results.csv");
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("results.csv: phase 17: weighted cycles"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lockstep::replay
