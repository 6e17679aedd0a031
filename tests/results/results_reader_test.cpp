// results.csv: round trip, and one clear "file:LINE: column: what" error per kind of damage.
#include <gtest/gtest.h>

#include "io/errors.hpp"
#include "results/results.hpp"
#include "support/test_support.hpp"

namespace lockstep::replay {
namespace {

const std::string kHeader = std::string(kResultsHeader) + "\n";
const std::string kGood =
    "17,layer.attn.scores,27,B1024,word32,9824,4000,1140,708796,37300,39300,12,48,84.000,27.000,pass\n";

std::string error_of(const std::string& text) {
  try {
    parse_results_csv(text, "results.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ResultsReader, ReadsEveryColumn) {
  const auto rows =
      parse_results_csv(kHeader +
                            "18,layer.attn.softmax,1,B256,paired64,12307,9000,1288,1128420,37001,39002,3,4,"
                            "53.125,23.500,fail\n",
                        "results.csv");
  ASSERT_EQ(rows.size(), 1u);
  const ResultRow& r = rows[0];
  EXPECT_EQ(r.phase, 18u);
  EXPECT_EQ(r.label, "layer.attn.softmax");
  EXPECT_EQ(r.execution_count, 1u);
  EXPECT_EQ(r.config, "B256");
  EXPECT_EQ(r.width, compiler::Width::Paired64);
  EXPECT_EQ(point_name(r), "B256p");
  EXPECT_EQ(r.horizon, 12307u);
  EXPECT_EQ(r.lower_bound, 9000u);
  EXPECT_EQ(r.max_row_bytes, 1288u);
  EXPECT_EQ(r.total_row_bytes, 1128420u);
  EXPECT_EQ(r.table_bytes_shared, 37001u);
  EXPECT_EQ(r.table_bytes_unshared, 39002u);
  EXPECT_EQ(r.patch_calls, 3u);
  EXPECT_EQ(r.patch_words, 4u);
  EXPECT_DOUBLE_EQ(r.compile_ms, 53.125);
  EXPECT_DOUBLE_EQ(r.simulate_ms, 23.5);
  EXPECT_FALSE(r.payload_pass);
}

TEST(ResultsReader, WriterRoundTripsTheHandWrittenFile) {
  const std::string path = testing::source_path("tests/data/results/two_phases.csv");
  const std::string text = testing::read_file(path);
  const auto rows = read_results_csv(path);
  EXPECT_EQ(rows.size(), 13u);
  EXPECT_EQ(results_csv_text(rows), text);
  const std::string dir = testing::temp_dir("results-writer");
  write_results_csv(rows, dir + "/results.csv");
  EXPECT_EQ(testing::read_file(dir + "/results.csv"), text);
}

TEST(ResultsReader, AcceptsCrlfAndNoFinalNewline) {
  std::string text = kHeader + kGood;
  text.pop_back();
  EXPECT_EQ(parse_results_csv(text, "r.csv").size(), 1u);
  EXPECT_EQ(parse_results_csv(std::string(kResultsHeader) + "\r\n" + kGood, "r.csv").size(), 1u);
  EXPECT_TRUE(parse_results_csv(kHeader, "r.csv").empty());
}

TEST(ResultsReader, ErrorsNameTheLineAndColumn) {
  EXPECT_EQ(error_of(""), "results.csv:1: header: empty file, expected '" + std::string(kResultsHeader) + "'");
  EXPECT_EQ(error_of("phase,label\n" + kGood).rfind("results.csv:1: header: expected", 0), 0u);
  EXPECT_EQ(
      error_of(kHeader + kGood + "17,layer.attn.scores,27,S64,word32,98x4,4000,1140,708796,1,1,1,1,0.000,0.000,pass\n"),
      "results.csv:3: horizon: expected an unsigned integer, got '98x4'");
  EXPECT_EQ(error_of(kHeader + "17,a,1,S64,word32,1,1,1,1,1,1,1,1,0.000,0.000\n"),
            "results.csv:2: payload: missing: the row has 15 of 16 columns");
  EXPECT_EQ(error_of(kHeader + "17,a,b,1,S64,word32,1,1,1,1,1,1,1,1,0.000,0.000,pass\n"),
            "results.csv:2: row: 17 columns, expected 16 (a field holding a comma must be quoted)");
  EXPECT_EQ(error_of(kHeader + "17,a,1,S64,word64,1,1,1,1,1,1,1,1,0.000,0.000,pass\n"),
            "results.csv:2: width: expected word32 or paired64, got 'word64'");
  EXPECT_EQ(error_of(kHeader + "17,a,1,S64,word32,1,1,1,1,1,1,1,1,0.000,0.000,ok\n"),
            "results.csv:2: payload: expected pass or fail, got 'ok'");
  EXPECT_EQ(error_of(kHeader + "17,a,1,S064,word32,1,1,1,1,1,1,1,1,0.000,0.000,pass\n")
                .rfind("results.csv:2: config: 'S064' is not a configuration name", 0),
            0u);
  EXPECT_EQ(error_of(kHeader + "17,a,1,S64,word32,1,1,1,1,1,1,1,1,1.2.3,0.000,pass\n"),
            "results.csv:2: compile_ms: expected milliseconds like 12.345, got '1.2.3'");
  EXPECT_EQ(error_of(kHeader + "17,,1,S64,word32,1,1,1,1,1,1,1,1,0.000,0.000,pass\n"),
            "results.csv:2: label: empty label");
  EXPECT_EQ(error_of(kHeader + "4294967296,a,1,S64,word32,1,1,1,1,1,1,1,1,0.000,0.000,pass\n"),
            "results.csv:2: phase: '4294967296' is out of range (at most 4294967295)");
  EXPECT_EQ(error_of(kHeader + kGood + "\n" + kGood), "results.csv:3: row: empty line");
}

TEST(ResultsReader, ErrorsOnInconsistentRows) {
  EXPECT_EQ(error_of(kHeader + kGood + "16,x,1,S64,word32,1,1,1,1,1,1,1,1,0.000,0.000,pass\n"),
            "results.csv:3: phase: phase 16 comes after phase 17: rows must be sorted by phase");
  EXPECT_EQ(error_of(kHeader + kGood + "17,other,27,S64,word32,1,1,1,1,1,1,1,1,0.000,0.000,pass\n"),
            "results.csv:3: label: 'other' differs from 'layer.attn.scores' on line 2 for phase 17");
  EXPECT_EQ(error_of(kHeader + kGood + "17,layer.attn.scores,1,S64,word32,1,1,1,1,1,1,1,1,0.000,0.000,pass\n"),
            "results.csv:3: execution_count: 1 differs from 27 on line 2 for phase 17");
  EXPECT_EQ(error_of(kHeader + kGood + kGood),
            "results.csv:3: config: B1024 word32 appears twice for phase 17 (first on line 2)");
}

TEST(ResultsReader, MillisecondsPastAboutThirtyYearsAreRefused) {
  std::string row = kGood;
  row.replace(row.find("84.000"), 6, "3" + std::string(120, '0') + ".000");
  EXPECT_NE(error_of(kHeader + row).find("results.csv:2: compile_ms: '3000"), std::string::npos)
      << error_of(kHeader + row);
}

TEST(ResultsReader, LabelsWithCommasQuotesAndNewlinesRoundTrip) {
  std::vector<ResultRow> rows = parse_results_csv(kHeader + kGood, "results.csv");
  for (const std::string label : {"a,b", "say \"hi\"", "two\nlines", "crlf\r\nend", ",\",\n"}) {
    rows[0].label = label;
    const std::string text = results_csv_text(rows);
    const auto back = parse_results_csv(text, "results.csv");
    ASSERT_EQ(back.size(), 1u) << text;
    EXPECT_EQ(back[0].label, label) << text;
    EXPECT_EQ(results_csv_text(back), text);
  }
  EXPECT_EQ(error_of(kHeader + "17,\"open,27\n"), "results.csv:2: csv: a quoted field never closes");
  EXPECT_EQ(error_of(kHeader + "17,a\"b,27\n"),
            "results.csv:2: csv: a double quote inside an unquoted field (quote the whole field)");
}

TEST(ResultsReader, ConfigNames) {
  for (const char* good : {"latency", "automatic", "remaining-combined", "S16", "B4096", "S1"}) {
    EXPECT_TRUE(is_config_name(good)) << good;
  }
  for (const char* bad : {"", "S", "B0", "S016", "s64", "B64p", "S64+paired", "Latency", "X12"}) {
    EXPECT_FALSE(is_config_name(bad)) << bad;
  }
}

}  // namespace
}  // namespace lockstep::replay

#include "support/corpus.hpp"

namespace lockstep::replay {
namespace {

// The results.csv fuzzer's corpus (tests/fuzz/corpus/results_csv) as an ordinary test.
TEST(ResultsCsvCorpus, EveryFileReadsOrFailsAsBadInput) {
  const auto outcome =
      testing::run_corpus("results_csv", [](const std::string& path) { (void)read_results_csv(path); });
  testing::expect_corpus_reads_and_refuses(outcome);
}

}  // namespace
}  // namespace lockstep::replay
