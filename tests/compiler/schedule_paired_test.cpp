// Paired64 transfers: eligibility, the spec's row shape for one transfer to a physical pair,
// delivery through the simulator's phase executor, and the two width policies.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "arch/instruction.hpp"
#include "compiler/encode_plan.hpp"
#include "compiler/encode_row.hpp"
#include "compiler/order.hpp"
#include "compiler/phase_schedule.hpp"
#include "compiler/physical_schedule.hpp"
#include "compiler/row_check.hpp"
#include "compiler/schedule_model.hpp"
#include "compiler/schedule_test_support.hpp"

namespace lockstep::compiler {
namespace {

using namespace testing;

constexpr uint32_t kNeutral = 0x640;

// What a decoded row does, on the phase's event clock (docs/ipu21-exchange.md section 5).
struct RowEvents {
  struct Item {
    int64_t first_event;
    uint32_t items;
    uint32_t address;
    uint32_t sctl;
  };
  struct Control {
    int64_t event;
    std::string kind;  // "xpic", "paired", "pointer", "format"
    uint32_t value;
    bool operator==(const Control&) const = default;
  };
  std::vector<Item> runs;
  std::vector<Control> controls;
  int64_t end = 0;
};

RowEvents execute(const TileRow& row) {
  RowEvents out;
  int64_t t = 0;
  auto control = [&](int64_t event, const char* kind, uint32_t value) { out.controls.push_back({event, kind, value}); };
  for (const auto& d : arch::decode_row(row.words)) {
    const arch::Instruction& ins = d.instruction;
    switch (ins.op) {
      case arch::Opcode::Delay:
        t += ins.events;
        break;
      case arch::Opcode::DelayPic:
        t += ins.events;
        control(t, ins.selector ? "format" : "pointer", ins.value);
        break;
      case arch::Opcode::DelayXpic:
        t += ins.events;
        control(t, ins.selector ? "paired" : "xpic", ins.value);
        break;
      case arch::Opcode::Send:
      case arch::Opcode::SendOff:
        out.runs.push_back({t + 1, ins.words, ins.address, ins.sctl});
        t += ins.words;
        break;
      case arch::Opcode::SendPic: {
        static const char* kinds[] = {"xpic", "paired", "pointer", "format"};
        control(t + 1, kinds[ins.selector], ins.value);
        out.runs.push_back({t + 1, ins.words, 0, 0});
        t += ins.words;
        break;
      }
      case arch::Opcode::SendPicP:
        control(t + 1, ins.xpic_paired ? "paired" : "xpic", ins.xpic);
        control(t + 1, "pointer", ins.pic);
        if (ins.sctl & 3u) out.runs.push_back({t + 1, ins.words, ins.address, ins.sctl});
        t += ins.words;
        break;
      default:
        break;
    }
  }
  out.end = t;
  return out;
}

const TileRow* row_of(const ScheduledPhase& s, uint32_t logical) {
  for (const TileRow& row : s.rows)
    if (row.tile == logical) return &row;
  return nullptr;
}

ScheduledPhase schedule(const arch::CapturePhase& phase, const std::string& config) {
  return schedule_phase(phase, c600(), c600_topology(), parse_config(config));
}

// Logical 0 sends 256 words (128 items) to the physical pair of logical tiles 2 and 3;
// logical 1 (the sender's partner) takes no part.
arch::CapturePhase one_pair_phase(uint32_t words = 256) {
  arch::CapturePhase phase;
  phase.id = 1;
  arch::Transfer t = transfer(0, 0x4c000, {{2, 0x64000}, {3, 0x64000}}, words);
  t.allow_paired = true;
  phase.transfers.push_back(t);
  return phase;
}

TEST(SchedulePaired, OneTransferToAPairHasTheSpecsRowShape) {
  const arch::CapturePhase phase = one_pair_phase();
  const ScheduledPhase s = schedule(phase, "S256+paired");
  ASSERT_EQ(s.width, Width::Paired64);
  const auto& topo = c600_topology();
  const uint32_t src = topo.physical(0), a = topo.physical(2), b = topo.physical(3);
  ASSERT_EQ(b, a ^ 2u);
  const uint32_t early = topo.time_to_mux(src, a) <= topo.time_to_mux(src, b) ? a : b;
  const uint32_t waiting = early ^ 2u;
  const int64_t pttm = topo.paired_time_to_mux(src, a);
  const int64_t items = 128;
  // Section 6: the send issues at shift = max(0, 1 - min pttm) and the early member's
  // paired window opens at x = pttm + shift, where item 0 arrives.
  const int64_t issue = std::max<int64_t>(0, 1 - pttm);
  const int64_t x = pttm + issue;
  const int64_t f = x + 51 + 2 * topo.row(a);  // section 6: format at x + 51 + 2r
  const uint32_t dir = static_cast<uint32_t>(topo.direction(src, a));
  ASSERT_EQ(dir, static_cast<uint32_t>(topo.direction(src, b)));

  // Sender: one stream of 128 items, sctl dir|4, item address = byte address / 8.
  const RowEvents sender = execute(*row_of(s, 0));
  ASSERT_FALSE(sender.runs.empty());
  EXPECT_EQ(sender.runs[0].first_event, issue + 1);
  EXPECT_EQ(sender.runs[0].address, 0x4c000u / 8);
  uint32_t sent = 0;
  for (const auto& r : sender.runs) {
    EXPECT_EQ(r.sctl, dir | 4u);
    sent += r.items;
  }
  EXPECT_EQ(sent, items);
  EXPECT_TRUE(sender.controls.empty());
  EXPECT_EQ(sender.end, issue + items);

  // Early member: paired XPIC source (s XOR (e AND 2)) at x and neutral at x + items; both
  // members: format dir at F, pointer at F + 2, format 0 at F + items, row end F + items + 7.
  const RowEvents e = execute(*row_of(s, topo.logical(early)));
  const std::vector<RowEvents::Control> expected_early = {{x, "paired", src ^ (early & 2u)},
                                                          {x + items, "paired", kNeutral},
                                                          {f, "format", dir},
                                                          {f + 2, "pointer", 0x64000u / 4},
                                                          {f + items, "format", 0}};
  std::vector<RowEvents::Control> got = e.controls, want = expected_early;
  const auto by_event = [](const auto& p, const auto& q) { return p.event < q.event; };
  std::sort(got.begin(), got.end(), by_event);
  std::sort(want.begin(), want.end(), by_event);
  EXPECT_EQ(got, want);
  EXPECT_TRUE(e.runs.empty());
  EXPECT_EQ(e.end, f + items + 7);
  const RowEvents w = execute(*row_of(s, topo.logical(waiting)));
  const std::vector<RowEvents::Control> expected_waiting = {
      {f, "format", dir}, {f + 2, "pointer", 0x64000u / 4}, {f + items, "format", 0}};
  EXPECT_EQ(w.controls, expected_waiting);
  EXPECT_EQ(w.end, f + items + 7);

  // The sender's partner runs a delay-only row that ends with the sender's.
  const TileRow* partner = row_of(s, 1);
  ASSERT_NE(partner, nullptr);
  const RowEvents p = execute(*partner);
  EXPECT_TRUE(p.runs.empty());
  EXPECT_TRUE(p.controls.empty());
  EXPECT_EQ(p.end, sender.end);

  // Horizon: max(1, pttm) + items - 1 + paired write delay (53 + 2r) + 6 (docs/scheduling.md).
  EXPECT_EQ(int64_t{s.horizon}, std::max<int64_t>(1, pttm) + items - 1 + 53 + 2 * topo.row(a) + 6);
  EXPECT_EQ(s.horizon, f + items + 7);
  EXPECT_GE(s.horizon, s.lower_bound);
  expect_delivers(phase, s);

  // Half the items: shorter than the same transfer as 32-bit words.
  const ScheduledPhase word = schedule(phase, "S256");
  EXPECT_EQ(word.width, Width::Word32);
  EXPECT_LT(s.horizon, word.horizon);
  expect_delivers(phase, word);
}

TEST(SchedulePaired, IneligibleTransfersGoAsWord32) {
  auto expect_word32 = [&](const arch::CapturePhase& phase, const char* why) {
    const ScheduledPhase s = schedule(phase, "S256+paired");
    EXPECT_EQ(s.width, Width::Word32) << why;
    const ScheduledPhase w = schedule(phase, "S256");
    ASSERT_EQ(s.rows.size(), w.rows.size()) << why;
    for (size_t i = 0; i < s.rows.size(); ++i) EXPECT_EQ(s.rows[i].words, w.rows[i].words) << why;
    expect_delivers(phase, s);
  };
  {
    arch::CapturePhase p = one_pair_phase();
    p.transfers[0].allow_paired = false;
    expect_word32(p, "allow_paired false");
  }
  expect_word32(one_pair_phase(126), "fewer than 128 words");
  expect_word32(one_pair_phase(255), "odd words");
  {
    arch::CapturePhase p = one_pair_phase();
    p.transfers[0].source_addresses = {0x4c004};
    expect_word32(p, "source not 8-aligned");
  }
  {
    arch::CapturePhase p = one_pair_phase();
    p.transfers[0].destinations = {{2, 0x64000}, {3, 0x64008}};
    expect_word32(p, "members at different addresses");
  }
  {
    arch::CapturePhase p = one_pair_phase();
    p.transfers[0].destinations = {{2, 0x64000}};
    expect_word32(p, "half a pair");
  }
  {
    arch::CapturePhase p = one_pair_phase();
    p.transfers.push_back(transfer(1, 0x4c000, {{9, 0x64000}}, 8));
    expect_word32(p, "the sender's partner sends");
  }
  {
    arch::CapturePhase p = one_pair_phase();
    p.transfers.push_back(transfer(9, 0x4c000, {{1, 0x64000}}, 8));
    expect_word32(p, "the sender's partner receives");
  }
}

TEST(SchedulePaired, MulticastToSeveralPairsRepeatAndMixedWidths) {
  // Logical 0 multicasts to three pairs (both directions, sctl 7 when they differ) over a
  // Repeat of 3; logical 20 sends a paired transfer to a pair that also receives 32-bit
  // words; 32-bit traffic around them.
  arch::CapturePhase phase;
  phase.id = 2;
  phase.iterations = 3;
  arch::Transfer multicast = transfer(
      0, 0x4c000, {{2, 0x64000}, {3, 0x64000}, {40, 0x64000}, {41, 0x64000}, {1400, 0x64000}, {1401, 0x64000}}, 600);
  multicast.source_addresses = {0x4c000, 0x4d000, 0x4e000};
  multicast.allow_paired = true;
  phase.transfers.push_back(multicast);
  arch::Transfer second = transfer(20, 0x50000, {{40, 0x66000}, {41, 0x66000}}, 300);
  second.source_addresses = {0x50000, 0x50000, 0x50000};
  second.allow_paired = true;
  phase.transfers.push_back(second);
  for (uint32_t s : {30u, 31u, 700u}) {
    arch::Transfer t = transfer(s, 0x52000, {{40, 0x68000 + 0x400 * (s % 8)}, {2, 0x68000 + 0x400 * (s % 8)}}, 64);
    t.source_addresses = {0x52000, 0x52000, 0x52000};
    phase.transfers.push_back(t);
  }
  for (const char* config :
       {"latency+paired", "S256+paired", "B1024+paired", "S64+paired", "remaining-combined+paired"}) {
    const ScheduledPhase s = schedule(phase, config);
    EXPECT_EQ(s.width, Width::Paired64) << config;
    EXPECT_GE(s.horizon, s.lower_bound) << config;
    for (uint32_t i = 0; i < phase.iterations; ++i) {
      SCOPED_TRACE(std::string(config) + " iteration " + std::to_string(i));
      expect_delivers(phase, s, i);
    }
  }
}

// Random phases in which a third of the pairs keep their second tile quiet and the first
// sends paired transfers to complete pairs, among 32-bit traffic; fixed seeds.
arch::CapturePhase random_paired_phase(uint32_t seed) {
  std::mt19937 rng(seed);
  arch::CapturePhase phase;
  phase.id = seed;
  const uint32_t pairs = 12;
  auto tile_of = [](uint32_t pair, uint32_t lane) { return pair * 2 * 61 % 1472 + lane; };  // spread pairs
  std::vector<bool> quiet(pairs);
  for (uint32_t p = 0; p < pairs; ++p) quiet[p] = rng() % 3 == 0;
  std::map<uint32_t, uint32_t> next_dest, next_source;
  auto take = [](std::map<uint32_t, uint32_t>& next, uint32_t tile, uint32_t base, uint32_t bytes) {
    uint32_t& at = next.try_emplace(tile, base).first->second;
    const uint32_t address = at;
    at += (bytes + 7) & ~7u;
    return address;
  };
  for (uint32_t p = 0; p < pairs; ++p) {
    for (uint32_t lane = 0; lane < 2; ++lane) {
      if (lane == 1 && quiet[p]) continue;
      const uint32_t s = tile_of(p, lane);
      for (int k = 0; k < 3; ++k) {
        uint32_t q = static_cast<uint32_t>(rng() % pairs);
        if (q == p || quiet[q]) continue;
        arch::Transfer t;
        t.source_tile = s;
        if (quiet[p]) {
          t.words = 128 + 2 * static_cast<uint32_t>(rng() % 400);
          t.allow_paired = true;
          const uint32_t address = std::max(take(next_dest, tile_of(q, 0), 0x64000, 4 * t.words),
                                            take(next_dest, tile_of(q, 1), 0x64000, 4 * t.words));
          next_dest[tile_of(q, 0)] = next_dest[tile_of(q, 1)] = address + ((4 * t.words + 7) & ~7u);
          t.destinations = {{tile_of(q, 0), address}, {tile_of(q, 1), address}};
        } else {
          t.words = 1 + static_cast<uint32_t>(rng() % 300);
          const uint32_t d = tile_of(q, static_cast<uint32_t>(rng() % 2));
          t.destinations = {{d, take(next_dest, d, 0x64000, 4 * t.words)}};
        }
        t.source_addresses = {take(next_source, s, 0x4c000, 4 * t.words)};
        phase.transfers.push_back(t);
      }
    }
  }
  return phase;
}

TEST(SchedulePaired, RandomMixedPhasesDeliverUnderEveryOrder) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const arch::CapturePhase phase = random_paired_phase(seed);
    for (const char* config :
         {"latency+paired", "S256+paired", "B1024+paired", "B64+paired", "automatic+paired", "S16+paired"}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " " + config);
      const ScheduledPhase s = schedule(phase, config);
      EXPECT_EQ(s.width, Width::Paired64);
      EXPECT_GE(s.horizon, s.lower_bound);
      expect_delivers(phase, s);
    }
  }
}

