// A small sweep end to end: its report records where it came from (deterministically),
// and `compile --selection DIR --window ID` builds and runs what a window selects, printing
// the measured cycles beside the report's estimate; bad input is one line and exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "formats/package.hpp"
#include "support/test_support.hpp"

namespace lockstep::integration {
namespace {

using testing::files_of;

size_t lines_of(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n' ? 1 : 0;
  return n;
}

class SweepSelection : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::temp_dir("sweep-selection"));
    const std::string& d = *dir_;
    ASSERT_EQ(testing::run_lockstep({"capture", "synth", "--family", "transformer", "--tiles", "16", "--phases", "3",
                                     "--seed", "4", "-o", d + "/capture.capnp"})
                  .exit_code,
              0);
    testing::write_file(d + "/sweep.yaml",
                        "configurations: [latency, S64, B256, B1024]\nreference: B1024\n"
                        "max_row_growth_bytes: [64]\n");
    for (const char* name : {"a", "b"}) {
      const auto sweep = testing::run_lockstep({"sweep", d + "/capture.capnp", "--configs", d + "/sweep.yaml",
                                                "--no-timings", "--jobs", "2", "-o", d + "/" + name});
      ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string* dir_;
  const std::string& dir() const { return *dir_; }
};
std::string* SweepSelection::dir_ = nullptr;

TEST_F(SweepSelection, ProvenanceIsRecordedAndDeterministic) {
  const auto a = files_of(dir() + "/a");
  const auto b = files_of(dir() + "/b");
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, bytes] : a) EXPECT_TRUE(bytes == b.at(name)) << name << " differs between two sweeps";
  const std::string provenance = a.at("provenance.json");
  EXPECT_NE(provenance.find("\"format\": \"lockstep-report-provenance\""), std::string::npos) << provenance;
  EXPECT_NE(provenance.find("\"file\": \"capture.capnp\""), std::string::npos) << provenance;
  EXPECT_NE(provenance.find("\"fnv1a64\": \"0x"), std::string::npos) << provenance;
  EXPECT_NE(provenance.find("\"digest\": \""), std::string::npos) << provenance;
  EXPECT_NE(provenance.find("\"sweep_lockstep\": \""), std::string::npos) << provenance;
  EXPECT_NE(provenance.find("(commit "), std::string::npos) << provenance;
  EXPECT_EQ(provenance.find(dir()), std::string::npos) << "no directories in provenance.json";
  const std::string& index = a.at("index.html");
  EXPECT_NE(index.find("Where this report came from"), std::string::npos);
  EXPECT_NE(index.find("capture.capnp, FNV-1a 64 0x"), std::string::npos);

  // `report` regenerates the same bytes (same build), and keeps the sweep's provenance.
  ASSERT_EQ(testing::run_lockstep({"report", dir() + "/b", "--configs", dir() + "/sweep.yaml"}).exit_code, 0);
  for (const auto& [name, bytes] : files_of(dir() + "/b")) {
    EXPECT_TRUE(bytes == a.at(name)) << name << " differs after lockstep report";
  }
  // The whole program's cycles, once given, turn into a percentage and are kept.
  const std::string c = testing::temp_dir("sweep-selection-c");
  std::filesystem::copy(dir() + "/a", c, std::filesystem::copy_options::recursive);
  ASSERT_EQ(
      testing::run_lockstep({"report", c, "--configs", dir() + "/sweep.yaml", "--program-cycles", "1000000"}).exit_code,
      0);
  EXPECT_NE(testing::read_file(c + "/provenance.json").find("\"program_cycles\": 1000000"), std::string::npos);
  EXPECT_NE(testing::read_file(c + "/index.html").find("Whole program: 1000000 cycles"), std::string::npos);
}

