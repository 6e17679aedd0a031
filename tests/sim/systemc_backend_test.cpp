// The SystemC backend in-process: fresh simulation contexts for repeated runs, the
// after-exchange observer, hazard collection and ordering, inputs and outputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "io/errors.hpp"
#include "sim/backend.hpp"
#include "support/test_support.hpp"

namespace lockstep::sim {
namespace {

arch::Package load(const std::string& name) {
  return arch::read_package(testing::source_path("tests/integration/packages/" + name + ".yaml"));
}

TEST(SystemCBackend, RunsTwiceInOneProcessWithTheSameResult) {
  const auto package = load("p2p_3w");
  auto backend = make_systemc_backend(arch::load_machine(package.machine_name));
  const RunResult a = backend->run(package, {});
  const RunResult b = backend->run(package, {});
  EXPECT_TRUE(a.ok());
  EXPECT_EQ(a.total_cycles, 145u);
  EXPECT_EQ(a.total_cycles, b.total_cycles);
  ASSERT_EQ(b.executions.size(), 1u);
  EXPECT_EQ(b.executions[0].horizon, 61u);
}

TEST(SystemCBackend, AfterExchangeSeesTheLandedWords) {
  const auto package = load("p2p_3w");
  auto backend = make_systemc_backend(arch::load_machine(package.machine_name));
  RunOptions options;
  int calls = 0;
  std::vector<uint8_t> seen(12);
  options.after_exchange = [&](const PhaseExecution& e, const MemoryView& memory) {
    ++calls;
    EXPECT_EQ(e.phase, 1u);
    memory.read(1, 0x70000, 12, seen.data());
  };
  const RunResult r = backend->run(package, options);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, package.expectations[0].bytes);
  EXPECT_TRUE(r.ok());
}

TEST(SystemCBackend, StopsAtTheFirstHazardOrCollectsAllSorted) {
  const auto package = load("hazard_mux_left_open");
  auto backend = make_systemc_backend(arch::load_machine(package.machine_name));
  const RunResult first = backend->run(package, {});
  ASSERT_EQ(first.hazards.size(), 1u);
  EXPECT_TRUE(first.expectation_failures.empty());  // not checked after a stop
  RunOptions all;
  all.keep_going = true;
  const RunResult every = backend->run(package, all);
  EXPECT_GE(every.hazards.size(), first.hazards.size());
  for (size_t i = 1; i < every.hazards.size(); ++i) {
    const auto& a = every.hazards[i - 1];
    const auto& b = every.hazards[i];
    EXPECT_LE(std::make_tuple(a.cycle, a.tile, int(a.kind)), std::make_tuple(b.cycle, b.tile, int(b.kind)));
  }
  bool open = false;
  for (const auto& h : every.hazards) open = open || h.kind == HazardKind::MuxLeftOpen;
  EXPECT_TRUE(open);
  EXPECT_EQ(hazard_name(HazardKind::MuxLeftOpen), "mux-left-open");
}

// A hazard names what the chip would raise for it (IPU21-DEVICE.md 16): the same class found
// by an exchange row or by the supervisor maps to the exchange's receive error or to the
// supervisor's exception; rules the chip does not enforce map to nothing.
TEST(HazardOnTheChip, ExchangeAndSupervisorFaultsMapToTheirExceptionTypes) {
  Hazard h;
  h.kind = HazardKind::WriteOutOfRange;
  EXPECT_EQ(chip_error(h).exception, 13u);     // exchange error
  EXPECT_EQ(chip_error(h).receive_error, 3u);  // address
  h.step = true;                               // a supervisor store or a kernel operand
  EXPECT_EQ(chip_error(h).exception, 8u);      // invalid memory address
  EXPECT_EQ(chip_error(h).receive_error, 0u);
  h.kind = HazardKind::InstructionAccess;
  EXPECT_EQ(chip_error(h).exception, 10u);  // invalid PC
  h.step = false;
  EXPECT_EQ(chip_error(h).receive_error, 1u);  // instruction clash
  h.kind = HazardKind::MuxLeftOpen;
  EXPECT_EQ(chip_error(h).exception, 0u);
  EXPECT_NE(describe(h).find("(on the chip: no exception)"), std::string::npos);
  h.kind = HazardKind::RowFetchConflict;
  EXPECT_NE(describe(h).find("(on the chip: exception 13 exchange error, receive error 2 instruction-fetch clash)"),
            std::string::npos)
      << describe(h);
  EXPECT_EQ(exception_name(15), "instruction break");
  EXPECT_EQ(receive_error_name(7), "modification");
}

TEST(SystemCBackend, PatchedRowsAndIteratedPointers) {
  const auto package = load("repeat27");
  auto backend = make_systemc_backend(arch::load_machine(package.machine_name));
  const RunResult r = backend->run(package, {});
  EXPECT_TRUE(r.ok()) << (r.hazards.empty() ? "" : describe(r.hazards[0]));
  EXPECT_EQ(r.executions.size(), 27u);
  EXPECT_TRUE(r.expectation_failures.empty());
}

TEST(SystemCBackend, UnknownKernelIsBadInput) {
  auto package = load("p2p_3w");
  package.tiles[0].steps.push_back({arch::KernelStep{"no-such-kernel", {}, {}}});
  auto backend = make_systemc_backend(arch::load_machine(package.machine_name));
  EXPECT_THROW(backend->run(package, {}), InputError);
  package.tiles[0].steps.back() = {arch::KernelStep{"fill", {{0x60000, false}}, {6, 1}}};
  EXPECT_THROW(backend->run(package, {}), InputError);
}

TEST(SystemCBackend, InputsAndOutputs) {
  auto package = load("p2p_3w");
  package.expectations.clear();
  package.bindings.push_back({"src", arch::BindingKind::Input, {{0, 0x60000, 12}}, arch::ElementType::Bytes, {}});
  package.bindings.push_back({"dst", arch::BindingKind::Output, {{1, 0x70000, 12}}, arch::ElementType::Bytes, {}});
  auto backend = make_systemc_backend(arch::load_machine(package.machine_name));
  RunOptions options;
  options.inputs["src"] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const RunResult r = backend->run(package, options);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.outputs.at("dst"), options.inputs["src"]);
  options.inputs["src"].pop_back();
  EXPECT_THROW(backend->run(package, options), InputError);
}

