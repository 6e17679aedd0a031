// Paired 64-bit receives executed from rows written by hand from the spec, not by the
// project's compiler: the SDK's row form of docs/ipu21-exchange.md section 6 (sender
// issuing at shift = max(0, 1 - min pttm), early member's paired window at pttm + shift)
// and the CSR form (INCOMING_FORMAT 1/2, INCOMING_MUXPAIR = sender XOR 2).
#include <gtest/gtest.h>

#include <algorithm>

#include "arch/instruction.hpp"
#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "model/exchange_phase.hpp"
#include "support/test_support.hpp"

namespace lockstep::model {
namespace {

using arch::Instruction;
using arch::Opcode;

const arch::MachineDescription& chip() { return testing::c600_machine(); }
const arch::Topology& topology() { return testing::c600_topology(); }

constexpr uint32_t kSource = 0x60000;
constexpr uint32_t kDestination = 0x70000;
constexpr uint32_t kNeutral = 0x640;
constexpr int64_t kItems = 128;

enum class Csr { Pointer, Format, Xpic, PairedXpic };
struct Control {
  int64_t event;
  Csr kind;
  uint32_t value;
};

void push(std::vector<uint32_t>& row, const Instruction& in) { arch::encode_into(in, row); }

Instruction delay(uint32_t events) {
  Instruction in;
  in.op = Opcode::Delay;
  in.events = events;
  return in;
}

// A receive row: each control by a one-event delaypic/delayxpic on its event, delays
// between, and a final delay to `end`.
std::vector<uint32_t> control_row(std::vector<Control> controls, int64_t end) {
  std::sort(controls.begin(), controls.end(), [](const Control& a, const Control& b) { return a.event < b.event; });
  std::vector<uint32_t> row;
  int64_t t = 0;
  for (const Control& c : controls) {
    if (c.event - t > 1) push(row, delay(static_cast<uint32_t>(c.event - t - 1)));
    Instruction in;
    in.op = c.kind == Csr::Pointer || c.kind == Csr::Format ? Opcode::DelayPic : Opcode::DelayXpic;
    in.selector = c.kind == Csr::Format || c.kind == Csr::PairedXpic ? 1 : 0;
    in.value = c.value;
    push(row, in);
    t = c.event;
  }
  if (end > t) push(row, delay(static_cast<uint32_t>(end - t)));
  row.push_back(0x43a00000);  // br $m10
  return row;
}

// The sender: wait `issue` events, then one stream of kItems 64-bit items.
std::vector<uint32_t> sender_row(int64_t issue, uint32_t sctl) {
  std::vector<uint32_t> row;
  if (issue > 0) push(row, delay(static_cast<uint32_t>(issue)));
  Instruction send;
  send.op = Opcode::Send;
  send.words = 64;
  send.address = kSource / 8;
  send.sctl = sctl;
  push(row, send);
  Instruction rest;
  rest.op = Opcode::SendOff;
  rest.words = kItems - 64;
  rest.sctl = sctl;
  push(row, rest);
  row.push_back(0x43a00000);
  return row;
}

PhaseTile make_tile(uint32_t logical, std::vector<uint32_t> row) {
  PhaseTile t;
  t.logical = logical;
  t.physical = topology().physical(logical);
  t.has_row = true;
  t.row_address = 0x50000;
  t.row_words = std::move(row);
  return t;
}

// One sender and one receiving pair, with the section 6 schedule's numbers.
struct PairedCase {
  uint32_t sender, pair_primary;           // logical; the pair is (primary, primary + 1)
  uint32_t s = 0, early = 0, waiting = 0;  // physical
  int64_t pttm = 0, shift = 0, x = 0, format_event = 0, pointer_event = 0, row_end = 0;
  uint32_t dir = 0;
  uint32_t logical(uint32_t physical) const { return topology().logical(physical); }

  PairedCase(uint32_t sender_logical, uint32_t primary) : sender(sender_logical), pair_primary(primary) {
    const auto& topo = topology();
    s = topo.physical(sender);
    const uint32_t a = topo.physical(primary), b = topo.physical(primary + 1);
    early = topo.time_to_mux(s, a) <= topo.time_to_mux(s, b) ? a : b;
    waiting = early ^ 2u;
    pttm = topo.paired_time_to_mux(s, early);
    shift = std::max<int64_t>(0, 1 - pttm);  // the event the send starts
    x = pttm + shift;                        // the early member's paired window opens
    format_event = x + 51 + 2 * topo.row(early);
    pointer_event = format_event + 2;
    row_end = format_event + kItems + 7;
    dir = static_cast<uint32_t>(topo.direction(s, early));
  }

  // Section 6's receiver rows: the early member alone opens and closes the paired mux.
  std::vector<uint32_t> row_form(bool is_early, uint32_t format_value) const {
    std::vector<Control> controls = {{format_event, Csr::Format, format_value},
                                     {pointer_event, Csr::Pointer, kDestination / 4},
                                     {format_event + kItems, Csr::Format, 0}};
    if (is_early) {
      controls.push_back({x, Csr::PairedXpic, s ^ (early & 2u)});
      controls.push_back({x + kItems, Csr::PairedXpic, kNeutral});
    }
    return control_row(controls, row_end);
  }

