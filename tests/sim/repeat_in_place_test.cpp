// A Repeat whose exchange runs again with the same rows is not copied again when nothing wrote
// its sources or destinations since (model/exchange_fabric.hpp, landed_already); any write to
// one of their pages in between (a kernel, the host, a replay's refill) makes it copy again.
// Each package is p2p_3w's exchange (tile 0 sends 12 bytes at 0x60000, tile 1 receives them
// at 0x70000) in a Repeat of 3, with kernels between the iterations.
#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <string>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "sim/backend.hpp"

namespace lockstep::sim {
namespace {

// The two tiles' rows and tables; each test adds segments, steps and expectations.
std::string repeated_p2p(const std::string& sender_extra, const std::string& sender_body,
                         const std::string& receiver_extra, const std::string& receiver_body,
                         const std::string& expectations) {
  return "version: 1\n"
         "machine: {name: ipu21-c600-t16, digest: \"ec84217a6976797c\"}\n"
         "phases:\n"
         "  - {id: 1, label: p2p}\n"
         "tiles:\n"
         "  - tile: 0\n"
         "    table: {address: 0x50000, size: 0x1000}\n"
         "    segments:\n"
         "      - {address: 0x50000, words: [40a0001b, 784c0001, 43a00000]}\n"
         "      - {address: 0x60000, size: 12, fill: {tokens: 7}}\n" +
         sender_extra +
         "    steps:\n"
         "      - repeat: {count: 3, pointers: [{address: 0x58000, stride: 12}], body: [" +
         sender_body +
         "]}\n"
         "  - tile: 1\n"
         "    table: {address: 0x50000, size: 0x1000}\n"
         "    segments:\n"
         "      - {address: 0x50000, words: [64000000, 64008640, 61800000, 40a00007, 43a00000]}\n" +
         receiver_extra +
         "    steps:\n"
         "      - repeat: {count: 3, pointers: [{address: 0x58000, stride: 12}], body: [" +
         receiver_body + "]}\n" + "expectations:\n" + expectations;
}

const std::string kExchange = "{exchange: {phase: 1, row: 0x50000}}";
const std::string kReceive = "{exchange: {phase: 1, row: 0x50000, incoming_base: 0x70000}}";
// The 12 bytes p2p_3w's sender holds (tokens 7), as tile 1 receives them.
const std::string kTokens = "008001400180014002800140";
// Tile 1 keeps what each iteration received at 0x71000 + 12 i (its iterated pointer).
const std::string kKeepReceived = "{kernel: {name: copy, operands: [{pointer: 0x58000}, 0x70000], scalars: [12]}}";
const std::string kReceiverKeeps = "      - {address: 0x58000, words: [00071000]}\n";

struct RepeatRun {
  RunResult result;
  std::string log;
};

// Runs the package with its debug log caught (the run's summary says what was not copied).
RepeatRun run_repeat(const std::string& yaml) {
  const arch::Package package = arch::parse_package_yaml(yaml, "repeat.yaml");
  auto backend = make_systemc_backend(arch::load_machine(package.machine_name));
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
  struct Restore {
    std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
    spdlog::level::level_enum level = spdlog::get_level();
    ~Restore() {
      spdlog::set_default_logger(previous);
      spdlog::set_level(level);
    }
  } restore;
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("repeat-test", sink));
  spdlog::set_level(spdlog::level::debug);
  RepeatRun run{backend->run(package, {}), ""};
  for (const auto& line : sink->last_formatted()) run.log += line;
  return run;
}

std::string summary_of(const std::string& log) {
  const size_t at = log.find("run: 3 phase executions copied");
  return at == std::string::npos ? log : log.substr(at, log.find('\n', at) - at);
}

TEST(RepeatInPlace, NothingBetweenTheIterationsCopiesOnce) {
  const RepeatRun run = run_repeat(repeated_p2p("", kExchange, "", kReceive,
                                                "  - {tile: 1, address: 0x70000, bytes: \"" + kTokens + "\"}\n"));
  EXPECT_TRUE(run.result.ok());
  EXPECT_TRUE(run.result.expectation_failures.empty());
  ASSERT_EQ(run.result.executions.size(), 3u);
  EXPECT_NE(run.log.find("run: 3 phase executions copied 12 bytes between SRAMs in 1 copies; 24 bytes of repeats "
                         "were in place already"),
            std::string::npos)
      << summary_of(run.log);
}

// A kernel rewrites the sender's source before each iteration's exchange: every iteration
// copies, and tile 1 keeps three different slices.
TEST(RepeatInPlace, ASourceRewrittenBetweenIterationsIsCopiedAgain) {
  const std::string sender_extra =
      "      - {address: 0x58000, words: [00061000]}\n"
      "      - {address: 0x61000, words: [1, 2, 3, 4, 5, 6, 7, 8, 9]}\n";
  const std::string refill = "{kernel: {name: copy, operands: [0x60000, {pointer: 0x58000}], scalars: [12]}}, ";
  const RepeatRun run =
      run_repeat(repeated_p2p(sender_extra, refill + kExchange, kReceiverKeeps, kReceive + ", " + kKeepReceived,
                              "  - {tile: 1, address: 0x71000, bytes: \"010000000200000003000000040000000500000006"
                              "000000070000000800000009000000\"}\n"));
  EXPECT_TRUE(run.result.ok());
  EXPECT_TRUE(run.result.expectation_failures.empty());
  EXPECT_NE(run.log.find("copied 36 bytes between SRAMs in 3 copies; 0 bytes of repeats were in place already"),
            std::string::npos)
      << summary_of(run.log);
}

// A kernel zeroes the receiver's destination after each iteration has kept it: every
// iteration copies the tokens there again.
TEST(RepeatInPlace, ADestinationOverwrittenBetweenIterationsIsCopiedAgain) {
  const std::string clear = ", {kernel: {name: fill, operands: [0x70000], scalars: [12, 0]}}";
  const RepeatRun run = run_repeat(
      repeated_p2p("", kExchange, kReceiverKeeps, kReceive + ", " + kKeepReceived + clear,
                   "  - {tile: 1, address: 0x71000, bytes: \"" + kTokens + kTokens + kTokens +
                       "\"}\n  - {tile: 1, address: 0x70000, bytes: \"000000000000000000000000\"}\n"));
  EXPECT_TRUE(run.result.ok());
  EXPECT_TRUE(run.result.expectation_failures.empty());
  EXPECT_NE(run.log.find("copied 36 bytes between SRAMs in 3 copies; 0 bytes of repeats were in place already"),
            std::string::npos)
      << summary_of(run.log);
}

// A write elsewhere on the receiver, in a page the exchange neither reads nor writes, leaves
// the repeats in place.
TEST(RepeatInPlace, AWriteToAnotherPageLeavesTheRepeatsInPlace) {
  const RepeatRun run = run_repeat(repeated_p2p("", kExchange, kReceiverKeeps, kReceive + ", " + kKeepReceived,
                                                "  - {tile: 1, address: 0x71000, bytes: \"" + kTokens + kTokens +
                                                    kTokens + "\"}\n"));
  EXPECT_TRUE(run.result.ok());
  EXPECT_TRUE(run.result.expectation_failures.empty());
  EXPECT_NE(run.log.find("copied 12 bytes between SRAMs in 1 copies; 24 bytes of repeats were in place already"),
            std::string::npos)
      << summary_of(run.log);
}

}  // namespace
}  // namespace lockstep::sim
