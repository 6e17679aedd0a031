// One command line (docs/user-guide.md, "Command-line conventions"): the same option names
// for the same ideas, --json on every command that prints results, seeds and counts checked
// before they can wrap, embedded short names, and bad input named in one line with exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

nlohmann::json parse_json(const CommandResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(r.out);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << r.out;
  }
  EXPECT_TRUE(j.is_object()) << r.out;
  return j;
}

class CommandLine : public ::testing::Test {
 protected:
  // A 16-tile synthetic capture on ipu21-c600-t16 and its compiled package, made once.
  static void SetUpTestSuite() {
    dir_ = temp_dir("command-line");
    capture_ = dir_ + "/perm.yaml";
    package_ = dir_ + "/perm.capnp";
    const auto synth = run_lockstep({"capture", "synth", "--family", "permutation", "--tiles", "16", "--phases", "2",
                                     "--seed", "3", "--machine", "ipu21-c600-t16", "-o", capture_});
    ASSERT_EQ(synth.exit_code, 0) << synth.err;
    const auto compile = run_lockstep({"compile", capture_, "--config", "B256", "-o", package_});
    ASSERT_EQ(compile.exit_code, 0) << compile.err;
    sweep_file_ = dir_ + "/two.yaml";
    write_file(sweep_file_, "configurations: [latency, B256]\nreference: B256\nmax_row_growth_bytes: [64]\n");
  }
  static std::string dir_, capture_, package_, sweep_file_;
};
std::string CommandLine::dir_, CommandLine::capture_, CommandLine::package_, CommandLine::sweep_file_;

// --- seeds and counts -------------------------------------------------------------------

