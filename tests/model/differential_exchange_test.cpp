// Differential test of the phase executor: model::execute_phase against the independent,
// event-by-event reference interpreter of tests/model/reference_exchange.hpp, on phases the
// project's own generators and compiler produce (every synthetic family, both widths). First
// the interpreter itself is checked against the spec's section 9 vectors and a section 6
// paired transfer built by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "arch/instruction.hpp"
#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "compiler/compile.hpp"
#include "compiler/phase_schedule.hpp"
#include "formats/capture.hpp"
#include "model/exchange_phase.hpp"
#include "reference_exchange.hpp"
#include "support/test_support.hpp"
#include "workload/synth.hpp"

namespace lockstep::reference_exchange {
namespace {

using arch::Opcode;

const arch::MachineDescription& chip() { return testing::c600_machine(); }
const arch::Topology& topology() { return testing::c600_topology(); }

constexpr uint32_t kSource = 0x60000;       // sender data
constexpr uint32_t kDestination = 0x70000;  // receiver data

// ---- Section 9: the SDK point-to-point vectors -------------------------------------------

struct Vector {
  const char* name;
  uint32_t sender, receiver;                            // logical
  std::vector<uint32_t> sender_words, receiver_vector;  // receiver_vector[0] is the patch index
  uint32_t words;
  int64_t first_write, last_write, sender_end, receiver_end;
};

TEST(ReferenceExchange, Section9VectorsLandEveryWordAtTheTracedEvents) {
  // clang-format off
  const std::vector<Vector> vectors = {
      {"A", 0, 1286, {0x41800003, 0x40a00086, 0x78400001, 0x43a00000},
       {1, 0x41800003, 0x641c0000, 0x64008640, 0x61800000, 0x40a00007, 0x43a00000},
       3, 165, 167, 138, 173},
      {"B", 736, 100, {0x41800003, 0x40a0003e, 0x7e600002, 0x43a00000},
       {1, 0x41800003, 0x641c0000, 0x61d00000, 0x64000640, 0x40a00038, 0x43a00000},
       52, 173, 224, 115, 230},
      {"C", 1286, 1471, {0x41800003, 0x40a0007d, 0x7fe00002, 0x70000002, 0x43a00000},
       {1, 0x41800003, 0x641c0000, 0x61980000, 0x64030640, 0x40a00038, 0x43a00000},
       65, 165, 229, 191, 235},
      {"D", 32, 0, {0x41800003, 0x40a0006c, 0x7fe00001, 0x766fc001, 0x43a00000},
       {1, 0x41800003, 0x641c0000, 0x61980000, 0x67ffc640, 0x40a00038, 0x43a00000},
       4148, 165, 4312, 4257, 4318},
  };
  // clang-format on
  for (const Vector& v : vectors) {
    SCOPED_TRACE(v.name);
    // The executable receiver row drops the patch index; its first delayxpic (executable
    // word 1) gets the sender's physical id. The sender's send (word 2) gets kSource.
    std::vector<uint32_t> receiver_row(v.receiver_vector.begin() + 1, v.receiver_vector.end());
    receiver_row[1] = (receiver_row[1] & ~0x1fffu) | topology().physical(v.sender);
    std::vector<uint32_t> sender_row = v.sender_words;
    sender_row[2] |= (kSource / 4) << 3;
    const std::vector<Tile> tiles = {{v.sender, sender_row, 0}, {v.receiver, receiver_row, kDestination}};

    const PhaseResult r = run_phase(topology(), tiles);
    EXPECT_EQ(r.row_end, (std::vector<int64_t>{v.sender_end, v.receiver_end}));
    EXPECT_EQ(r.words_without_pointer, 0u);
    ASSERT_EQ(r.words.size(), v.words);
    for (uint32_t k = 0; k < v.words; ++k) {
      const WrittenWord expected{v.receiver, kDestination + 4 * k, v.sender, kSource + 4 * k, v.first_write + k};
      ASSERT_EQ(r.words[k], expected) << "word " << k;
    }
    EXPECT_EQ(r.words.back().event, v.last_write);
    EXPECT_EQ(v.receiver_end, v.last_write + 6);
  }
}

// ---- Section 5: the row walk's stream and controls ---------------------------------------

TEST(ReferenceExchange, RowWalkFollowsTheSection5Table) {
  std::vector<uint32_t> row;
  auto add = [&](const arch::Instruction& in) { arch::encode_into(in, row); };
  add({.op = Opcode::Delay, .events = 1});                               // [1]
  add({.op = Opcode::Send, .words = 4, .address = 0x18000, .sctl = 1});  // leave 2..5 [5]
  arch::Instruction restart{.op = Opcode::SendPicP, .words = 2, .address = 0x18100, .sctl = 2};
  restart.pic_selector = 1;  // ps 1: the PIC value is the format
  restart.xpic_paired = true;
  restart.xpic = 5;
  restart.pic = 3;
  add(restart);                                                            // leave 6, 7 [7]
  add({.op = Opcode::SendPic, .words = 1, .selector = 2, .value = 0x40});  // leave 8 [8]
  add({.op = Opcode::Delay, .events = 1});                                 // [9]
  arch::Instruction quiet{.op = Opcode::SendPicP, .words = 3, .address = 0x1234, .sctl = 0};
  quiet.xpic = kNeutral;
  quiet.pic = 9;
  add(quiet);                                           // waits [12]
  add({.op = Opcode::SendOff, .words = 1, .sctl = 2});  // leave 13 [13]
  add({.op = Opcode::Return});

  const RowTrace trace = trace_row(row);
  std::vector<std::tuple<int64_t, uint32_t, uint32_t>> items;
  for (const auto& item : trace.items)
    if (item) items.emplace_back(item->leave, item->address, item->sctl);
  const std::vector<std::tuple<int64_t, uint32_t, uint32_t>> expected_items = {
      {2, 0x18000, 1}, {3, 0x18001, 1}, {4, 0x18002, 1}, {5, 0x18003, 1},
      {6, 0x18100, 2}, {7, 0x18101, 2}, {8, 0x18102, 2},  // sendpicp restarted, sendpic continues
      {13, 0x18103, 2}};                                  // a sendpicp without direction leaves the stream alone
  EXPECT_EQ(items, expected_items);
  EXPECT_EQ(trace.paired_xpic, (Controls{{6, 5}}));
  EXPECT_EQ(trace.format, (Controls{{6, 3}}));
  EXPECT_EQ(trace.pointer, (Controls{{8, 0x40}, {10, 9}}));
  EXPECT_EQ(trace.xpic, (Controls{{10, kNeutral}}));
  EXPECT_EQ(trace.row_end, 13);
}

// ---- Section 6: one paired transfer built by hand ----------------------------------------

struct Ctl {
  int64_t event;
  Opcode op;  // DelayPic or DelayXpic
  uint32_t selector, value;
};

// A receive-only row: the controls at their events (each on a delay*pic's terminal event),
// then a delay to `end`.
std::vector<uint32_t> controls_row(std::vector<Ctl> controls, int64_t end) {
  std::sort(controls.begin(), controls.end(), [](const Ctl& a, const Ctl& b) { return a.event < b.event; });
  std::vector<uint32_t> row;
  int64_t t = 0;
  for (const Ctl& c : controls) {
    const int64_t most = c.op == Opcode::DelayPic ? 128 : 4096;
    const int64_t gap = c.event - t;
    EXPECT_GE(gap, 1);
    if (gap > most) arch::encode_into({.op = Opcode::Delay, .events = uint32_t(gap - most)}, row);
    arch::encode_into({.op = c.op, .events = uint32_t(std::min(gap, most)), .selector = c.selector, .value = c.value},
                      row);
    t = c.event;
  }
  if (end > t) arch::encode_into({.op = Opcode::Delay, .events = uint32_t(end - t)}, row);
  arch::encode_into({.op = Opcode::Return}, row);
  return row;
}

TEST(ReferenceExchange, Section6PairedTransferLandsEveryItemOnBothMembers) {
  const auto& topo = topology();
  const uint32_t sender = 0, a = 2, b = 3;  // logical: L2 and L3 are a physical pair
  const uint32_t s = topo.physical(sender), pa = topo.physical(a), pb = topo.physical(b);
  ASSERT_EQ(pb, pa ^ 2u);
  const uint32_t early = topo.time_to_mux(s, pa) <= topo.time_to_mux(s, pb) ? pa : pb;
  const int64_t pttm = topo.paired_time_to_mux(s, early);
  ASSERT_EQ(pttm, topo.paired_time_to_mux(s, early ^ 2u));
  const uint32_t dir = uint32_t(topo.direction(s, pa));
  ASSERT_EQ(dir, uint32_t(topo.direction(s, pb)));
  const uint32_t items = 128;
  const int64_t shift = std::max<int64_t>(0, 1 - pttm);  // issue event: max(0, 1 - min pttm)
  const int64_t x = pttm + shift;                        // the early member's paired source event
  const int64_t r = arch::Topology::row(pa);
  const int64_t f = x + 51 + 2 * r;  // format event, both members (same physical row)

  std::vector<uint32_t> sender_row;
  if (shift > 0) arch::encode_into({.op = Opcode::Delay, .events = uint32_t(shift)}, sender_row);
  arch::encode_into({.op = Opcode::Send, .words = 64, .address = kSource / 8, .sctl = dir | 4u}, sender_row);
  arch::encode_into({.op = Opcode::SendOff, .words = items - 64, .sctl = dir | 4u}, sender_row);
  arch::encode_into({.op = Opcode::Return}, sender_row);

  auto member_row = [&](uint32_t member) {
    std::vector<Ctl> c = {{f, Opcode::DelayPic, 1, uint32_t(topo.direction(s, member))},
                          {f + 2, Opcode::DelayPic, 0, kDestination / 4},
                          {f + items, Opcode::DelayPic, 1, 0}};
    if (member == early) {
      c.push_back({x, Opcode::DelayXpic, 1, s ^ (early & 2u)});
      c.push_back({x + items, Opcode::DelayXpic, 1, kNeutral});
    }
    return controls_row(c, f + items + 7);
  };
  const std::vector<Tile> tiles = {{sender, sender_row, 0}, {a, member_row(pa), 0}, {b, member_row(pb), 0}};

  const PhaseResult out = run_phase(topo, tiles);
  EXPECT_EQ(out.row_end, (std::vector<int64_t>{shift + items, f + items + 7, f + items + 7}));
  EXPECT_EQ(out.words_without_pointer, 0u);
  std::vector<WrittenWord> expected;
  for (const uint32_t member : {a, b}) {
    for (uint32_t w = 0; w < 2 * items; ++w) {
      expected.push_back({member, kDestination + 4 * w, sender, kSource + 4 * w, f + 2 + w / 2});
    }
  }
  std::vector<WrittenWord> got = out.words;
  std::sort(got.begin(), got.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(got, expected);
  EXPECT_EQ(expected.front().event, f + 2);  // the first write is on the pointer event
}

// ---- The differential test ----------------------------------------------------------------

using Key = std::pair<uint32_t, uint32_t>;  // (receiver, destination address)

struct Tally {
  uint32_t phases = 0;
  uint32_t phases_with_wide_sends = 0;  // some row holds a send with sctl bit 2
  uint64_t words = 0, mismatches = 0, row_end_mismatches = 0, wide_items = 0, model_hazards = 0;
  std::vector<std::string> examples;  // the first few differences, for the failure message
};

// Model writes as words: word i of a run has source + 4i, address + 4i, and the write event
// first_write_event + i / (item_bytes / 4).
std::vector<WrittenWord> model_words(const model::PhaseOutcome& outcome, const std::vector<Tile>& tiles) {
  std::vector<WrittenWord> words;
  for (const model::WriteRun& w : outcome.writes) {
    for (uint32_t i = 0; i < w.bytes / 4; ++i) {
      words.push_back({tiles[w.receiver].logical, w.address + 4 * i, tiles[w.sender].logical, w.source_address + 4 * i,
                       w.first_write_event + i / (w.item_bytes / 4)});
    }
  }
  return words;
}

// The distinct (receiver, address) of words sorted by them.
std::vector<Key> keys_of(const std::vector<WrittenWord>& sorted) {
  std::vector<Key> keys;
  for (const WrittenWord& w : sorted)
    if (keys.empty() || keys.back() != Key{w.receiver, w.address}) keys.emplace_back(w.receiver, w.address);
  return keys;
}

std::vector<Key> union_of(const std::vector<Key>& a, const std::vector<Key>& b) {
  std::vector<Key> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// "(tile 5 0x64000 at 180)...": what one side wrote at one (receiver, address).
std::string landed_at(const std::vector<WrittenWord>& sorted, Key key) {
  std::ostringstream out;
  for (const WrittenWord& w : sorted)
    if (Key{w.receiver, w.address} == key)
      out << "(tile " << w.sender << " 0x" << std::hex << w.source << std::dec << " at " << w.event << ")";
  return out.str().empty() ? "nothing" : out.str();
}

// Every word: model and reference must agree on (receiver, address) -> (sender, source,
// write event), duplicates included.
void compare_words(std::vector<WrittenWord> model, std::vector<WrittenWord> reference, const std::string& where,
                   Tally& tally) {
  std::sort(model.begin(), model.end());
  std::sort(reference.begin(), reference.end());
  std::vector<WrittenWord> only_model, only_reference;
  std::set_difference(model.begin(), model.end(), reference.begin(), reference.end(), std::back_inserter(only_model));
  std::set_difference(reference.begin(), reference.end(), model.begin(), model.end(),
                      std::back_inserter(only_reference));
  tally.words += model.size() + only_reference.size();  // words of either side
  const std::vector<Key> differing = union_of(keys_of(only_model), keys_of(only_reference));
  tally.mismatches += differing.size();
  for (size_t i = 0; i < differing.size() && tally.examples.size() < 8; ++i) {
    std::ostringstream out;
    out << where << ": tile " << differing[i].first << " address 0x" << std::hex << differing[i].second << std::dec
        << ": model " << landed_at(only_model, differing[i]) << ", reference "
        << landed_at(only_reference, differing[i]) << " (only the differing words)";
    tally.examples.push_back(out.str());
  }
}

void compare_phase(const compiler::ScheduledPhase& scheduled, const std::string& where, Tally& tally) {
  std::vector<model::PhaseTile> model_tiles;
  std::vector<Tile> tiles;
  for (const compiler::TileRow& row : scheduled.rows) {  // iteration 0: the rows as encoded
    model::PhaseTile t;
    t.logical = row.tile;
    t.physical = topology().physical(row.tile);
    t.has_row = true;
    t.row_address = arch::kTableReservedBegin;  // where compiled rows live, apart from data
    t.row_words = row.words;
    t.incoming_base = row.incoming_base;
    model_tiles.push_back(std::move(t));
    tiles.push_back({row.tile, row.words, row.incoming_base});
  }
  const model::PhaseOutcome outcome = model::execute_phase(chip(), topology(), model_tiles);
  const PhaseResult reference = run_phase(topology(), tiles);
  ++tally.phases;
  tally.model_hazards += outcome.hazards.size();
  EXPECT_EQ(reference.words_without_pointer, 0u) << where;
  uint64_t wide_items = 0;  // items of sends with sctl bit 2
  for (const RowTrace& trace : reference.traces)
    for (const auto& item : trace.items) wide_items += item && (item->sctl & 4u) != 0;
  tally.wide_items += wide_items;
  tally.phases_with_wide_sends += wide_items > 0;
  compare_words(model_words(outcome, tiles), reference.words, where, tally);
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (outcome.tile_horizon[i] == reference.row_end[i]) continue;
    ++tally.row_end_mismatches;
    if (tally.examples.size() < 8) {
      tally.examples.push_back(where + ": tile " + std::to_string(tiles[i].logical) + " row end: model " +
                               std::to_string(outcome.tile_horizon[i]) + ", reference " +
                               std::to_string(reference.row_end[i]));
    }
  }
}

// Synth makes complete receiving pairs only in its multicast family: this phase sends most
// transfers to physical pairs (logical 2k and 2k + 1, one shared address), eligible for
// Paired64, and the rest as Word32, so Paired64 phases also mix widths. Senders are even
// tiles of the first half (their partners take no part), receivers pairs of the second.
arch::CapturePhase pair_phase(uint32_t seed, uint32_t tiles) {
  std::mt19937 rng(seed);
  arch::CapturePhase phase;
  phase.id = seed;
  std::vector<uint32_t> next_source(tiles, 0x60000), next_destination(tiles, 0xa0000);
  for (uint32_t i = 0; i < 24; ++i) {
    arch::Transfer t;
    t.source_tile = 2 * uint32_t(rng() % (tiles / 4));
    t.words = 128 + 2 * uint32_t(rng() % 192);
    t.allow_paired = rng() % 4 != 0;
    t.source_addresses = {next_source[t.source_tile]};
    next_source[t.source_tile] += 4 * t.words;
    for (uint32_t k = 1 + uint32_t(rng() % 3); k > 0; --k) {
      // A physical pair: a and b = a + 1.
      const uint32_t a = tiles / 2 + 2 * uint32_t(rng() % (tiles / 4)), b = a + 1;
      if (std::any_of(t.destinations.begin(), t.destinations.end(), [&](const auto& d) { return d.tile == a; }))
        continue;
      const uint32_t address = std::max(next_destination[a], next_destination[b]);
      t.destinations.push_back({a, address});
      t.destinations.push_back({b, address});
      next_destination[a] = next_destination[b] = address + 4 * t.words;
    }
    phase.transfers.push_back(std::move(t));
  }
  return phase;
}

using Tallies = std::map<compiler::Width, Tally>;

// Schedules one phase under one configuration and compares; tallied under the width the
// schedule got ("+paired" falls back to Word32 where no transfer is eligible).
void schedule_and_compare(const arch::CapturePhase& phase, const std::string& config, const std::string& where,
                          Tallies& tallies) {
  const compiler::ScheduledPhase scheduled =
      compiler::schedule_phase(phase, chip(), topology(), compiler::parse_config(config));
  Tally& tally = tallies[scheduled.width];
  compare_phase(scheduled, where + " " + config, tally);
}

TEST(DifferentialExchange, ModelMatchesTheReferenceOnCompiledSyntheticPhases) {
  Tallies tallies;
  for (const std::string& family : workload::synth_family_names()) {
    workload::SynthOptions synth;
    synth.family = workload::parse_synth_family(family);
    synth.tiles = 64;
    synth.seed = 7;
    synth.phases = synth.family == workload::SynthFamily::Transformer ? 3 : 2;
    const arch::Capture capture = workload::synthesize_capture(synth, chip());
    // Word32 schedules of two policies; Paired64 ones where the family has complete pairs.
    for (const std::string config : {"latency", "B256+paired"}) {
      for (const arch::CapturePhase& phase : capture.phases)
        schedule_and_compare(phase, config, family + " phase " + std::to_string(phase.id), tallies);
    }
  }
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const std::string config = seed % 2 ? "S128+paired" : "latency+paired";
    schedule_and_compare(pair_phase(seed, 64), config, "pairs seed " + std::to_string(seed), tallies);
  }
  for (const auto& [width, tally] : tallies) {
    const char* name = width == compiler::Width::Paired64 ? "Paired64" : "Word32";
    std::cout << "differential: " << name << " phases=" << tally.phases << " words=" << tally.words
              << " mismatches=" << tally.mismatches << " row_end_mismatches=" << tally.row_end_mismatches
              << " wide_items=" << tally.wide_items << " model_hazards=" << tally.model_hazards << "\n";
    std::string examples;
    for (const std::string& e : tally.examples) examples += "\n  " + e;
    EXPECT_GT(tally.words, 0u) << name;
    EXPECT_EQ(tally.mismatches, 0u) << name << examples;
    EXPECT_EQ(tally.row_end_mismatches, 0u) << name << examples;
  }
  // Otherwise the test proves nothing for Paired64.
  ASSERT_EQ(tallies.count(compiler::Width::Paired64), 1u);
  EXPECT_GT(tallies[compiler::Width::Paired64].phases_with_wide_sends, 0u);
  EXPECT_GT(tallies[compiler::Width::Paired64].wide_items, 0u);
}

}  // namespace
}  // namespace lockstep::reference_exchange
