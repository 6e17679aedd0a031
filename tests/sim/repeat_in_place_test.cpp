// A Repeat whose exchange runs again with the same rows is not copied again when nothing wrote
// its sources or destinations since (model/exchange_fabric.hpp, landed_already); any write to
// one of their pages in between (a kernel, another phase's copies) makes it copy again. The
// packages are p2p_3w's exchange (tile 0 sends 12 bytes at 0x60000, tile 1 receives them at
// 0x70000) in a Repeat of 3, with kernels or another phase between the iterations; each checks
// what tile 1 received in every iteration, so a wrong skip fails its expectations.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "sim/backend.hpp"
#include "support/repeated_p2p.hpp"
#include "support/test_support.hpp"

namespace lockstep::sim {
namespace {

using testing::kP2pReceive;
using testing::kP2pSend;
using testing::kP2pTokens;
using testing::repeated_p2p;

// Tile 1 keeps what each iteration received at 0x71000 + 12 i (its iterated pointer).
const std::string kKeepReceived = "{kernel: {name: copy, operands: [{pointer: 0x58000}, 0x70000], scalars: [12]}}";
const std::string kReceiverKeeps = "      - {address: 0x58000, words: [00071000]}\n";

// Runs the package: its expectations must hold, and its debug summary must say `copies` (what
// was copied, and what was found in place).
void expect_run_copies(const std::string& yaml, const std::string& copies, size_t executions = 3) {
  const arch::Package package = arch::parse_package_yaml(yaml, "repeat.yaml");
  auto backend = make_systemc_backend(arch::load_machine(package.machine_name));
  RunResult result;
  const std::string log = testing::debug_log_while([&] { result = backend->run(package, {}); });
  EXPECT_TRUE(result.ok());
  EXPECT_TRUE(result.expectation_failures.empty());
  EXPECT_EQ(result.executions.size(), executions);
  const size_t at = log.find("run: " + std::to_string(executions) + " phase executions copied");
  const std::string summary = at == std::string::npos ? log : log.substr(at, log.find('\n', at) - at);
  EXPECT_NE(summary.find(copies), std::string::npos) << summary;
}

const std::string kAllCopied = "copied 36 bytes between SRAMs in 3 copies; 0 bytes of repeats were in place already";
const std::string kCopiedOnce = "copied 12 bytes between SRAMs in 1 copies; 24 bytes of repeats were in place already";

TEST(RepeatInPlace, NothingBetweenTheIterationsCopiesOnce) {
  expect_run_copies(
      repeated_p2p("", kP2pSend, "", kP2pReceive, "  - {tile: 1, address: 0x70000, bytes: \"" + kP2pTokens + "\"}\n"),
      kCopiedOnce);
}

// A kernel rewrites the sender's source before each iteration's exchange: every iteration
// copies, and tile 1 keeps three different slices.
TEST(RepeatInPlace, ASourceRewrittenBetweenIterationsIsCopiedAgain) {
  const std::string sender_extra =
      "      - {address: 0x58000, words: [00061000]}\n"
      "      - {address: 0x61000, words: [1, 2, 3, 4, 5, 6, 7, 8, 9]}\n";
  const std::string refill = "{kernel: {name: copy, operands: [0x60000, {pointer: 0x58000}], scalars: [12]}}, ";
  expect_run_copies(repeated_p2p(sender_extra, refill + kP2pSend, kReceiverKeeps, kP2pReceive + ", " + kKeepReceived,
                                 "  - {tile: 1, address: 0x71000, bytes: \"010000000200000003000000040000000500000006"
                                 "000000070000000800000009000000\"}\n"),
                    kAllCopied);
}

// A kernel zeroes the receiver's destination after each iteration has kept it: every
// iteration copies the tokens there again.
TEST(RepeatInPlace, ADestinationOverwrittenBetweenIterationsIsCopiedAgain) {
  const std::string clear = ", {kernel: {name: fill, operands: [0x70000], scalars: [12, 0]}}";
  expect_run_copies(repeated_p2p("", kP2pSend, kReceiverKeeps, kP2pReceive + ", " + kKeepReceived + clear,
                                 "  - {tile: 1, address: 0x71000, bytes: \"" + kP2pTokens + kP2pTokens + kP2pTokens +
                                     "\"}\n  - {tile: 1, address: 0x70000, bytes: \"000000000000000000000000\"}\n"),
                    kAllCopied);
}

// A write elsewhere on the receiver, in a page the exchange neither reads nor writes, leaves
// the repeats in place.
TEST(RepeatInPlace, AWriteToAnotherPageLeavesTheRepeatsInPlace) {
  expect_run_copies(
      repeated_p2p("", kP2pSend, kReceiverKeeps, kP2pReceive + ", " + kKeepReceived,
                   "  - {tile: 1, address: 0x71000, bytes: \"" + kP2pTokens + kP2pTokens + kP2pTokens + "\"}\n"),
      kCopiedOnce);
}

// RunOptions::after_landing sees the receiver as its words land, with that iteration's words in
// its memory: each iteration once when every iteration copies, the first alone when the
// repeats are found in place.
std::vector<std::tuple<uint32_t, uint32_t, uint32_t, std::vector<uint8_t>>> landings(const std::string& yaml) {
  const arch::Package package = arch::parse_package_yaml(yaml, "repeat.yaml");
  auto backend = make_systemc_backend(arch::load_machine(package.machine_name));
  std::mutex lock;
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t, std::vector<uint8_t>>> seen;
  RunOptions options;
  options.after_landing = [&](uint32_t phase, uint32_t iteration, uint32_t tile, const MemoryView& memory) {
    std::vector<uint8_t> words(12);
    memory.read(tile, 0x70000, 12, words.data());
    const std::lock_guard<std::mutex> hold(lock);
    seen.emplace_back(phase, iteration, tile, std::move(words));
  };
  EXPECT_TRUE(backend->run(package, options).ok());
  return seen;
}

TEST(RepeatInPlace, AfterLandingSeesEachIterationsWordsAsTheyLand) {
  const std::string sender_extra =
      "      - {address: 0x58000, words: [00061000]}\n"
      "      - {address: 0x61000, words: [1, 2, 3, 4, 5, 6, 7, 8, 9]}\n";
  const std::string refill = "{kernel: {name: copy, operands: [0x60000, {pointer: 0x58000}], scalars: [12]}}, ";
  const auto seen = landings(repeated_p2p(sender_extra, refill + kP2pSend, "", kP2pReceive,
                                          "  - {tile: 1, address: 0x70000, bytes: \"070000000800000009000000\"}\n"));
  ASSERT_EQ(seen.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    const auto& [phase, iteration, tile, words] = seen[i];
    EXPECT_EQ(phase, 1u);
    EXPECT_EQ(iteration, i);
    EXPECT_EQ(tile, 1u);
    const std::vector<uint8_t> expected = {uint8_t(3 * i + 1), 0, 0, 0, uint8_t(3 * i + 2), 0, 0, 0,
                                           uint8_t(3 * i + 3), 0, 0, 0};
    EXPECT_EQ(words, expected) << "iteration " << i;
  }
  const auto in_place = landings(
      repeated_p2p("", kP2pSend, "", kP2pReceive, "  - {tile: 1, address: 0x70000, bytes: \"" + kP2pTokens + "\"}\n"));
  ASSERT_EQ(in_place.size(), 1u);
  EXPECT_EQ(std::get<1>(in_place.front()), 0u);
}

// Two phases land on the same destination in turn: phase 1 the tokens from 0x60000, phase 2
// three words from 0x60010 (the same send word but for its address field, address << 1). Each
// phase repeats with the same rows, but the other phase's copies wrote its destination page
// since, so every execution copies (the fabric marks the pages its own copies write).
TEST(RepeatInPlace, AnotherPhaseLandingOnTheDestinationMakesItCopyAgain) {
  const std::string yaml =
      "version: 1\n"
      "machine: {name: ipu21-c600-t16, digest: \"ec84217a6976797c\"}\n"
      "phases:\n"
      "  - {id: 1, label: first}\n"
      "  - {id: 2, label: second}\n"
      "tiles:\n"
      "  - tile: 0\n"
      "    table: {address: 0x50000, size: 0x1000}\n"
      "    segments:\n"
      "      - {address: 0x50000, words: [40a0001b, 784c0001, 43a00000]}\n"
      "      - {address: 0x50100, words: [40a0001b, 784c0021, 43a00000]}\n"
      "      - {address: 0x60000, size: 12, fill: {tokens: 7}}\n"
      "      - {address: 0x60010, words: [a, b, c]}\n"
      "    steps:\n"
      "      - repeat: {count: 3, body: [{exchange: {phase: 1, row: 0x50000}}, "
      "{exchange: {phase: 2, row: 0x50100}}]}\n"
      "  - tile: 1\n"
      "    table: {address: 0x50000, size: 0x1000}\n"
      "    segments:\n"
      "      - {address: 0x50000, words: [64000000, 64008640, 61800000, 40a00007, 43a00000]}\n"
      "      - {address: 0x58000, words: [00071000, 0007100c]}\n"
      "    steps:\n"
      "      - repeat: {count: 3, pointers: [{address: 0x58000, stride: 24}, {address: 0x58004, stride: 24}], "
      "body: [{exchange: {phase: 1, row: 0x50000, incoming_base: 0x70000}}, "
      "{kernel: {name: copy, operands: [{pointer: 0x58000}, 0x70000], scalars: [12]}}, "
      "{exchange: {phase: 2, row: 0x50000, incoming_base: 0x70000}}, "
      "{kernel: {name: copy, operands: [{pointer: 0x58004}, 0x70000], scalars: [12]}}]}\n"
      "expectations:\n"
      "  - {tile: 1, address: 0x71000, bytes: \"" +
      kP2pTokens + "0a0000000b0000000c000000" + kP2pTokens + "0a0000000b0000000c000000" + kP2pTokens +
      "0a0000000b0000000c000000\"}\n";
  expect_run_copies(yaml, "copied 72 bytes between SRAMs in 6 copies; 0 bytes of repeats were in place already", 6);
}

}  // namespace
}  // namespace lockstep::sim