TEST_F(CommandLine, NegativeAndTooLargeSeedsAreRefusedNotWrapped) {
  const std::string out = dir_ + "/never.capnp";
  expect_bad_input(run_lockstep({"replay", capture_, "--phase", "0", "--config", "B256", "--seed", "-1"}), "--seed");
  expect_bad_input(run_lockstep({"compile", capture_, "-o", out, "--seed", "-1"}), "--seed");
  expect_bad_input(run_lockstep({"compile", capture_, "-o", out, "--seed", "18446744073709551616"}),
                   "larger than the maximum 18446744073709551615");
  expect_bad_input(run_lockstep({"sweep", capture_, "-o", dir_ + "/never", "--seed", "-1"}), "--seed");
  expect_bad_input(run_lockstep({"capture", "synth", "--family", "uniform", "--seed", "-1", "-o", out}), "--seed");
  expect_bad_input(run_lockstep({"build", "vit-tiny", "-o", out, "--weight-seed", "-1"}), "--weight-seed");
  expect_bad_input(run_lockstep({"build", "vit-tiny", "-o", out, "--input-seed", "1e3"}), "--input-seed");
  expect_bad_input(run_lockstep({"run", package_, "--max-cycles", "-1"}), "--max-cycles");
  expect_bad_input(run_lockstep({"compile", capture_, "-o", out, "--jobs", "-2"}), "--jobs");
  EXPECT_FALSE(std::filesystem::exists(out));
  // The largest seed is a seed.
  const auto r =
      run_lockstep({"replay", capture_, "--phase", "0", "--config", "B256", "--seed", "18446744073709551615"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("seed 18446744073709551615"), std::string::npos) << r.out;
}

TEST_F(CommandLine, SamplesZeroIsRefused) {
  expect_bad_input(run_lockstep({"replay", capture_, "--phase", "0", "--config", "B256", "--samples", "0"}),
                   "--samples");
  expect_bad_input(run_lockstep({"sweep", capture_, "-o", dir_ + "/never", "--samples", "0"}), "--samples");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/never"));
}

TEST_F(CommandLine, ReplayChecksEveryWordByDefaultAndSaysCycles) {
  const auto plain = run_lockstep({"replay", capture_, "--phase", "1", "--config", "B256"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("words: all "), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find(" cycles (compiled schedule: "), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("events"), std::string::npos) << plain.out;
  // --all is the old spelling of the default: the same output.
  EXPECT_EQ(run_lockstep({"replay", capture_, "--phase", "1", "--config", "B256", "--all"}).out, plain.out);
  const auto sampled = run_lockstep({"replay", capture_, "--phase", "1", "--config", "B256", "--samples", "3"});
  ASSERT_EQ(sampled.exit_code, 0) << sampled.err;
  EXPECT_NE(sampled.out.find("3 sampled per iteration"), std::string::npos) << sampled.out;
}

// --- aliases ----------------------------------------------------------------------------

TEST_F(CommandLine, CompileTokenSeedIsAnAliasOfSeed) {
  const std::string a = dir_ + "/seed7.capnp", b = dir_ + "/token-seed7.capnp";
  ASSERT_EQ(run_lockstep({"compile", capture_, "--seed", "7", "-o", a}).exit_code, 0);
  ASSERT_EQ(run_lockstep({"compile", capture_, "--token-seed", "7", "-o", b}).exit_code, 0);
  EXPECT_EQ(read_file(a), read_file(b));
  expect_bad_input(run_lockstep({"compile", capture_, "--seed", "7", "--token-seed", "7", "-o", dir_ + "/x.capnp"}),
                   "--token-seed");
  // Deprecated: not listed in --help.
  EXPECT_EQ(run_lockstep({"compile", "--help"}).out.find("--token-seed"), std::string::npos);
}

TEST_F(CommandLine, ConvertsTakeOutputOrThePositionalOut) {
  const std::string positional = dir_ + "/conv-pos.capnp", option = dir_ + "/conv-opt.capnp";
  ASSERT_EQ(run_lockstep({"capture", "convert", capture_, positional}).exit_code, 0);
  ASSERT_EQ(run_lockstep({"capture", "convert", capture_, "-o", option}).exit_code, 0);
  EXPECT_EQ(read_file(positional), read_file(option));
  expect_bad_input(run_lockstep({"capture", "convert", capture_}), "-o/--output is required");

  const std::string pkg_positional = dir_ + "/pkg-pos.yaml", pkg_option = dir_ + "/pkg-opt.yaml";
  ASSERT_EQ(run_lockstep({"package", "convert", package_, pkg_positional}).exit_code, 0);
  ASSERT_EQ(run_lockstep({"package", "convert", package_, "--output", pkg_option}).exit_code, 0);
  EXPECT_EQ(read_file(pkg_positional), read_file(pkg_option));
  expect_bad_input(run_lockstep({"package", "convert", package_}), "-o/--output is required");
  expect_bad_input(run_lockstep({"package", "convert", package_, "-o", package_}), package_);
}

TEST(CommandLineRun, OutputHasTheShortSpellingAndJobsKeepTheResult) {
  const std::string dir = temp_dir("command-line-run");
  const std::string package = dir + "/tiny.lkspkg";
  const auto build = run_lockstep({"build", "vit-tiny", "-o", package, "--jobs", "1"});
  ASSERT_EQ(build.exit_code, 0) << build.err;
  const auto every = run_lockstep({"build", "vit-tiny", "-o", dir + "/every.lkspkg"});
  ASSERT_EQ(every.exit_code, 0) << every.err;
  EXPECT_EQ(read_file(package), read_file(dir + "/every.lkspkg"));
  const auto a = run_lockstep({"run", package, "--output", dir + "/a.npy"});
  const auto b = run_lockstep({"run", package, "-o", dir + "/b.npy", "--jobs", "1"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(read_file(dir + "/a.npy"), read_file(dir + "/b.npy"));
}

// --- --json -----------------------------------------------------------------------------

TEST_F(CommandLine, JsonParsesForEveryCommandThatPrintsResults) {
  auto j = parse_json(run_lockstep({"replay", capture_, "--phase", "1", "--config", "B256", "--json"}));
  EXPECT_EQ(j["payload"], "pass");
  EXPECT_TRUE(j.contains("horizon_cycles"));

  j = parse_json(run_lockstep({"compile", capture_, "--config", "B256", "-o", dir_ + "/json.capnp", "--json"}));
  EXPECT_EQ(j["config"], "B256");
  EXPECT_EQ(j["phases"].size(), 2u);

  j = parse_json(run_lockstep({"capture", "stats", capture_, "--json"}));
  EXPECT_EQ(j["machine"], "ipu21-c600-t16");
  EXPECT_EQ(j["totals"]["phases"], 2);

  j = parse_json(run_lockstep({"capture", "validate", capture_, "--json"}));
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["machine"], "ipu21-c600-t16");

  j = parse_json(run_lockstep({"lower", "vit-tiny", "--json"}));
  EXPECT_EQ(j["workload"], "vit-tiny");
  EXPECT_EQ(j["totals"]["phases"], 18);
  EXPECT_FALSE(j.dump().find("seconds") != std::string::npos);

  const std::string sweep = dir_ + "/json-sweep";
  j = parse_json(run_lockstep(
      {"sweep", capture_, "--configs", sweep_file_, "--word32-only", "--no-timings", "-o", sweep, "--json"}));
  EXPECT_EQ(j["points"], 4);
  EXPECT_EQ(j["fail"], 0);

  j = parse_json(run_lockstep({"report", sweep, "--configs", sweep_file_, "--json"}));
  EXPECT_EQ(j["points"], 4);
  EXPECT_EQ(j["phases"], 2);

  j = parse_json(run_lockstep({"configs", "--json"}));
  EXPECT_FALSE(j["configs"].empty());
  j = parse_json(run_lockstep({"configs", "frontier", "--json"}));
  EXPECT_EQ(j["path"], "configs/sweeps/frontier.yaml");

  j = parse_json(run_lockstep({"machine", "ipu21-c600-t16", "--json"}));
  EXPECT_EQ(j["tiles"], 16);
  j = parse_json(run_lockstep({"inspect", package_, "--json"}));
  EXPECT_EQ(j["machine"]["name"], "ipu21-c600-t16");
  j = parse_json(run_lockstep({"run", package_, "--json"}));
  EXPECT_TRUE(j.contains("total_cycles"));

  // The same JSON twice: nothing in it varies between runs.
  EXPECT_EQ(run_lockstep({"replay", capture_, "--phase", "1", "--config", "B256", "--json"}).out,
            run_lockstep({"replay", capture_, "--phase", "1", "--config", "B256", "--json"}).out);
}

TEST(CommandLineJson, BuildAndGoldenCheck) {
  const std::string dir = temp_dir("command-line-json");
  auto j = parse_json(run_lockstep({"build", "vit-tiny", "-o", dir + "/tiny.lkspkg", "--json"}));
  EXPECT_EQ(j["workload"], "vit-tiny");
  EXPECT_EQ(j["phases"], 18);
  j = parse_json(run_lockstep({"golden", "check", "--golden-dir", source_path("golden"), "--json"}));
  EXPECT_EQ(j["match"], true);
  EXPECT_TRUE(j["differences"].empty());
}

// --- edges ------------------------------------------------------------------------------

TEST_F(CommandLine, APackageWhereACaptureIsExpectedIsNamedAsSuch) {
  const std::string yaml_package = source_path("tests/integration/packages/section9_a.yaml");
  for (const std::string& package : {package_, yaml_package}) {
    expect_bad_input(run_lockstep({"replay", package, "--phase", "1", "--config", "B256"}),
                     package + ": is a package, not a capture (use lockstep run");
    expect_bad_input(run_lockstep({"compile", package, "-o", dir_ + "/never.capnp"}), "is a package, not a capture");
    expect_bad_input(run_lockstep({"capture", "stats", package}), "is a package, not a capture");
    expect_bad_input(run_lockstep({"sweep", package, "-o", dir_ + "/never"}), "is a package, not a capture");
  }
  // And the other way round.
  expect_bad_input(run_lockstep({"run", capture_}), capture_ + ": is a capture, not a package");
  const std::string capnp_capture = dir_ + "/capture.capnp";
  ASSERT_EQ(run_lockstep({"capture", "convert", capture_, "-o", capnp_capture}).exit_code, 0);
  expect_bad_input(run_lockstep({"inspect", capnp_capture}), capnp_capture + ": is a capture, not a package");
  expect_bad_input(run_lockstep({"run", source_path("configs/workloads/vit-tiny.yaml")}),
                   "is a workload, not a package (use lockstep lower or lockstep build)");
}

TEST_F(CommandLine, CaptureValidateUsesTheCapturesMachine) {
  // 32 tiles of the full machine, relabelled as a 16-tile machine's capture: the tiles do
  // not exist there.
  const std::string full = dir_ + "/full32.yaml";
  ASSERT_EQ(run_lockstep({"capture", "synth", "--family", "uniform", "--tiles", "32", "--phases", "1", "--machine",
                          "ipu21-c600", "-o", full})
                .exit_code,
            0);
  std::string text = read_file(full);
  const auto at = text.find("machine: \"ipu21-c600\"");
  ASSERT_NE(at, std::string::npos) << text.substr(0, 200);
  text.replace(at, 21, "machine: \"ipu21-c600-t16\"");
  const std::string small = dir_ + "/relabelled.yaml";
  write_file(small, text);
  const auto r = run_lockstep({"capture", "validate", small});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("relabelled.yaml"), std::string::npos) << r.err;
  // --machine overrides it.
  EXPECT_EQ(run_lockstep({"capture", "validate", small, "--machine", "ipu21-c600"}).exit_code, 0);
  EXPECT_EQ(run_lockstep({"capture", "validate", full}).exit_code, 0);
}

TEST(CommandLineGolden, MissingGoldenFolderIsNamedBeforeAnyWork) {
  const std::string missing = temp_dir("command-line-golden") + "/no-golden-here";
  const auto start = std::chrono::steady_clock::now();
  expect_bad_input(run_lockstep({"golden", "check", "--golden-dir", missing}), missing + ": no such directory");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

TEST_F(CommandLine, ShortEmbeddedNamesForWorkloadsAndSweeps) {
  const auto by_name = run_lockstep({"lower", "vit-tiny", "--stats"});
  ASSERT_EQ(by_name.exit_code, 0) << by_name.err;
  const auto by_path = run_lockstep({"lower", "configs/workloads/vit-tiny.yaml", "--stats"});
  ASSERT_EQ(by_path.exit_code, 0) << by_path.err;
  const auto without_time = [](const std::string& text) {
    const auto at = text.find("lowering_seconds");
    return text.substr(0, at) + text.substr(text.find('\n', at));
  };
  EXPECT_EQ(without_time(by_name.out), without_time(by_path.out));
  expect_bad_input(run_lockstep({"lower", "vit-huge", "--stats"}), "vit-huge: no such workload file");
  expect_bad_input(run_lockstep({"build", "vit-huge", "-o", dir_ + "/never.lkspkg"}),
                   "embedded: siglip-so400m, vit-tiny");
  expect_bad_input(run_lockstep({"sweep", capture_, "--configs", "frontear", "-o", dir_ + "/never"}),
                   "frontear: no such sweep definition file");
  const auto sweep = run_lockstep({"sweep", capture_, "--configs", "frontier", "--phases", "0", "--word32-only",
                                   "--samples", "8", "-o", dir_ + "/named-sweep"});
  EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_EQ(run_lockstep({"report", dir_ + "/named-sweep", "--configs", "frontier"}).exit_code, 0);
  expect_bad_input(run_lockstep({"report", dir_ + "/named-sweep", "--configs", "nope/frontier.yaml"}),
                   "nope/frontier.yaml");
}

// --- one bad-input case per command that has no other --------------------------------

TEST_F(CommandLine, BadInputNamesTheFileOrOption) {
  const std::string missing = dir_ + "/missing.capnp";
  expect_bad_input(run_lockstep({"capture", "stats", missing}), missing);
  expect_bad_input(run_lockstep({"capture", "validate", missing}), missing);
  expect_bad_input(run_lockstep({"capture", "validate", capture_, "--machine", "nope"}), "nope");
  expect_bad_input(run_lockstep({"capture", "convert", missing, "-o", dir_ + "/x.yaml"}), missing);
  expect_bad_input(run_lockstep({"capture", "synth", "--family", "spiral", "-o", dir_ + "/x.yaml"}), "spiral");
  expect_bad_input(run_lockstep({"inspect", missing}), missing);
  expect_bad_input(run_lockstep({"package", "convert", missing, "-o", dir_ + "/x.yaml"}), missing);
  expect_bad_input(run_lockstep({"machine", "ipu99"}), "ipu99");
  expect_bad_input(run_lockstep({"lower", "vit-tiny"}), "nothing to do");
  expect_bad_input(run_lockstep({"report", dir_ + "/no-sweep"}), "no-sweep/results.csv");
  expect_bad_input(run_lockstep({"replay", capture_, "--phase", "9", "--config", "B256"}), "phase 9");
  expect_bad_input(run_lockstep({"replay", capture_, "--phase", "0", "--config", "B256", "--jobs", "x"}), "--jobs");
  expect_bad_input(run_lockstep({"run", missing}), missing);
  expect_bad_input(run_lockstep({"run", package_, "--jobs", "-1"}), "--jobs");
  expect_bad_input(run_lockstep({"build", "vit-tiny", "-o", dir_ + "/b.lkspkg", "--jobs", "-1"}), "--jobs");
  expect_bad_input(run_lockstep({"golden", "check", "--jobs", "-1"}), "--jobs");
  expect_bad_input(run_lockstep({"sweep", missing, "-o", dir_ + "/never"}), missing);
  expect_bad_input(run_lockstep({"configs", "nope"}), "nope");
  expect_bad_input(run_lockstep({"disasm", "--words", "zz"}), "zz");
  expect_bad_input(run_lockstep({"compile", capture_, "-o", capture_}), capture_);
  expect_bad_input(run_lockstep({"golden", "bless", "--golden-dir", capture_}), "is not a folder");  // was exit 3
}

// A limit must be a finite number of zero or more: "nan" once passed as no bound (run) or as a
// failure of every row (crosscheck), and -1 printed DBL_MAX's 309 digits.
TEST_F(CommandLine, LimitsRefuseNanInfAndNegativeInOneShortLine) {
  for (const std::string bad : {"nan", "inf", "-1", "1e999", "3x"}) {
    const auto r = run_lockstep({"run", package_, "--timeout", bad});
    expect_bad_input(r, "'" + bad + "' is not a finite number of zero or more");
    EXPECT_LT(r.err.size(), 200u) << r.err;
  }
  expect_bad_input(run_lockstep({"device", "simulate", package_, "-o", dir_ + "/never", "--timeout", "nan"}),
                   "not a finite number");
  expect_bad_input(run_lockstep({"crosscheck", dir_ + "/a", dir_ + "/b", "--max-phase-error", "nan"}),
                   "not a finite number");
  EXPECT_EQ(run_lockstep({"run", package_, "--timeout", "0.5e3"}).exit_code, 0);
}

// `lockstep --help` lists one line per command (the rest is COMMAND --help's); `run` prints a
// summary, and the line per phase execution only with --phases.
TEST_F(CommandLine, HelpListsOneLinePerCommandAndRunPrintsASummary) {
  const auto help = run_lockstep({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_LT(std::count(help.out.begin(), help.out.end(), '\n'), 60) << help.out;
  EXPECT_NE(help.out.find("Run a package (Cap'n Proto or YAML) on the SystemC model of the machine it names."),
            std::string::npos)
      << help.out;
  EXPECT_EQ(help.out.find("--keep-going"), std::string::npos) << help.out;
  const auto run_help = run_lockstep({"run", "--help"});
  EXPECT_NE(run_help.out.find("--keep-going collects all"), std::string::npos) << run_help.out;

  const auto summary = run_lockstep({"run", package_});
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("phase executions 2 (--phases lists them)"), std::string::npos) << summary.out;
  EXPECT_EQ(summary.out.find("release_cycle"), std::string::npos) << summary.out;
  const auto phases = run_lockstep({"run", package_, "--phases"});
  EXPECT_NE(phases.out.find("phase  iteration  release_cycle  horizon\n0  0  "), std::string::npos) << phases.out;
}

TEST_F(CommandLine, LogLevelBeforeOrAfterTheSubcommand) {
  const auto before = run_lockstep({"--log-level", "info", "capture", "stats", capture_});
  const auto after = run_lockstep({"capture", "stats", capture_, "--log-level", "info"});
  EXPECT_EQ(before.exit_code, 0) << before.err;
  EXPECT_EQ(before.out, after.out);
  expect_bad_input(run_lockstep({"--log-level", "loud", "capture", "stats", capture_}), "--log-level");
}

}  // namespace
}  // namespace lockstep::testing
