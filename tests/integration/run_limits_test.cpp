// What bounds a hostile run: a Repeat too long to simulate is refused before it starts,
// and `run --max-cycles` / `--timeout` stop a long one with exit 1 and no outputs.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "support/test_support.hpp"

namespace lockstep::integration {
namespace {

// Tile 0 calls the fill kernel COUNT times in a Repeat before the back-to-back exchange of
// tests/integration/packages/back_to_back.yaml (no barrier inside the Repeat).
std::string kernel_loop_package(const std::string& count) {
  return R"(version: 1
machine: {name: ipu21-c600-t16, digest: "ec84217a6976797c"}
phases:
  - {id: 1, label: b2b}
tiles:
  - tile: 0
    table: {address: 0x50000, size: 0x1000}
    segments:
      - {address: 0x50000, words: [40a0001b, 78ec0001, 43a00000]}
      - {address: 0x60000, size: 32, fill: {tokens: 7}}
      - {address: 0x68000, words: [00060000]}
    steps:
      - repeat: {count: )" +
         count + R"(, body: [{kernel: {name: fill, operands: [{pointer: 0x68000}], scalars: [32, 7]}}]}
      - exchange: {phase: 1, row: 0x50000}
  - tile: 1
    table: {address: 0x50000, size: 0x1000}
    segments:
      - {address: 0x50000, words: [64000000, 6401c040, 6401c640, 61180000, 40a00014, 43a00000]}
    steps:
      - exchange: {phase: 1, row: 0x50000, incoming_base: 0x70000}
  - tile: 2
    table: {address: 0x50000, size: 0x1000}
    segments:
      - {address: 0x50000, words: [40a00021, 78ec0001, 43a00000]}
      - {address: 0x60000, size: 32, fill: {tokens: 7}}
    steps:
      - exchange: {phase: 1, row: 0x50000}
)";
}

TEST(RunLimits, ARepeatTooLongToSimulateIsRefusedAtOnce) {
  const std::string dir = testing::temp_dir("run-limits-refused");
  testing::write_file(dir + "/p.yaml", kernel_loop_package("4294967295"));
  const auto r = testing::run_lockstep({"run", dir + "/p.yaml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("step 0 (repeat): count: expands to more than 16777216 step executions"), std::string::npos)
      << r.err;
}

TEST(RunLimits, MaxCyclesAndTimeoutStopTheRunWithExitOneAndNoOutputs) {
  const std::string dir = testing::temp_dir("run-limits-stop");
  testing::write_file(dir + "/p.yaml", kernel_loop_package("8000000"));
  const auto cycles =
      testing::run_lockstep({"run", dir + "/p.yaml", "--max-cycles", "100000", "--output-dir", dir + "/out"});
  EXPECT_EQ(cycles.exit_code, 1) << cycles.err;
  EXPECT_NE(cycles.err.find("stopped: the run passed --max-cycles 100000"), std::string::npos) << cycles.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out"));

  const auto start = std::chrono::steady_clock::now();
  const auto timed = testing::run_lockstep({"run", dir + "/p.yaml", "--timeout", "0.5"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(timed.exit_code, 1) << timed.err;
  EXPECT_NE(timed.err.find("stopped: the run passed --timeout 0.5 s"), std::string::npos) << timed.err;
  EXPECT_LT(seconds, 30.0);  // the whole loop would take about a minute; generous for slow CI
}

TEST(RunLimits, AShortKernelLoopRunsToTheEnd) {
  const std::string dir = testing::temp_dir("run-limits-ok");
  testing::write_file(dir + "/p.yaml", kernel_loop_package("50000"));
  const auto r = testing::run_lockstep({"run", dir + "/p.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ok"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::integration