// Runs the package with the debug log caught; returns every line of it.
std::string debug_log_of_run(const arch::Package& package, const RunOptions& options) {
  auto backend = make_systemc_backend(arch::load_machine(package.machine_name));
  return testing::debug_log_while([&] { backend->run(package, options); });
}

TEST(SystemCBackend, TraceTileLogsEveryExchangeEventOfThatTile) {
  RunOptions options;
  options.trace_tile = 1;
  const std::string all = debug_log_of_run(load("p2p_3w"), options);
  // L0 -> L1: XPIC at 1, neutral at 4, PIC at 53, three words written from event 53.
  EXPECT_NE(all.find("event 1: XPIC <- 0x0"), std::string::npos) << all;
  EXPECT_NE(all.find("event 53: write 12 bytes at 0x70000 from tile 0 0x60000"), std::string::npos) << all;
  EXPECT_NE(all.find("event 61: row ends"), std::string::npos) << all;
}

// The summary a benchmark sets a memcpy of the same volume beside: three words in one copy;
// then 27 executions of a patched Repeat, each counted, whether planned, relocated or reused.
TEST(SystemCBackend, DebugLogCountsTheBytesEveryExecutionCopied) {
  EXPECT_NE(debug_log_of_run(load("p2p_3w"), {})
                .find("run: 1 phase executions copied 12 bytes between SRAMs in 1 "
                      "copies"),
            std::string::npos);
  // Each iteration sends one 16-byte slot (the package's own comment): 27 x 16 bytes.
  const std::string repeated = debug_log_of_run(load("repeat27"), {});
  EXPECT_NE(repeated.find("run: 27 phase executions copied 432 bytes between SRAMs in 27 copies"), std::string::npos)
      << repeated;
}

// A tile's process is an SC_METHOD that returns at each barrier, or, in a run that may stop
// (`--stop-at`), an SC_THREAD that waits out every step: both run a program the same, cycle
// for cycle, hazard for hazard. The stop here is never reached, so the threads' run goes to
// its end.
class TileProcessKinds : public ::testing::TestWithParam<std::string> {};

TEST_P(TileProcessKinds, MethodsAndThreadsRunAProgramTheSame) {
  const arch::Package package = arch::read_package(testing::source_path(GetParam()));
  auto backend = make_systemc_backend(arch::load_machine(package.machine_name));
  RunOptions methods;
  methods.keep_going = true;
  RunOptions threads = methods;
  threads.stop_at = StopAt{.kind = StopAt::Kind::Cycle, .cycle = UINT64_MAX, .text = "cycle:never"};
  const RunResult a = backend->run(package, methods);
  const RunResult b = backend->run(package, threads);
  EXPECT_EQ(b.stopped_at, "");
  EXPECT_EQ(a.total_cycles, b.total_cycles);
  EXPECT_EQ(a.invocation_ends, b.invocation_ends);
  EXPECT_EQ(a.cycle_split.total(), b.cycle_split.total());
  EXPECT_EQ(a.cycle_split.sync, b.cycle_split.sync);
  EXPECT_EQ(a.cycle_split.exchange, b.cycle_split.exchange);
  ASSERT_EQ(a.executions.size(), b.executions.size());
  for (size_t i = 0; i < a.executions.size(); ++i) {
    const PhaseExecution &x = a.executions[i], &y = b.executions[i];
    EXPECT_EQ(std::tie(x.phase, x.iteration, x.release_cycle, x.horizon, x.last_arrival),
              std::tie(y.phase, y.iteration, y.release_cycle, y.horizon, y.last_arrival))
        << "execution " << i;
  }
  ASSERT_EQ(a.hazards.size(), b.hazards.size());
  for (size_t i = 0; i < a.hazards.size(); ++i) {
    const Hazard &x = a.hazards[i], &y = b.hazards[i];
    EXPECT_EQ(std::tie(x.kind, x.tile, x.phase, x.iteration, x.cycle, x.detail),
              std::tie(y.kind, y.tile, y.phase, y.iteration, y.cycle, y.detail))
        << "hazard " << i;
  }
  EXPECT_EQ(a.outputs, b.outputs);
  EXPECT_EQ(a.expectation_failures.size(), b.expectation_failures.size());
}

INSTANTIATE_TEST_SUITE_P(
    Packages, TileProcessKinds,
    ::testing::Values("tests/integration/packages/p2p_3w.yaml", "tests/integration/packages/repeat27.yaml",
                      "tests/integration/packages/multicast.yaml", "tests/integration/packages/paired.yaml",
                      "tests/integration/packages/back_to_back.yaml",
                      "tests/integration/packages/hazard_double_write.yaml",
                      "tests/integration/packages/hazard_instruction_access.yaml",
                      "tests/data/packages/repeat_patch.yaml", "tests/data/packages/long_rows.yaml"),
    [](const ::testing::TestParamInfo<std::string>& info) {
      const std::string file = info.param.substr(info.param.rfind('/') + 1);
      return file.substr(0, file.find('.'));
    });

}  // namespace
}  // namespace lockstep::sim