TEST_F(SweepSelection, CompileSelectionBuildsRunsAndPrintsMeasuredBesideEstimate) {
  const std::string package = dir() + "/selected.pkg";
  const auto result = testing::run_lockstep(
      {"compile", dir() + "/capture.capnp", "--selection", dir() + "/a", "--window", "row+64", "-o", package});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("selection: window row+64 (max row grows by at most 64 bytes), 3 phases: 0 "),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("estimate:  "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(" weighted exchange cycles; whole program "), std::string::npos) << result.out;
  // The package's simulated horizons x executions reproduce the report's estimate.
  const size_t estimate = result.out.find("estimate:  ");
  const size_t measured = result.out.find("measured:  ");
  ASSERT_NE(measured, std::string::npos);
  const std::string estimated_cycles =
      result.out.substr(estimate + 11, result.out.find(' ', estimate + 11) - estimate - 11);
  const std::string measured_cycles =
      result.out.substr(measured + 11, result.out.find(' ', measured + 11) - measured - 11);
  EXPECT_EQ(measured_cycles, estimated_cycles) << result.out;
  EXPECT_NE(result.out.find("table peak "), std::string::npos) << result.out;
  EXPECT_TRUE(std::filesystem::is_regular_file(package));

  // The package holds each phase's selected configuration: compile's table names them.
  const std::string by_phase = testing::read_file(dir() + "/a/comparisons_by_phase.csv");
  EXPECT_NE(by_phase.find("max row grows by at most 64 bytes,"), std::string::npos);

  // The full window name works too, and --json carries both figures.
  const auto json = testing::run_lockstep({"compile", dir() + "/capture.capnp", "--selection", dir() + "/a", "--window",
                                           "neither storage metric grows", "-o", dir() + "/selected2.pkg", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"window\": \"same-storage\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"measured_total_cycles\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"estimated_exchange_cycles\""), std::string::npos) << json.out;
}

TEST_F(SweepSelection, CompileSelectionBadInputIsOneLineExitTwoAndNoPackage) {
  const std::string capture = dir() + "/capture.capnp";
  const std::string package = dir() + "/never.pkg";
  auto expect_bad = [&](const std::vector<std::string>& args, const std::string& message) {
    const auto r = testing::run_lockstep(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(lines_of(r.err), 1u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(package));
  };
  expect_bad({"compile", capture, "--selection", dir() + "/missing", "--window", "row+64", "-o", package},
             "no such report folder");
  expect_bad({"compile", capture, "--selection", dir() + "/a", "--window", "row+9", "-o", package},
             "--window row+9: not a window of");
  expect_bad({"compile", capture, "--selection", dir() + "/a", "--window", "row+9", "-o", package},
             "(same-storage, row+64)");
  expect_bad({"compile", capture, "--selection", dir() + "/a", "-o", package},
             "give --window, one of same-storage, row+64");

  const std::string other = dir() + "/other.capnp";
  ASSERT_EQ(testing::run_lockstep({"capture", "synth", "--family", "transformer", "--tiles", "16", "--phases", "3",
                                   "--seed", "5", "-o", other})
                .exit_code,
            0);
  expect_bad({"compile", other, "--selection", dir() + "/a", "--window", "row+64", "-o", package},
             "the report measured capture capture.capnp");

  const std::string bare = testing::temp_dir("sweep-selection-bare");
  for (const char* name : {"results.csv", "comparisons.csv", "comparisons_by_phase.csv"}) {
    testing::write_file(bare + "/" + name, testing::read_file(dir() + "/a/" + name));
  }
  expect_bad({"compile", capture, "--selection", bare, "--window", "row+64", "-o", package}, "no provenance.json");
  testing::write_file(bare + "/provenance.json", "{\"format\": \"something-else\"}\n");
  expect_bad({"compile", capture, "--selection", bare, "--window", "row+64", "-o", package},
             "provenance.json: not a report provenance file");
  // `report` refuses it the same way, and writes nothing.
  const auto report = testing::run_lockstep({"report", bare});
  EXPECT_EQ(report.exit_code, 2);
  EXPECT_EQ(lines_of(report.err), 1u) << report.err;
  EXPECT_FALSE(std::filesystem::exists(bare + "/index.html"));
  expect_bad({"compile", capture, "--selection", dir() + "/a", "--window", "row+64", "--config", "S64", "-o", package},
             "excludes");
}

}  // namespace
}  // namespace lockstep::integration
