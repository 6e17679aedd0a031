// Host phases on the model (model/host_link.hpp): the bytes a call's file holds reach the tiles
// through the host address space and come back into the output file; a call whose slices share
// host bytes streams batch by batch (IPU21-DEVICE.md 13); a phase costs what docs/timing.md says.
#include "model/host_link.hpp"

#include <gtest/gtest.h>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "io/errors.hpp"
#include "sim/backend.hpp"
#include "support/test_support.hpp"

namespace lockstep::sim {
namespace {

arch::Step host_step(std::vector<arch::HostTransfer> transfers) {
  return arch::Step{arch::HostStep{std::move(transfers)}};
}

// p2p_3w with a host phase before and after: the host writes tile 0's payload, tile 0 sends it
// to tile 1 in phase 1, the host reads what tile 1 received.
arch::Package host_package(uint32_t input_host, uint32_t output_host) {
  arch::Package p = arch::read_package(testing::source_path("tests/integration/packages/p2p_3w.yaml"));
  p.expectations.clear();  // they hold the package's own payload; these runs bring another
  p.bindings.resize(2);
  p.bindings[0].name = "payload";
  // The input lands where a host packet can put it (IPU21-DEVICE.md 14): 0x52000, which tile
  // 0's row now sends from (`send 3, 0x52000, 1`); the row moves out of that memory element.
  const uint32_t send_word = 0x784a4001u;
  for (int b = 0; b < 4; ++b) p.tiles[0].segments[0].bytes[4 + b] = static_cast<uint8_t>(send_word >> (8 * b));
  p.tiles[0].table.address = 0x54000;
  p.tiles[0].segments[0].address = 0x54000;
  std::get<arch::ExchangeStep>(p.tiles[0].steps[0].kind).row_address = 0x54000;
  p.bindings[0].slices = {{0, 0x52000, 12}};
  p.bindings[1].name = "received";
  p.bindings[1].kind = arch::BindingKind::Output;
  p.bindings[1].slices = {{1, 0x70000, 12}};
  auto& t0 = p.tiles[0].steps;
  auto& t1 = p.tiles[1].steps;
  t0.insert(t0.begin(), host_step({{arch::HostDirection::ToTile, 0x52000, input_host, 12}}));
  t0.push_back(host_step({}));
  t1.insert(t1.begin(), host_step({}));
  t1.push_back(host_step({{arch::HostDirection::ToHost, 0x70000, output_host, 12}}));
  arch::HostCallSpec run;
  run.name = "run";
  run.command = 7;
  run.phases = 2;
  run.inputs = {{input_host, 0, 12}};
  run.outputs = {{output_host, 0, 12}};
  run.input_batch_ends = {1};
  run.output_batch_ends = {1};
  run.input_bindings = {"payload"};
  run.output_bindings = {"received"};
  p.host = {0x3000, 0, {run}};
  return p;
}

const std::vector<uint8_t> kPayload = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

RunResult run(const arch::Package& p, RunOptions options = {}) {
  return make_systemc_backend(arch::load_machine(p.machine_name))->run(p, options);
}

TEST(HostLink, AnInputBindingReachesItsTileOnlyThroughTheHostAndComesBackInTheCallsFile) {
  RunOptions options;
  options.inputs["payload"] = kPayload;
  const RunResult r = run(host_package(0x1000, 0x2000), options);
  ASSERT_TRUE(r.ok()) << (r.hazards.empty() ? "" : describe(r.hazards.front()));
  EXPECT_EQ(r.outputs.at("received"), kPayload);
  ASSERT_EQ(r.host_outputs.size(), 1u);
  EXPECT_EQ(r.host_outputs[0].first, "run");
  EXPECT_EQ(r.host_outputs[0].second, kPayload);
  // Phase 0: tile 0 reads 12 bytes (73 route cycles + 3 words); phase 1: tile 1 writes 12
  // bytes (at least 18 events); each plus the 600 of the sync.
  EXPECT_EQ(r.host_cycles, (600u + 73 + 3) + (600u + 18));
  // The critical path's host share adds the host programs' own words around the phases
  // (the mux set and restored, the abstaining `sans 1; sync 1`), 6 cycles each.
  EXPECT_GT(r.cycle_split.host, r.host_cycles);
  EXPECT_EQ((r.cycle_split.host - r.host_cycles) % 6, 0u);
  EXPECT_EQ(r.cycle_split.total(), r.total_cycles);
}

TEST(HostLink, ExplicitCallsCarryTheirOwnFiles) {
  RunOptions options;
  options.host_calls = std::vector<HostCallInput>{{"run", kPayload}};
  const RunResult r = run(host_package(0x1000, 0x2000), options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.host_outputs.at(0).second, kPayload);
}

TEST(HostLink, ACallWhoseSlicesShareHostBytesStreamsAndStillReturnsItsOutput) {
  // Input and output in one slot: streaming. The input goes in before phase 0, the output is
  // captured at the call's end, after tile 1 wrote over the slot.
  const arch::Package p = host_package(0x1000, 0x1000);
  EXPECT_TRUE(model::host_call_streams(p.host.calls[0]));
  EXPECT_FALSE(model::host_call_streams(host_package(0x1000, 0x2000).host.calls[0]));
  RunOptions options;
  options.inputs["payload"] = kPayload;
  const RunResult r = run(p, options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.host_outputs.at(0).second, kPayload);
}

TEST(HostLink, CallsWhosePhasesDoNotAddUpAreRefusedBeforeTheRun) {
  RunOptions options;
  options.host_calls = std::vector<HostCallInput>{{"run", kPayload}, {"run", kPayload}};
  try {
    run(host_package(0x1000, 0x2000), options);
    FAIL() << "ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("host calls [run run] take 4 host phases, the program runs 2"),
              std::string::npos)
        << e.what();
  }
  options.host_calls = std::vector<HostCallInput>{{"run", {1, 2, 3}}};
  try {
    run(host_package(0x1000, 0x2000), options);
    FAIL() << "ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("host call run: expects 12 input bytes, got 3"), std::string::npos)
        << e.what();
  }
}

TEST(HostLink, APhaseCostsTheSyncAndTheBusiestTileOrTheLink) {
  arch::HostStep big{{{arch::HostDirection::ToTile, 0x60000, 0, 4096}}};
  arch::HostStep small{{{arch::HostDirection::ToHost, 0x60000, 0, 4}}};
  EXPECT_EQ(model::host_phase_cycles({&small}), 600u + 18);
  EXPECT_EQ(model::host_phase_cycles({&big}), 600u + 73 + 1024);
  // 64 tiles of 4 KiB: the link's 16 bytes a cycle are the limit.
  std::vector<const arch::HostStep*> many(64, &big);
  EXPECT_EQ(model::host_phase_cycles(many), 600u + 64 * 4096 / 16);
}

}  // namespace
}  // namespace lockstep::sim
