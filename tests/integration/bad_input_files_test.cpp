// Hostile or wrong input files at the command line: each command ends with exit 2 and one
// line naming the file and what is wrong, before doing any work (docs/formats.md, "Limits").
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>

#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

// Exit 2 with exactly one line on stderr that contains `what`.
void expect_bad_input(const std::vector<std::string>& args, const std::string& what) {
  const CommandResult result = run_lockstep(args);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_NE(result.err.find(what), std::string::npos) << result.err;
}

TEST(BadInputFiles, DevicesAndFifosAreRefusedBeforeReading) {
  const std::string fifo = temp_dir("cli_fifo") + "/pipe.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_bad_input({"capture", "stats", "/dev/zero"}, "/dev/zero: not a regular file");
  expect_bad_input({"capture", "stats", fifo}, fifo + ": not a regular file");
  expect_bad_input({"machine", "/dev/zero"}, "/dev/zero: not a regular file");
  expect_bad_input({"machine", fifo}, fifo + ": not a regular file");
  expect_bad_input({"lower", fifo, "--stats"}, fifo + ": not a regular file");
  expect_bad_input({"inspect", "/dev/zero"}, "/dev/zero: not a regular file");
  // Every command that tells a capture from a package by its first bytes looks first.
  expect_bad_input({"run", fifo}, fifo + ": not a regular file");
  expect_bad_input({"compile", fifo, "-o", fifo + ".lkspkg"}, fifo + ": not a regular file");
  expect_bad_input({"replay", fifo, "--phase", "0", "--config", "B256"}, fifo + ": not a regular file");
  expect_bad_input({"sweep", fifo, "-o", fifo + ".sweep"}, fifo + ": not a regular file");
  expect_bad_input({"inspect", fifo}, fifo + ": not a regular file");
  expect_bad_input({"capture", "validate", fifo}, fifo + ": not a regular file");
}

TEST(BadInputFiles, CaptureWithTrailingDataIsRefused) {
  const std::string dir = temp_dir("cli_trailing");
  const std::string capture = dir + "/small.capnp";
  ASSERT_EQ(run_lockstep({"capture", "convert", source_path("tests/data/captures/small.yaml"), capture}).exit_code, 0);
  write_file(capture, read_file(capture) + std::string(16, 'x'));
  expect_bad_input({"capture", "stats", capture}, capture + ": corrupt capture: 16 bytes after the message");
}

TEST(BadInputFiles, HostileYamlIsRefusedWithItsLine) {
  const std::string dir = temp_dir("cli_yaml");
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  write_file(dir + "/bomb.yaml", bomb);
  expect_bad_input({"machine", dir + "/bomb.yaml"}, dir + "/bomb.yaml:7: alias *a5 expands the document to more than");

  std::string workload = read_file(source_path("configs/workloads/vit-tiny.yaml"));
  workload += "name: again\n";
  write_file(dir + "/dup.yaml", workload);
  expect_bad_input({"lower", dir + "/dup.yaml", "--stats"}, "duplicate key 'name' (first at line");

  std::string capture = read_file(source_path("tests/data/captures/small.yaml"));
  capture.replace(capture.find("layer.mlp.up"), 12, "layer.\xff\xfe.up");
  write_file(dir + "/utf8.yaml", capture);
  expect_bad_input({"capture", "stats", dir + "/utf8.yaml"}, "invalid UTF-8 (0xff)");
}

}  // namespace
}  // namespace lockstep::testing
