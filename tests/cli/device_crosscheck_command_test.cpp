// `device simulate` and `crosscheck` as a user runs them: the simulator as a runner leaves
// a whole result folder; a folder checked against itself is 0% off; a flipped payload byte,
// a total off by construction and a bound give exit 1 with the reason; bad input gives one
// line, exit 2 and nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/csv.hpp"
#include "profile/profile.hpp"
#include "support/test_support.hpp"

namespace lockstep {
namespace {

using testing::expect_bad_input;
using testing::expect_nothing_written;
using testing::run_lockstep;
namespace fs = std::filesystem;

using testing::integration_package;

// p2p_3w with an output binding (the 12 bytes tile 1 receives) and an unused input.
std::string bound_package(const std::string& dir) {
  const std::string path = dir + "/bound.yaml";
  testing::write_file(path, testing::read_file(integration_package("p2p_3w")) +
                                "bindings:\n"
                                "  - {name: received, kind: output, slices: [{tile: 1, address: 0x70000, bytes: 12}]}\n"
                                "  - {name: source, kind: input, slices: [{tile: 0, address: 0x60000, bytes: 12}]}\n");
  return path;
}

std::vector<arch::CsvRecord> csv(const std::string& path) { return arch::parse_csv(testing::read_file(path), path); }

TEST(DeviceSimulate, WritesTheResultFolderAndChecksAgainstItself) {
  const std::string dir = testing::temp_dir("device_simulate");
  const std::string pkg = bound_package(dir);
  const auto sim = run_lockstep({"device", "simulate", pkg, "-o", dir + "/sim"});
  ASSERT_EQ(sim.exit_code, 0) << sim.out << sim.err;
  const auto result = nlohmann::json::parse(testing::read_file(dir + "/sim/result.json"));
  EXPECT_EQ(result["format"], "lockstep-device-result");
  EXPECT_EQ(result["runner"], "lockstep-simulator");
  EXPECT_EQ(result["status"], "ok");
  EXPECT_EQ(result["package"], "bound.yaml");
  EXPECT_EQ(result["machine"], "ipu21-c600-t16");
  EXPECT_EQ(result["outputs"][0]["file"], "outputs/received.bin");
  EXPECT_EQ(testing::read_file(dir + "/sim/outputs/received.bin"),
            std::string("\x00\x80\x01\x40\x01\x80\x01\x40\x02\x80\x01\x40", 12));
  const arch::Profile profile = arch::read_profile(dir + "/sim/profile.lsprof");
  EXPECT_EQ(profile.total_cycles, result["total_cycles"].get<uint64_t>());
  EXPECT_EQ(profile.source, "bound.yaml");
  // The same cycles as `run`.
  const auto run = run_lockstep({"run", pkg, "--json"});
  EXPECT_EQ(nlohmann::json::parse(run.out)["total_cycles"], result["total_cycles"]);
  expect_nothing_written(dir, "sim.tmp");  // no temporary left beside it

  const auto check = run_lockstep({"crosscheck", "--simulated", dir + "/sim", "--device", dir + "/sim", "-o",
                                   dir + "/report", "--max-total-error", "0", "--max-phase-error", "0"});
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("outputs: 1 of 1 equal"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("MAPE 0%"), std::string::npos) << check.out;
  const auto rows = csv(dir + "/report/crosscheck.csv");
  ASSERT_GE(rows.size(), 3u);  // header, phase 1, ..., total
  EXPECT_EQ(rows[1].fields[0], "phase");
  EXPECT_EQ(rows[1].fields[1], "phase 1");
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rows[i].fields[8], "0.0000") << i;
  for (const char* file : {"outputs.csv", "scatter.svg", "scatter.png", "index.html"}) {
    EXPECT_TRUE(fs::exists(dir + "/report/" + file)) << file;
  }
  // An existing, non-empty folder is refused before the run.
  expect_bad_input(run_lockstep({"device", "simulate", pkg, "-o", dir + "/sim"}), "not empty");
  expect_bad_input(run_lockstep({"device", "simulate", pkg, "-o", dir + "/x", "--input", "nothing=" + pkg}),
                   "no input binding 'nothing'");
  expect_nothing_written(dir, "x");
}

TEST(DeviceSimulate, RepeatWithInvocations) {
  const std::string dir = testing::temp_dir("device_simulate_repeat");
  const auto sim =
      run_lockstep({"device", "simulate", integration_package("repeat27"), "-o", dir + "/r", "--invocations", "2"});
  ASSERT_EQ(sim.exit_code, 0) << sim.out << sim.err;
  const auto result = nlohmann::json::parse(testing::read_file(dir + "/r/result.json"));
  EXPECT_EQ(result["invocations"], 2);
  const auto run = run_lockstep({"run", integration_package("repeat27"), "--json", "--invocations", "2"});
  EXPECT_EQ(nlohmann::json::parse(run.out)["total_cycles"], result["total_cycles"]);
  const auto check = run_lockstep({"crosscheck", "--simulated", dir + "/r", "--device", dir + "/r", "-o", dir + "/c"});
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  const auto rows = csv(dir + "/c/crosscheck.csv");
  size_t phases = 0, epochs_seen = 0;
  for (const auto& r : rows) {
    if (r.fields[0] != "phase") continue;
    ++phases;
    epochs_seen = std::max<size_t>(epochs_seen, std::stoul(r.fields[4]) + 1);
    EXPECT_EQ(r.fields[8], "0.0000");
  }
  EXPECT_EQ(epochs_seen, 27u);  // every Repeat iteration is a row of its own
  EXPECT_GE(phases, 54u);       // ... in each of the two invocations
}

// An image `device export` wrote has no host calls: its outputs are read from tile memory, and
// it runs to the package's own outputs and cycles.
TEST(DeviceSimulate, AnExportedImageSimulatesToThePackagesOutputsAndCycles) {
  const std::string dir = testing::temp_dir("device_simulate_image");
  const std::string package = bound_package(dir);
  ASSERT_EQ(run_lockstep({"device", "export", package, "--host-io", "none", "-o", dir + "/p.ipuexe"}).exit_code, 0);
  const auto image =
      run_lockstep({"device", "simulate", dir + "/p.ipuexe", "--machine", "ipu21-c600-t16", "-o", dir + "/image"});
  ASSERT_EQ(image.exit_code, 0) << image.err;
  EXPECT_NE(image.out.find("ok, 145 cycles (0 in host phases), 0 host calls, 1 outputs"), std::string::npos)
      << image.out;
  ASSERT_EQ(run_lockstep({"device", "simulate", package, "-o", dir + "/package"}).exit_code, 0);
  EXPECT_EQ(testing::read_file(dir + "/image/outputs/received.bin"),
            testing::read_file(dir + "/package/outputs/received.bin"));
  const auto cycles = [&](const std::string& folder) {
    return nlohmann::json::parse(testing::read_file(dir + "/" + folder + "/result.json"))["total_cycles"];
  };
  EXPECT_EQ(cycles("image"), cycles("package"));
}

// By default the image brings its inputs through the stack's `run` call: given the call's
// file, it gives the package's outputs, its cycles those of the package plus the host phases
// and the copies from the staging buffer (the critical path's `host` share) and what tiles
// wait for them.
TEST(DeviceSimulate, AnExportedImageTakesItsInputsThroughTheRunCall) {
  const std::string dir = testing::temp_dir("device_simulate_host_calls");
  const std::string package = bound_package(dir);
  testing::write_file(dir + "/in.bin", std::string("\x00\x80\x01\x40\x01\x80\x01\x40\x02\x80\x01\x40", 12));
  ASSERT_EQ(run_lockstep({"device", "export", package, "-o", dir + "/p.ipuexe"}).exit_code, 0);
  const auto missing =
      run_lockstep({"device", "simulate", dir + "/p.ipuexe", "--machine", "ipu21-c600-t16", "-o", dir + "/none"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("host call run: expects 12 input bytes, got 0"), std::string::npos) << missing.err;
  const auto image = run_lockstep({"device", "simulate", dir + "/p.ipuexe", "--machine", "ipu21-c600-t16", "--input",
                                   "run=" + dir + "/in.bin", "-o", dir + "/image"});
  ASSERT_EQ(image.exit_code, 0) << image.err;
  EXPECT_NE(image.out.find("1 host calls, 1 outputs"), std::string::npos) << image.out;
  const auto plain =
      run_lockstep({"device", "simulate", package, "--input", "source=" + dir + "/in.bin", "-o", dir + "/package"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(testing::read_file(dir + "/image/outputs/received.bin"),
            testing::read_file(dir + "/package/outputs/received.bin"));
  const auto cycles = [&](const std::string& folder) {
    return nlohmann::json::parse(testing::read_file(dir + "/" + folder + "/result.json"))["total_cycles"]
        .get<uint64_t>();
  };
  const auto run =
      run_lockstep({"device", "import", dir + "/p.ipuexe", "--machine", "ipu21-c600-t16", "-o", dir + "/back.capnp"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto split = nlohmann::json::parse(
      run_lockstep({"run", dir + "/back.capnp", "--input", "source=" + dir + "/in.bin", "--json"}).out)["cycle_split"];
  EXPECT_GE(cycles("image"), cycles("package") + split["host"].get<uint64_t>());
  EXPECT_EQ(split["exchange"], 61);  // the phase itself is the package's
}

TEST(DeviceSimulate, AFailedRunLeavesAFailedResult) {
  const std::string dir = testing::temp_dir("device_simulate_failed");
  testing::write_file(dir + "/in.bin", "abcdefghijkl");  // not the bytes the expectation wants
  const auto sim = run_lockstep(
      {"device", "simulate", bound_package(dir), "--input", "source=" + dir + "/in.bin", "-o", dir + "/sim"});
  EXPECT_EQ(sim.exit_code, 1) << sim.out << sim.err;
  const auto result = nlohmann::json::parse(testing::read_file(dir + "/sim/result.json"));
  EXPECT_EQ(result["status"], "failed");
  EXPECT_EQ(result["detail"],
            "expectation failed: tile 1 address 0x70000: expected 008001400180014002800140, found "
            "6162636465666768696a6b6c");
  EXPECT_EQ(testing::read_file(dir + "/sim/outputs/received.bin"), "abcdefghijkl");
  const auto check =
      run_lockstep({"crosscheck", "--simulated", dir + "/sim", "--device", dir + "/sim", "-o", dir + "/r"});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE(check.out.find("FAILED " + dir + "/sim: the run failed (runner lockstep-simulator): expectation failed"),
            std::string::npos)
      << check.out;
  // A run stopped at a limit leaves no folder.
  const auto stopped =
      run_lockstep({"device", "simulate", integration_package("repeat27"), "--max-cycles", "10", "-o", dir + "/s"});
  EXPECT_EQ(stopped.exit_code, 1) << stopped.out << stopped.err;
  expect_nothing_written(dir, "s");
}

TEST(CrosscheckCommand, FlippedByteAndBoundsFail) {
  const std::string dir = testing::temp_dir("crosscheck_fail");
  ASSERT_EQ(run_lockstep({"device", "simulate", bound_package(dir), "-o", dir + "/sim"}).exit_code, 0);
  fs::copy(dir + "/sim", dir + "/dev", fs::copy_options::recursive);
  std::string bytes = testing::read_file(dir + "/dev/outputs/received.bin");
  bytes[5] ^= 0x10;
  testing::write_file(dir + "/dev/outputs/received.bin", bytes);
  const auto flipped =
      run_lockstep({"crosscheck", "--simulated", dir + "/sim", "--device", dir + "/dev", "-o", dir + "/r1"});
  EXPECT_EQ(flipped.exit_code, 1) << flipped.out << flipped.err;
  EXPECT_NE(flipped.out.find("FAILED output 'received': first difference at byte 5"), std::string::npos) << flipped.out;
  EXPECT_TRUE(fs::exists(dir + "/r1/index.html"));  // a failed check still writes its report

  // The device took twice as long in total: error = (T - 2T) / 2T = -50%.
  testing::write_file(dir + "/dev/outputs/received.bin", testing::read_file(dir + "/sim/outputs/received.bin"));
  arch::Profile profile = arch::read_profile(dir + "/dev/profile.lsprof");
  profile.total_cycles *= 2;
  arch::write_profile(profile, dir + "/dev/profile.lsprof");
  const auto over = run_lockstep({"crosscheck", "--simulated", dir + "/sim", "--device", dir + "/dev", "-o",
                                  dir + "/r2", "--max-total-error", "49.99"});
  EXPECT_EQ(over.exit_code, 1) << over.out << over.err;
  EXPECT_NE(over.out.find("error -50.0000% passes --max-total-error 49.9900%"), std::string::npos) << over.out;
  const auto within = run_lockstep({"crosscheck", "--simulated", dir + "/sim", "--device", dir + "/dev", "-o",
                                    dir + "/r3", "--max-total-error", "50", "--max-phase-error", "0", "--json"});
  EXPECT_EQ(within.exit_code, 0) << within.out << within.err;
  const auto summary = nlohmann::json::parse(within.out);
  EXPECT_EQ(summary["total_error_percent"].get<double>(), -50.0);
  EXPECT_EQ(summary["mape_percent"].get<double>(), 0.0);  // phases and kernels untouched
}

TEST(CrosscheckCommand, BadInputWritesNothing) {
  const std::string dir = testing::temp_dir("crosscheck_bad");
  ASSERT_EQ(run_lockstep({"device", "simulate", integration_package("p2p_3w"), "-o", dir + "/sim"}).exit_code, 0);
  auto check = [&](const std::string& device) {
    return run_lockstep({"crosscheck", "--simulated", dir + "/sim", "--device", device, "-o", dir + "/report"});
  };
  expect_bad_input(check(dir + "/missing"), dir + "/missing: not a result folder");
  fs::create_directories(dir + "/empty");
  expect_bad_input(check(dir + "/empty"), dir + "/empty/result.json: missing");
  fs::copy(dir + "/sim", dir + "/bad", fs::copy_options::recursive);
  testing::write_file(dir + "/bad/result.json", "{\"format\": \"lockstep-device-result\"");
  expect_bad_input(check(dir + "/bad"), dir + "/bad/result.json: not JSON");
  testing::write_file(dir + "/bad/result.json", "{\"format\": \"lockstep-device-result\", \"version\": 1}");
  expect_bad_input(check(dir + "/bad"), dir + "/bad/result.json: missing field 'runner'");
  testing::write_file(dir + "/bad/result.json", testing::read_file(dir + "/sim/result.json"));
  const std::string profile = testing::read_file(dir + "/sim/profile.lsprof");
  testing::write_file(dir + "/bad/profile.lsprof", profile.substr(0, profile.size() / 2));
  expect_bad_input(check(dir + "/bad"), dir + "/bad/profile.lsprof");
  expect_nothing_written(dir, "report");
}

TEST(CrosscheckCommand, OutputSizeOtherThanListedIsBadInput) {
  const std::string dir = testing::temp_dir("crosscheck_bad_output");
  ASSERT_EQ(run_lockstep({"device", "simulate", bound_package(dir), "-o", dir + "/sim"}).exit_code, 0);
  fs::copy(dir + "/sim", dir + "/dev", fs::copy_options::recursive);
  testing::write_file(dir + "/dev/outputs/received.bin", "short");
  expect_bad_input(
      run_lockstep({"crosscheck", "--simulated", dir + "/sim", "--device", dir + "/dev", "-o", dir + "/r"}),
      dir + "/dev/outputs/received.bin: 5 bytes, but result.json says 12");
  expect_nothing_written(dir, "r");
}

}  // namespace
}  // namespace lockstep
