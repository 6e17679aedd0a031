// `run --profile` in-process: exchange activities against the worked examples of
// IPU21-EXCHANGE.md section 9 (numbers from the spec, not from our compiler), samples that
// tile each tile's time without gaps, Repeat epochs, merged kernel calls, the partner-busy
// rule, and identical profiles from identical runs.
#include <gtest/gtest.h>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "model/exchange_activities.hpp"
#include "profile/profile.hpp"
#include "sim/backend.hpp"
#include "support/test_support.hpp"

namespace lockstep::sim {
namespace {

using arch::ActivityKind;
using arch::ExchangeActivity;

arch::Profile profile_of(const arch::Package& package) {
  auto backend = make_systemc_backend(arch::load_machine(package.machine_name));
  RunOptions options;
  options.profile = true;
  RunResult r = backend->run(package, options);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.profile.has_value());
  return r.profile.value_or(arch::Profile{});
}

arch::Package load(const std::string& name) {
  return arch::read_package(testing::source_path("tests/integration/packages/" + name + ".yaml"));
}

const arch::TileProfile& tile(const arch::Profile& p, uint32_t physical) {
  for (const auto& t : p.tiles) {
    if (t.physical_tile == physical) return t;
  }
  throw std::runtime_error("no tile " + std::to_string(physical));
}

// Section 9's trace table: vector A's words leave at 136+k and are written at 165+k
// (k = 0..2); the receiver's row ends at 173. Vector D: 4148 words leave at 110+k and are
// written at 165+k; the receiver's row ends at 4318.
TEST(ProfileCapture, ExchangeActivitiesMatchTheSpecsWorkedVectors) {
  const arch::Profile a = profile_of(load("section9_a"));
  const auto& a_send = a.steps[tile(a, 0).samples.at(0).step];
  const auto& a_receive = a.steps[tile(a, 53).samples.at(0).step];
  EXPECT_EQ(a_send.kind, arch::ProfileStepKind::Exchange);
  EXPECT_EQ(a_send.activities, (std::vector<ExchangeActivity>{{ActivityKind::Send, 136, 139}}));
  EXPECT_EQ(a_receive.activities, (std::vector<ExchangeActivity>{{ActivityKind::Receive, 165, 168}}));
  EXPECT_EQ(a_send.event_cycles, 173u);
  EXPECT_EQ(a_send.phase, arch::kExchangePhaseBit | 1);
  EXPECT_EQ(a_send.phase_label, "sdk.vector.a");
  // The receiver's row: "delay 8 [173]", its last instruction before the return.
  ASSERT_NE(arch::find_metadata(a_receive, "rowEvents"), nullptr);
  EXPECT_EQ(*arch::find_metadata(a_receive, "rowEvents"), "173");

  const arch::Profile d = profile_of(load("section9_d"));
  const auto& d_send = d.steps[tile(d, 1024).samples.at(0).step];
  const auto& d_receive = d.steps[tile(d, 0).samples.at(0).step];
  EXPECT_EQ(d_send.activities, (std::vector<ExchangeActivity>{{ActivityKind::Send, 110, 110 + 4148}}));
  EXPECT_EQ(d_receive.activities, (std::vector<ExchangeActivity>{{ActivityKind::Receive, 165, 165 + 4148}}));
  EXPECT_EQ(d_send.event_cycles, 4318u);
}

// Every cycle of a tile, from 0 to its last step's end, is in exactly one sample.
void expect_contiguous(const arch::Profile& p) {
  for (const auto& t : p.tiles) {
    uint64_t at = 0;
    for (const auto& s : t.samples) {
      EXPECT_EQ(s.start_cycle, at) << "tile " << t.physical_tile;
      EXPECT_GE(s.end_cycle, s.start_cycle);
      at = s.end_cycle;
    }
    EXPECT_LE(at, p.total_cycles);
  }
}

TEST(ProfileCapture, SamplesCoverEachTileWithoutGapsAndCarryRepeatEpochs) {
  const arch::Package package = load("repeat27");
  const arch::Profile p = profile_of(package);
  expect_contiguous(p);
  uint64_t last_end = 0;
  for (const auto& t : p.tiles) last_end = std::max(last_end, t.samples.back().end_cycle);
  EXPECT_EQ(last_end, p.total_cycles);
  std::vector<uint32_t> epochs;
  const auto& first = p.tiles.front();
  for (const auto& s : first.samples) {
    if (p.steps[s.step].kind == arch::ProfileStepKind::Exchange) epochs.push_back(s.epoch);
  }
  ASSERT_EQ(epochs.size(), 27u);
  for (uint32_t i = 0; i < 27; ++i) EXPECT_EQ(epochs[i], i);
  // Identical runs, identical profiles.
  EXPECT_EQ(profile_of(package), p);
}

TEST(ProfileCapture, ConsecutiveEqualKernelCallsShareOneSample) {
  arch::Package package = arch::parse_package_yaml(R"(version: 1
machine: {name: ipu21-c600-t16, digest: "ec84217a6976797c"}
tiles:
  - tile: 0
    table: {address: 0x50000, size: 0x100}
    steps:
      - kernel: {name: fill, operands: [0x60000], scalars: [64, 1]}
      - kernel: {name: fill, operands: [0x60040], scalars: [64, 1]}
      - kernel: {name: fill, operands: [0x60080], scalars: [64, 1]}
      - kernel: {name: fill, operands: [0x60000], scalars: [128, 1]}
)",
                                                   "kernels.yaml");
  const arch::Profile p = profile_of(package);
  ASSERT_EQ(p.tiles.size(), 1u);
  ASSERT_EQ(p.tiles[0].samples.size(), 2u);
  const auto& merged = p.steps[p.tiles[0].samples[0].step];
  EXPECT_EQ(merged.kernel, "fill");
  ASSERT_NE(arch::find_metadata(merged, "invocations"), nullptr);
  EXPECT_EQ(*arch::find_metadata(merged, "invocations"), "3");
  EXPECT_EQ(*arch::find_metadata(merged, "kernelSpec"), "fill(64, 1)");
  EXPECT_EQ(*arch::find_metadata(p.steps[p.tiles[0].samples[1].step], "invocations"), "1");
  expect_contiguous(p);
}

// IPU21-EXCHANGE.md, paired transfers: the sender's partner (physical XOR 2) is busy from
// the send's issue to the sender row's horizon.
TEST(ProfileCapture, PairedSendersPartnerIsBusyUntilTheSendersRowEnds) {
  model::PhaseOutcome outcome;
  outcome.horizon = 120;
  outcome.tile_horizon = {100, 120};
  outcome.schedules.resize(2);
  model::SendRun run;
  run.issue_event = 33;
  run.first_event = 34;
  run.items = 64;
  run.sctl = 4 | 1;  // wide
  outcome.schedules[0].runs = {run};
  std::vector<model::PhaseTile> tiles(2);
  tiles[0].physical = 0;
  tiles[1].physical = 2;
  const auto activities = model::exchange_activities(outcome, tiles);
  EXPECT_EQ(activities->per_tile[0], (std::vector<ExchangeActivity>{{ActivityKind::Send, 34, 98}}));
  EXPECT_EQ(activities->per_tile[1], (std::vector<ExchangeActivity>{{ActivityKind::PartnerBusy, 33, 100}}));
}

}  // namespace
}  // namespace lockstep::sim
