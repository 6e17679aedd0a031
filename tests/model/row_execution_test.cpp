// Row execution without SystemC: schedules of single rows, then whole phases, checked
// against the worked examples of docs/ipu21-exchange.md section 9 and hand-made rows.
#include <gtest/gtest.h>

#include "arch/instruction.hpp"
#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "model/exchange_phase.hpp"
#include "model/row_schedule.hpp"
#include "support/test_support.hpp"

namespace lockstep::model {
namespace {

using arch::Instruction;
using arch::Opcode;

const arch::MachineDescription& chip() { return testing::c600_machine(); }
const arch::Topology& topology() { return testing::c600_topology(); }

constexpr uint32_t kSource = 0x60000;       // sender data, item address 0x18000
constexpr uint32_t kDestination = 0x70000;  // receiver INCOMING_BASE

// Section 9 rows: the receiver vector without its leading patch index, its first
// delayxpic given the sender's physical id; the sender's send address set to kSource.
std::vector<uint32_t> receiver_row(std::vector<uint32_t> words, uint32_t sender_physical) {
  words[1] = (words[1] & ~0x1fffu) | sender_physical;
  return words;
}
std::vector<uint32_t> sender_row(std::vector<uint32_t> words) {
  words[2] |= (kSource / 4) << 3;
  return words;
}

PhaseTile make_tile(uint32_t logical, std::vector<uint32_t> row, uint32_t base = 0) {
  PhaseTile t;
  t.logical = logical;
  t.physical = topology().physical(logical);
  t.has_row = true;
  t.row_address = 0x50000;
  t.row_words = std::move(row);
  t.incoming_base = base;
  return t;
}

struct Vector {
  const char* name;
  uint32_t sender, receiver;  // logical
  std::vector<uint32_t> sender_words, receiver_words;
  uint32_t words;
  int64_t first_write, last_write, receiver_end;
};

class SdkVectors : public ::testing::TestWithParam<Vector> {};

TEST_P(SdkVectors, EveryWordLandsOnceInOrderAtTheTracedEvents) {
  const Vector& v = GetParam();
  std::vector<PhaseTile> tiles{
      make_tile(v.sender, sender_row(v.sender_words)),
      make_tile(v.receiver, receiver_row(v.receiver_words, topology().physical(v.sender)), kDestination)};
  const PhaseOutcome out = execute_phase(chip(), topology(), tiles);
  for (const auto& h : out.hazards) ADD_FAILURE() << h.detail << " [" << h.instruction << "]";
  // One write run per send-like instruction (C and D: send + sendoff), back to back.
  ASSERT_FALSE(out.writes.empty());
  uint32_t bytes = 0;
  for (const WriteRun& w : out.writes) {
    EXPECT_EQ(w.receiver, 1u);
    EXPECT_EQ(w.address, kDestination + bytes);
    EXPECT_EQ(w.source_address, kSource + bytes);
    EXPECT_EQ(w.first_write_event, v.first_write + bytes / 4);
    bytes += w.bytes;
  }
  EXPECT_EQ(bytes, v.words * 4);
  EXPECT_EQ(v.first_write + v.words - 1, v.last_write);
  EXPECT_EQ(out.tile_horizon[1], v.receiver_end);
  EXPECT_EQ(out.tile_horizon[1], v.last_write + 6);
  EXPECT_EQ(out.horizon, std::max(out.tile_horizon[0], out.tile_horizon[1]));
}

INSTANTIATE_TEST_SUITE_P(
    Section9, SdkVectors,
    ::testing::Values(Vector{"A",
                             0,
                             1286,
                             {0x41800003, 0x40a00086, 0x78400001, 0x43a00000},
                             {0x41800003, 0x641c0000, 0x64008640, 0x61800000, 0x40a00007, 0x43a00000},
                             3,
                             165,
                             167,
                             173},
                      Vector{"B",
                             736,
                             100,
                             {0x41800003, 0x40a0003e, 0x7e600002, 0x43a00000},
                             {0x41800003, 0x641c0000, 0x61d00000, 0x64000640, 0x40a00038, 0x43a00000},
                             52,
                             173,
                             224,
                             230},
                      Vector{"C",
                             1286,
                             1471,
                             {0x41800003, 0x40a0007d, 0x7fe00002, 0x70000002, 0x43a00000},
                             {0x41800003, 0x641c0000, 0x61980000, 0x64030640, 0x40a00038, 0x43a00000},
                             65,
                             165,
                             229,
                             235},
                      Vector{"D",
                             32,
                             0,
                             {0x41800003, 0x40a0006c, 0x7fe00001, 0x766fc001, 0x43a00000},
                             {0x41800003, 0x641c0000, 0x61980000, 0x67ffc640, 0x40a00038, 0x43a00000},
                             4148,
                             165,
                             4312,
                             4318}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(RowSchedule, SenderVectorAGivesOneRunAtTheTracedEvents) {
  const RowSchedule s = schedule_row(std::vector<uint32_t>{0x41800003, 0x40a00086, 0x784c0001, 0x43a00000});
  EXPECT_TRUE(s.issues.empty());
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_EQ(s.runs[0].issue_event, 135);
  EXPECT_EQ(s.runs[0].first_event, 136);
  EXPECT_EQ(s.runs[0].items, 3u);
  EXPECT_EQ(s.runs[0].byte_address(), 0x60000u);
  EXPECT_EQ(s.horizon, 138);
  EXPECT_EQ(s.row_bytes, 16u);
}

TEST(RowSchedule, ControlsTakeEffectAtTheirTerminalEventOrAtTPlusOne) {
  std::vector<uint32_t> row;
  arch::encode_into({.op = Opcode::DelayXpic, .events = 10, .selector = 0, .value = 5}, row);
  arch::encode_into({.op = Opcode::Send, .words = 4, .address = 0x18000, .sctl = 1}, row);
  arch::encode_into({.op = Opcode::SendPic, .words = 2, .selector = 2, .value = 0x100}, row);
  Instruction p{.op = Opcode::SendPicP, .words = 3, .address = 0x18100, .sctl = 2};
  p.pic = 0x200;
  p.xpic = 0x640;
  arch::encode_into(p, row);  // row index 3: odd, so pad first
  row.insert(row.begin() + 3, arch::encode({.op = Opcode::Delay, .events = 1})[0]);
  arch::encode_into({.op = Opcode::Return}, row);
  const RowSchedule s = schedule_row(row);
  ASSERT_TRUE(s.issues.empty()) << s.issues[0].detail;
  ASSERT_EQ(s.controls.size(), 4u);
  EXPECT_EQ(s.controls[0].event, 10);  // delayxpic: terminal event
  EXPECT_EQ(s.controls[1].event, 15);  // sendpic issued at 14: t + 1
  EXPECT_EQ(s.controls[1].kind, ControlKind::PicPointer);
  EXPECT_EQ(s.controls[2].event, 18);  // sendpicp issued at 17: both at t + 1
  EXPECT_EQ(s.controls[3].event, 18);
  ASSERT_EQ(s.runs.size(), 3u);
  EXPECT_EQ(s.runs[1].item_address, 0x18004u);  // sendpic continues the stream
  EXPECT_EQ(s.runs[1].message, s.runs[0].message);
  EXPECT_EQ(s.runs[2].item_address, 0x18100u);  // sendpicp restarts it
  EXPECT_NE(s.runs[2].message, s.runs[0].message);
  EXPECT_EQ(s.horizon, 20);
}

TEST(RowSchedule, SendoffWithoutStreamAndUnknownWordsAreEncodingIssues) {
  std::vector<uint32_t> row;
  arch::encode_into({.op = Opcode::SendOff, .words = 2, .sctl = 1}, row);
  arch::encode_into({.op = Opcode::Return}, row);
  EXPECT_EQ(schedule_row(row).issues.size(), 1u);
  const RowSchedule bad = schedule_row(std::vector<uint32_t>{0x00000001, 0x43a00000});
  ASSERT_EQ(bad.issues.size(), 1u);
  EXPECT_EQ(bad.issues[0].byte_offset, 0u);
  EXPECT_FALSE(schedule_row(std::vector<uint32_t>{0x40a00001}).returned);
}

// Supervisor words decode, but never inside a row: hazard 11 naming the instruction, and
// the row stops there (it may branch away).
TEST(RowSchedule, SupervisorWordsInARowAreEncodingIssues) {
  std::vector<uint32_t> row;
  arch::encode_into({.op = Opcode::Delay, .events = 5}, row);
  arch::encode_into({.op = Opcode::SetZi, .reg = 8, .immediate = 0x70000}, row);
  arch::encode_into({.op = Opcode::Delay, .events = 5}, row);
  arch::encode_into({.op = Opcode::Return}, row);
  const RowSchedule s = schedule_row(row);
  ASSERT_EQ(s.issues.size(), 1u);
  EXPECT_EQ(s.issues[0].byte_offset, 4u);
  EXPECT_EQ(s.issues[0].event, 5);
  EXPECT_EQ(s.issues[0].detail, "setzi is not an exchange row instruction");
  ASSERT_EQ(s.issues[0].instruction, 1u);
  EXPECT_EQ(s.instructions[1].op, Opcode::SetZi);
  EXPECT_EQ(arch::describe(instruction_at(row, s.instructions[1])), "setzi reg=$m8 immediate=0x70000");
  EXPECT_FALSE(s.returned);
  EXPECT_EQ(s.horizon, 5);

  const std::vector<PhaseTile> tiles{make_tile(0, {0x438080a4, 0x43a00000})};
  const PhaseOutcome out = execute_phase(chip(), topology(), tiles);
  ASSERT_FALSE(out.hazards.empty());
  EXPECT_EQ(out.hazards[0].kind, HazardClass::Encoding);
  EXPECT_EQ(out.hazards[0].instruction, "put csr=0xa4 reg=$m8");
  EXPECT_EQ(out.hazards[0].detail, "put is not an exchange row instruction");
}

// Sender L0 multicasts (sctl 3) to L1 and L1286 at once; each receiver opens its mux at
// its own arrival event t + 1 + ttm and points at its own destination.
TEST(Phase, MulticastLandsAtEveryReceiver) {
  const uint32_t s = topology().physical(0);
  const std::vector<uint32_t> receivers{1, 1286};
  int64_t min_ttm = 0;
  for (uint32_t r : receivers) min_ttm = std::min<int64_t>(min_ttm, topology().time_to_mux(s, topology().physical(r)));
  const int64_t issue = -min_ttm;
  std::vector<uint32_t> srow;
  arch::encode_into({.op = Opcode::Delay, .events = static_cast<uint32_t>(issue)}, srow);
  arch::encode_into({.op = Opcode::Send, .words = 8, .address = kSource / 4, .sctl = 3}, srow);
  arch::encode_into({.op = Opcode::Return}, srow);
  std::vector<PhaseTile> tiles{make_tile(0, srow)};
  for (uint32_t r : receivers) {
    const uint32_t d = topology().physical(r);
    const int64_t m0 = issue + 1 + topology().time_to_mux(s, d);
    const int64_t w = topology().write_delay(d);
    std::vector<uint32_t> row;
    arch::encode_into({.op = Opcode::DelayXpic, .events = static_cast<uint32_t>(m0), .value = s}, row);
    arch::encode_into({.op = Opcode::DelayXpic, .events = 8, .value = 0x640}, row);
    arch::encode_into({.op = Opcode::DelayPic, .events = static_cast<uint32_t>(w - 8), .value = 0}, row);
    arch::encode_into({.op = Opcode::Delay, .events = 8 - 1 + 6}, row);
    arch::encode_into({.op = Opcode::Return}, row);
    tiles.push_back(make_tile(r, row, kDestination + 0x100 * r));
  }
  const PhaseOutcome out = execute_phase(chip(), topology(), tiles);
  for (const auto& h : out.hazards) ADD_FAILURE() << h.detail;
  ASSERT_EQ(out.writes.size(), 2u);
  for (const auto& w : out.writes) {
    EXPECT_EQ(w.bytes, 32u);
    EXPECT_EQ(w.address, kDestination + 0x100 * tiles[w.receiver].logical);
  }
}

// Two receivers' rows made by a helper, then one defect each.
struct PointToPoint {
  std::vector<PhaseTile> tiles;
  PointToPoint(uint32_t words, int64_t xpic_len, bool pic = true, bool neutral = true) {
    const uint32_t s = topology().physical(0), d = topology().physical(1);
    const int64_t ttm = topology().time_to_mux(s, d);
    const int64_t issue = std::max<int64_t>(0, -ttm);
    const int64_t m0 = issue + 1 + ttm;
    std::vector<uint32_t> srow, rrow;
    if (issue > 0) arch::encode_into({.op = Opcode::Delay, .events = static_cast<uint32_t>(issue)}, srow);
    arch::encode_into({.op = Opcode::Send, .words = words, .address = kSource / 4, .sctl = 1}, srow);
    arch::encode_into({.op = Opcode::Send, .words = 4, .address = kSource / 4 + 0x100, .sctl = 1}, srow);
    arch::encode_into({.op = Opcode::Return}, srow);
    arch::encode_into({.op = Opcode::DelayXpic, .events = static_cast<uint32_t>(m0), .value = s}, rrow);
    if (neutral)
      arch::encode_into({.op = Opcode::DelayXpic, .events = static_cast<uint32_t>(xpic_len), .value = 0x640}, rrow);
    const int64_t w = topology().write_delay(d);
    if (pic)
      arch::encode_into(
          {.op = Opcode::DelayPic, .events = static_cast<uint32_t>(w - (neutral ? xpic_len : 0)), .value = 0}, rrow);
    arch::encode_into({.op = Opcode::Delay, .events = 200}, rrow);
    arch::encode_into({.op = Opcode::Return}, rrow);
    tiles = {make_tile(0, srow), make_tile(1, rrow, kDestination)};
  }
};

bool has(const PhaseOutcome& out, HazardClass kind) {
  for (const auto& h : out.hazards) {
    if (h.kind == kind) return true;
  }
  return false;
}

TEST(PhaseHazards, CleanPointToPointHasNone) {
  PointToPoint p(16, 16);
  const auto out = execute_phase(chip(), topology(), p.tiles);
  for (const auto& h : out.hazards) ADD_FAILURE() << int(h.kind) << " " << h.detail;
  ASSERT_EQ(out.writes.size(), 1u);
  EXPECT_EQ(out.writes[0].bytes, 64u);
}

TEST(PhaseHazards, WindowLongerThanTheMessageTakesTheNextOne) {
  PointToPoint p(16, 18);
  const auto out = execute_phase(chip(), topology(), p.tiles);
  EXPECT_TRUE(has(out, HazardClass::MuxLeftOpen));
}

TEST(PhaseHazards, ShortWindowLosesWords) {
  PointToPoint p(16, 10);
  EXPECT_TRUE(has(execute_phase(chip(), topology(), p.tiles), HazardClass::StreamConflict));
}

TEST(PhaseHazards, MuxNeverClosed) {
  PointToPoint p(16, 16, true, false);
  EXPECT_TRUE(has(execute_phase(chip(), topology(), p.tiles), HazardClass::MuxLeftOpen));
}

TEST(PhaseHazards, NoPointerControl) {
  PointToPoint p(16, 16, false);
  const auto out = execute_phase(chip(), topology(), p.tiles);
  EXPECT_TRUE(has(out, HazardClass::NoPointer));
  EXPECT_TRUE(out.writes.empty());
}

TEST(PhaseHazards, RowInTheDataElement) {
  PointToPoint p(16, 16);
  p.tiles[1].row_address = kDestination + 0x100;
  EXPECT_TRUE(has(execute_phase(chip(), topology(), p.tiles), HazardClass::RowFetchConflict));
}

TEST(PhaseHazards, RowAboveTheFetchRegion) {
  PointToPoint p(16, 16);
  p.tiles[1].row_address = 0x7fff8;
  EXPECT_TRUE(has(execute_phase(chip(), topology(), p.tiles), HazardClass::Encoding));
}

TEST(PhaseHazards, WriteOutsideSram) {
  PointToPoint p(16, 16);
  p.tiles[1].incoming_base = 0xe7ff0;
  EXPECT_TRUE(has(execute_phase(chip(), topology(), p.tiles), HazardClass::WriteOutOfRange));
}

}  // namespace
}  // namespace lockstep::model