// The fallback placement (no PIC control on an XPIC control's event, so no row needs a
// sendpicp) must hold for paired receives too: rows encode without any sendpicp, pass the
// row check and deliver.
TEST(SchedulePaired, SingleControlPlacementNeedsNoSendpicp) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const arch::CapturePhase phase = random_paired_phase(seed);
    const PhaseProblem problem = make_problem(phase, c600(), c600_topology(), Width::Paired64);
    ASSERT_GT(problem.paired_transfers, 0u);
    for (uint32_t chunk : {16u, 256u}) {
      const Order order = stream_order(problem, chunk);
      const Placement placement = place_order(problem, order, true);
      std::vector<TilePlan> plans = make_tile_plans(problem, order, placement);
      ScheduledPhase scheduled;
      scheduled.width = Width::Paired64;
      for (TilePlan& plan : plans) {
        TileRow row = encode_tile_row(problem, order, plan);
        check_row(problem, order, plan, row);
        for (const auto& d : arch::decode_row(row.words)) EXPECT_NE(d.instruction.op, arch::Opcode::SendPicP);
        scheduled.horizon = std::max(scheduled.horizon, row.end_event);
        scheduled.rows.push_back(std::move(row));
      }
      std::sort(scheduled.rows.begin(), scheduled.rows.end(),
                [](const TileRow& a, const TileRow& b) { return a.tile < b.tile; });
      EXPECT_EQ(scheduled.horizon, static_cast<uint32_t>(placement.horizon));
      expect_delivers(phase, scheduled);
    }
  }
}

