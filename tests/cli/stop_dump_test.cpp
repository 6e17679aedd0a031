// `run --stop-at WHERE --dump ... --dump-rows FILE` (issue 27 item 2): a run stopped mid-way
// dumps what memory holds there, checked against the payload proof's own tokens.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "formats/npy.hpp"
#include "formats/token.hpp"
#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

// small.yaml's phase 7: three iterations, tile 2 sends 1,024 words from 0x5c000, 0x5d000 and
// 0x5e000 (tokens of seed 1) to tile 5's 0xe0000.
std::string compiled_small(const std::string& dir) {
  const std::string package = dir + "/small.capnp";
  const auto r = run_lockstep({"compile", source_path("tests/data/captures/small.yaml"), "-o", package});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return package;
}

TEST(StopDump, AStopAfterAnIterationDumpsTheWordsThatIterationBrought) {
  const std::string dir = temp_dir("stop_dump");
  const std::string package = compiled_small(dir);
  const auto r =
      run_lockstep({"run", package, "--stop-at", "phase:7,iteration:1", "--dump",
                    "5:0xe0000:4096=" + dir + "/received.bin", "--dump", "5:0xe0000:8:f32=" + dir + "/two.npy",
                    "--dump-rows", dir + "/rows.txt", "--output-dir", dir + "/out"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("stopped at phase 7 iteration 1 (released at cycle "), std::string::npos) << r.out;
  const std::string bytes = read_file(dir + "/received.bin");
  ASSERT_EQ(bytes.size(), 4096u);
  for (uint32_t k = 0; k < 1024; ++k) {
    uint32_t word = 0;
    std::memcpy(&word, bytes.data() + 4 * k, 4);
    ASSERT_EQ(word, arch::payload_token(1, 2, 0x5d000 + 4 * k)) << "word " << k;
  }
  const arch::NpyArray two = arch::read_npy(dir + "/two.npy");
  EXPECT_EQ(two.type, arch::NpyType::kFloat32);
  EXPECT_EQ(std::string(two.data.begin(), two.data.end()), bytes.substr(0, 8));
  const std::string rows = read_file(dir + "/rows.txt");
  EXPECT_NE(rows.find("tile 5: phase 7 iteration 1, INCOMING_MUX 0x640"), std::string::npos) << rows;
  // Its row points the receive pointer at word 0x38000 (byte 0xe0000) by PIC.
  EXPECT_NE(rows.find("delaypic events=56 selector=0 value=0x38000"), std::string::npos) << rows;
  EXPECT_NE(rows.find("br $m10"), std::string::npos) << rows;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out"));  // a stopped run writes no outputs
}

TEST(StopDump, AStopPointNeverReachedIsSaidAndTheRunEndsAsUsual) {
  const std::string dir = temp_dir("stop_never");
  const std::string package = compiled_small(dir);
  const auto r =
      run_lockstep({"run", package, "--stop-at", "phase:7,iteration:5", "--dump", "5:0xe0000:4=" + dir + "/d.bin"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--stop-at phase:7,iteration:5: the run never got there (it ended at cycle "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nok\n"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/d.bin"));
}

TEST(StopDump, ABadStopOrDumpIsRefusedAndNothingIsWritten) {
  const std::string dir = temp_dir("stop_bad");
  const std::string package = compiled_small(dir);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--stop-at", "phase:x"}, "--stop-at phase:x: expected cycle:N, phase:P[,iteration:I], tile:T,step:S or hazard"},
      {{"--dump", "5:0xe0000:4=" + dir + "/d.bin"}, "--dump and --dump-rows need --stop-at"},
      {{"--stop-at", "hazard", "--dump", "16:0xe0000:4=" + dir + "/d.bin"},
       "--dump 16:0xe0000:4: machine ipu21-c600-t16 has tiles 0..15"},
      {{"--stop-at", "hazard", "--dump", "5:0xe0000:6:f32=" + dir + "/d.npy"}, "6 bytes are not whole f32 elements"},
      {{"--stop-at", "hazard", "--dump", "5:0xe0000:4"}, "expected TILE:ADDRESS:BYTES[:DTYPE]=FILE"}};
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> argv = {"run", package};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const auto r = run_lockstep(argv);
    EXPECT_EQ(r.exit_code, 2) << message;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/d.bin"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/d.npy"));
}

// A run that may stop keeps every tile in step (each waits out its steps); any other run lets
// tiles run ahead to their next barrier (docs/timing.md "Time"). Both must give the same
// cycles, phase executions, critical path, profile and output bits: here the whole vit-tiny
// model, once plain and once with a stop it never reaches.
TEST(StopDump, TilesInStepForAStopGiveTheRunOfTilesRunningAhead) {
  const std::string dir = temp_dir("stop_in_step");
  const std::string package = dir + "/vit-tiny.pkg";
  const auto built = run_lockstep({"build", source_path("configs/workloads/vit-tiny.yaml"), "-o", package});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const auto ahead =
      run_lockstep({"run", package, "--json", "--profile", dir + "/ahead.lsprof", "--output-dir", dir + "/ahead"});
  const auto in_step = run_lockstep({"run", package, "--json", "--profile", dir + "/in-step.lsprof", "--output-dir",
                                     dir + "/in-step", "--stop-at", "cycle:1000000000000"});
  ASSERT_EQ(ahead.exit_code, 0) << ahead.err;
  ASSERT_EQ(in_step.exit_code, 0) << in_step.err;
  EXPECT_NE(in_step.err.find("the run never got there"), std::string::npos) << in_step.err;
  const nlohmann::json a = nlohmann::json::parse(ahead.out), b = nlohmann::json::parse(in_step.out);
  for (const char* key : {"total_cycles", "cycle_split", "executions", "invocations", "hazards"}) {
    EXPECT_EQ(a[key], b[key]) << key;
  }
  EXPECT_EQ(a["executions"].size(), 3u + 15u * 2u);
  EXPECT_EQ(read_file(dir + "/ahead.lsprof"), read_file(dir + "/in-step.lsprof"));
  size_t outputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/ahead")) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(read_file(entry.path().string()), read_file(dir + "/in-step/" + name)) << name;
    ++outputs;
  }
  EXPECT_GT(outputs, 0u);
}

}  // namespace
}  // namespace lockstep::testing
