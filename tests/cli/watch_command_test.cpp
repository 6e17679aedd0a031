// `--watch TILE:ADDRESS[:BYTES]` on run, replay and device simulate (issue 27 item 1): every
// write into the watched words, with its cycle, phase, iteration, writer and old and new word.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

// p2p_3w, then a kernel on the receiver that fills the first received word: the word is written
// by the exchange (tile 0's token from 0x60000) and then by the kernel.
std::string multicast_then_kernel(const std::string& dir) {
  std::string text = read_file(source_path("tests/integration/packages/p2p_3w.yaml"));
  const std::string row = "      - exchange: {phase: 1, row: 0x50000, incoming_base: 0x70000}\n";
  text.replace(text.find(row), row.size(),
               row + "      - kernel: {name: fill, operands: [0x70000], scalars: [4, 0x12345678]}\n");
  text.erase(text.find("expectations:"));
  const std::string path = dir + "/watch.yaml";
  write_file(path, text);
  return path;
}

TEST(WatchCommand, AWordWrittenByTheExchangeAndThenByAKernelIsReportedTwice) {
  const std::string dir = temp_dir("watch_run");
  const std::string package = multicast_then_kernel(dir);
  auto r = run_lockstep({"run", package, "--watch", "1:0x70000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("watch tile 1 0x70000: cycle 137 phase 1 iteration 0: exchange from tile 0 address 0x60000: "
                       "0x00000000 -> 0x40018000\n"
                       "watch tile 1 0x70000: cycle 145 phase 1 iteration 0: kernel fill: 0x40018000 -> 0x12345678\n"),
            std::string::npos)
      << r.out;
  r = run_lockstep({"run", package, "--watch", "1:0x70000:8", "--watch", "0:0x60000", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto watch = nlohmann::json::parse(r.out)["watch"];
  ASSERT_EQ(watch.size(), 4u);  // tile 0's load, two writes of 0x70000, one of 0x70004
  EXPECT_EQ(watch[0]["writer"], "loader: segment at 0x60000");
  EXPECT_EQ(watch[0]["cycle"], 0);
  EXPECT_EQ(watch[1]["writer"], "exchange from tile 0 address 0x60000");
  EXPECT_EQ(watch[2]["writer"], "exchange from tile 0 address 0x60004");
  EXPECT_EQ(watch[2]["cycle"], 138);
  EXPECT_EQ(watch[3]["writer"], "kernel fill");
  EXPECT_EQ(watch[3]["old"], "0x40018000");
  EXPECT_EQ(watch[3]["new"], "0x12345678");
}

TEST(WatchCommand, AReplayReportsEveryIterationsWriteBySender) {
  const auto r = run_lockstep({"replay", source_path("tests/data/captures/small.yaml"), "--phase", "7", "--config",
                               "B256", "--watch", "5:0xe0000", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> exchanges;
  const auto result = nlohmann::json::parse(r.out);
  for (const auto& w : result["watch"]) {
    const std::string writer = w["writer"];
    if (writer.rfind("exchange", 0) == 0)
      exchanges.push_back(writer + " iteration " + std::to_string(int(w["iteration"])));
  }
  EXPECT_EQ(exchanges, (std::vector<std::string>{"exchange from tile 2 address 0x5c000 iteration 0",
                                                 "exchange from tile 2 address 0x5d000 iteration 1",
                                                 "exchange from tile 2 address 0x5e000 iteration 2"}));
}

// small.yaml's phase 0 multicasts tile 3's 7 words to tiles 1 and 15: both copies name it.
TEST(WatchCommand, BothDestinationsOfAMulticastNameItsSender) {
  const auto r = run_lockstep({"replay", source_path("tests/data/captures/small.yaml"), "--phase", "0", "--config",
                               "B256", "--watch", "1:0xa2010", "--watch", "15:0xb0000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("watch tile 1 0xa2010: cycle "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("watch tile 15 0xb0000: cycle "), std::string::npos) << r.out;
  size_t named = 0;
  for (size_t at = r.out.find("exchange from tile 3 address 0x60004"); at != std::string::npos;
       at = r.out.find("exchange from tile 3 address 0x60004", at + 1)) {
    ++named;
  }
  EXPECT_EQ(named, 2u) << r.out;
}

TEST(WatchCommand, AWatchTheMachineCannotHoldIsRefusedAndNothingIsWritten) {
  const std::string dir = temp_dir("watch_bad");
  const std::string package = multicast_then_kernel(dir);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"16:0x70000", "--watch 16:0x70000:4: machine ipu21-c600-t16 has tiles 0..15"},
      {"1:0x70002", "--watch 1:0x70002:4: the address must be 4-aligned and the bytes a positive multiple of 4"},
      {"1:0xe7ffc:8", "--watch 1:0xe7ffc:8: outside the tile's memory [0x4c000, 0xe8000)"},
      {"1:0x70000:4:4", "--watch 1:0x70000:4:4: expected TILE:ADDRESS[:BYTES]"},
      {"one:0x70000", "--watch one:0x70000: 'one' is not a number"}};
  for (const auto& [spec, message] : cases) {
    const auto r = run_lockstep({"run", package, "--watch", spec, "--output-dir", dir + "/out"});
    EXPECT_EQ(r.exit_code, 2) << spec;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out")) << spec;
  }
}

}  // namespace
}  // namespace lockstep::testing