ScheduleConfig with_policy(const char* name, WidthPolicy policy) {
  ScheduleConfig config = parse_config(name);
  config.width_policy = policy;
  return config;
}

TEST(SchedulePaired, LatencyOrientedPicksPairedWhereItShortensTheHorizon) {
  const arch::CapturePhase phase = one_pair_phase(2048);
  const ScheduledPhase word = schedule(phase, "S256");
  const ScheduledPhase paired = schedule(phase, "S256+paired");
  ASSERT_LT(paired.horizon, word.horizon);
  const ScheduledPhase chosen =
      schedule_phase(phase, c600(), c600_topology(), with_policy("S256", WidthPolicy::LatencyOriented));
  EXPECT_EQ(chosen.width, Width::Paired64);
  EXPECT_EQ(chosen.horizon, paired.horizon);
  expect_delivers(phase, chosen);

  // Nothing eligible: the Word32 schedule, whatever the policy.
  arch::CapturePhase plain = phase;
  plain.transfers[0].allow_paired = false;
  for (WidthPolicy policy : {WidthPolicy::LatencyOriented, WidthPolicy::StorageFirst}) {
    const ScheduledPhase s = schedule_phase(plain, c600(), c600_topology(), with_policy("S256", policy));
    EXPECT_EQ(s.width, Width::Word32);
  }
}