  std::vector<PhaseTile> tiles(int64_t issue, std::vector<uint32_t> early_row,
                               std::vector<uint32_t> waiting_row) const {
    return {make_tile(sender, sender_row(issue, dir | 4u)), make_tile(logical(early), std::move(early_row)),
            make_tile(logical(waiting), std::move(waiting_row))};
  }
};

// Every item lands on both members, in order, the first on the pointer event.
void expect_lands_on_both(const PairedCase& c, const PhaseOutcome& out) {
  for (const auto& h : out.hazards) ADD_FAILURE() << h.detail << " [" << h.instruction << "]";
  for (uint32_t member : {1u, 2u}) {
    uint32_t bytes = 0;
    for (const WriteRun& w : out.writes) {
      if (w.receiver != member) continue;
      EXPECT_EQ(w.sender, 0u);
      EXPECT_EQ(w.item_bytes, 8u);
      EXPECT_EQ(w.address, kDestination + bytes);
      EXPECT_EQ(w.source_address, kSource + bytes);
      EXPECT_EQ(w.first_write_event, c.pointer_event + bytes / 8) << "member " << member;
      bytes += w.bytes;
    }
    EXPECT_EQ(bytes, kItems * 8) << "member " << member;
    EXPECT_EQ(out.tile_horizon[member], c.row_end);
  }
}

class SdkPairedSchedule : public ::testing::TestWithParam<std::pair<uint32_t, uint32_t>> {};

TEST_P(SdkPairedSchedule, EveryItemLandsOnBothMembersFromThePointerEvent) {
  const PairedCase c(GetParam().first, GetParam().second);
  const auto tiles = c.tiles(c.shift, c.row_form(true, c.dir), c.row_form(false, c.dir));
  expect_lands_on_both(c, execute_phase(chip(), topology(), tiles));
}

// The old compiler's mirror error: a sender issued one event early (possible where the
// shift is positive) has its first item pass before the window opens, so the early member
// takes only part of the message.
TEST(SdkPairedScheduleEarly, ASenderOneEventEarlyLosesItsFirstItem) {
  for (const auto& [sender, primary] : {std::pair{0u, 2u}, std::pair{1300u, 16u}}) {
    const PairedCase c(sender, primary);
    ASSERT_GT(c.shift, 0);
    const auto tiles = c.tiles(c.shift - 1, c.row_form(true, c.dir), c.row_form(false, c.dir));
    const PhaseOutcome out = execute_phase(chip(), topology(), tiles);
    ASSERT_FALSE(out.hazards.empty());
    EXPECT_EQ(out.hazards.front().kind, HazardClass::StreamConflict) << out.hazards.front().detail;
  }
}

TEST_P(SdkPairedSchedule, ARowFormatMustCarryTheRouteDirection) {
  const PairedCase c(GetParam().first, GetParam().second);
  const auto tiles = c.tiles(c.shift, c.row_form(true, 3 - c.dir), c.row_form(false, c.dir));
  const PhaseOutcome out = execute_phase(chip(), topology(), tiles);
  ASSERT_EQ(out.hazards.size(), 1u);
  EXPECT_EQ(out.hazards[0].kind, HazardClass::Paired);
  EXPECT_NE(out.hazards[0].detail.find("route direction dir(s, d) = " + std::to_string(c.dir)), std::string::npos)
      << out.hazards[0].detail;
}

// The CSR form: the halves are named by INCOMING_FORMAT before the row (1 early, 2
// waiting) and the early member's paired mux by INCOMING_MUXPAIR = sender XOR 2; the rows
// only set the pointer (and the early one closes its paired mux).
std::vector<PhaseTile> csr_form(const PairedCase& c, uint32_t early_format, uint32_t waiting_format) {
  const std::vector<Control> pointer = {{c.pointer_event, Csr::Pointer, kDestination / 4}};
  std::vector<Control> early_controls = pointer;
  early_controls.push_back({c.x + kItems, Csr::PairedXpic, kNeutral});
  auto tiles = c.tiles(c.shift, control_row(early_controls, c.row_end), control_row(pointer, c.row_end));
  tiles[1].incoming_format = early_format;
  tiles[1].incoming_muxpair = c.s ^ 2u;
  tiles[2].incoming_format = waiting_format;
  return tiles;
}

TEST_P(SdkPairedSchedule, CsrFormWithEarlyAndWaitingHalvesLandsOnBoth) {
  const PairedCase c(GetParam().first, GetParam().second);
  expect_lands_on_both(c, execute_phase(chip(), topology(), csr_form(c, 1, 2)));
}

TEST_P(SdkPairedSchedule, CsrFormWithSwappedHalvesIsAPairedHazard) {
  const PairedCase c(GetParam().first, GetParam().second);
  const PhaseOutcome out = execute_phase(chip(), topology(), csr_form(c, 2, 1));
  ASSERT_EQ(out.hazards.size(), 2u);
  for (const auto& h : out.hazards) {
    EXPECT_EQ(h.kind, HazardClass::Paired);
    EXPECT_NE(h.detail.find("INCOMING_FORMAT"), std::string::npos) << h.detail;
    EXPECT_EQ(h.instruction, "(none: CSR state before the row)");
  }
}

// Senders and pairs over both fabric directions and both signs of pttm.
INSTANTIATE_TEST_SUITE_P(Pairs, SdkPairedSchedule,
                         ::testing::Values(std::pair{0u, 2u}, std::pair{736u, 100u}, std::pair{500u, 1000u},
                                           std::pair{1300u, 16u}, std::pair{777u, 0u}),
                         [](const auto& info) {
                           return "sender" + std::to_string(info.param.first) + "_pair" +
                                  std::to_string(info.param.second);
                         });

}  // namespace
}  // namespace lockstep::model