ScheduledPhase fake(uint32_t horizon, std::vector<uint32_t> row_words, Width width) {
  ScheduledPhase s;
  s.width = width;
  s.horizon = horizon;
  for (uint32_t n : row_words) {
    TileRow row;
    row.words.assign(n, 0);
    s.rows.push_back(row);
  }
  return s;
}

TEST(SchedulePaired, StorageFirstComparesMaxRowBytesThenTotalThenCycles) {
  const auto word = [](uint32_t h, std::vector<uint32_t> rows) { return fake(h, std::move(rows), Width::Word32); };
  const auto pair = [](uint32_t h, std::vector<uint32_t> rows) { return fake(h, std::move(rows), Width::Paired64); };
  const WidthPolicy storage = WidthPolicy::StorageFirst;
  // Max row bytes first, even against more total bytes and more cycles.
  EXPECT_TRUE(prefer_paired(storage, word(100, {10, 2}), pair(900, {9, 9, 9})));
  EXPECT_FALSE(prefer_paired(storage, word(900, {9, 9, 9}), pair(100, {10, 2})));
  // Equal max: total bytes next.
  EXPECT_TRUE(prefer_paired(storage, word(100, {10, 9}), pair(900, {10, 2})));
  EXPECT_FALSE(prefer_paired(storage, word(900, {10, 2}), pair(100, {10, 9})));
  // Equal max and total: cycles; a full tie keeps Word32.
  EXPECT_TRUE(prefer_paired(storage, word(101, {10, 2}), pair(100, {2, 10})));
  EXPECT_FALSE(prefer_paired(storage, word(100, {10, 2}), pair(100, {10, 2})));
  // LatencyOriented looks at cycles only; ties keep Word32.
  EXPECT_TRUE(prefer_paired(WidthPolicy::LatencyOriented, word(101, {1}), pair(100, {50})));
  EXPECT_FALSE(prefer_paired(WidthPolicy::LatencyOriented, word(100, {1}), pair(100, {1})));

  // End to end: StorageFirst returns whichever schedule wins that comparison.
  for (uint32_t words : {128u, 600u, 4000u}) {
    const arch::CapturePhase phase = one_pair_phase(words);
    const ScheduledPhase w = schedule(phase, "S256");
    const ScheduledPhase p = schedule(phase, "S256+paired");
    const ScheduledPhase chosen = schedule_phase(phase, c600(), c600_topology(), with_policy("S256", storage));
    const ScheduledPhase& expected = prefer_paired(storage, w, p) ? p : w;
    EXPECT_EQ(chosen.width, expected.width) << words;
    EXPECT_EQ(chosen.horizon, expected.horizon) << words;
    expect_delivers(phase, chosen);
  }
}

}  // namespace
}  // namespace lockstep::compiler
