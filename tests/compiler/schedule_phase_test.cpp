// schedule_phase on hand-computable phases, checked against the spec's row shapes and by
// running the rows through the simulator's phase executor.
#include <gtest/gtest.h>

#include "arch/instruction.hpp"
#include "compiler/phase_schedule.hpp"
#include "io/errors.hpp"
#include "schedule_test_support.hpp"

namespace lockstep::compiler {
namespace {

using testing::c600;
using testing::c600_topology;
using testing::expect_delivers;
using testing::transfer;

std::vector<arch::Instruction> decoded(const TileRow& row) {
  std::vector<arch::Instruction> out;
  for (const auto& d : arch::decode_row(row.words)) out.push_back(d.instruction);
  return out;
}

const TileRow& row_of(const ScheduledPhase& phase, uint32_t tile) {
  for (const TileRow& row : phase.rows)
    if (row.tile == tile) return row;
  throw std::runtime_error("no row for tile " + std::to_string(tile));
}

arch::Instruction ins(arch::Opcode op) {
  arch::Instruction i;
  i.op = op;
  return i;
}

// Section 9 vector A (L0 -> L1286, 3 words, ttm -23) with the earliest start: the
// receiver's window opens at event 1 instead of 113, so every receive event is 112
// earlier and the sender's delay shrinks to -ttm = 23.
TEST(SchedulePhase, TwoTileTransferHasTheSpecRowShape) {
  arch::CapturePhase phase;
  phase.id = 4;
  phase.transfers.push_back(transfer(0, 0x4c000, {{1286, 0x60000}}, 3));
  const ScheduledPhase result = schedule_phase(phase, c600(), c600_topology(), parse_config("latency"));
  ASSERT_EQ(result.rows.size(), 2u);
  EXPECT_EQ(result.horizon, 61u);      // last write 1+2+52 = 55, + 6
  EXPECT_EQ(result.lower_bound, 61u);  // the schedule meets its bound

  const TileRow& sender = row_of(result, 0);
  auto delay = ins(arch::Opcode::Delay);
  delay.events = 23;
  auto send = ins(arch::Opcode::Send);
  send.words = 3;
  send.address = 0x4c000 / 4;
  send.sctl = 1;
  EXPECT_EQ(decoded(sender), (std::vector<arch::Instruction>{delay, send, ins(arch::Opcode::Return)}));
  EXPECT_EQ(sender.end_event, 26u);
  ASSERT_EQ(sender.address_fields.size(), 1u);
  EXPECT_EQ(sender.address_fields[0].word_index, 1u);
  EXPECT_EQ(sender.address_fields[0].kind, AddressField::Kind::SendAddress);

  // Receiver: as vector A: delayxpic -> source 0; delayxpic 3 -> neutral; delaypic 49 ->
  // pointer at the first write; delay 6 after the last write... here the pointer is
  // absolute (INCOMING_BASE 0), so the PIC value is the destination word address.
  const TileRow& receiver = row_of(result, 1286);
  auto open = ins(arch::Opcode::DelayXpic);
  open.events = 1;
  open.value = 0;  // physical id of L0
  auto close = ins(arch::Opcode::DelayXpic);
  close.events = 3;
  close.value = 0x640;
  auto pointer = ins(arch::Opcode::DelayPic);
  pointer.events = 49;
  pointer.value = 0x60000 / 4;
  auto tail = ins(arch::Opcode::Delay);
  tail.events = 8;
  EXPECT_EQ(decoded(receiver), (std::vector<arch::Instruction>{open, close, pointer, tail, ins(arch::Opcode::Return)}));
  EXPECT_EQ(receiver.incoming_base, 0u);
  ASSERT_EQ(receiver.address_fields.size(), 1u);
  EXPECT_EQ(receiver.address_fields[0].kind, AddressField::Kind::PicPointer);
  EXPECT_EQ(receiver.address_fields[0].word_index, 2u);
  expect_delivers(phase, result);
}

TEST(SchedulePhase, MulticastIsOneSendWithEveryDirection) {
  arch::CapturePhase phase;
  // L777 (phys 1314) reaches L0 with dir 2; L1300 (phys 440) reaches L17 with dir 2;
  // pick receivers on both sides of L500.
  phase.transfers.push_back(transfer(500, 0x4c000, {{1000, 0x60000}, {0, 0x60000}, {1471, 0x61000}}, 100));
  const ScheduledPhase result = schedule_phase(phase, c600(), c600_topology(), parse_config("S256"));
  const auto& topo = c600_topology();
  uint32_t dirs = 0;
  for (uint32_t d : {1000u, 0u, 1471u}) dirs |= topo.direction(topo.physical(500), topo.physical(d));
  const auto rows = decoded(row_of(result, 500));
  uint32_t sends = 0;
  for (const auto& i : rows) {
    if (i.op == arch::Opcode::Send) {
      ++sends;
      EXPECT_EQ(i.sctl, dirs);
    }
  }
  EXPECT_EQ(sends, 1u);
  EXPECT_EQ(result.rows.size(), 4u);
  EXPECT_GE(result.horizon, result.lower_bound);
  expect_delivers(phase, result);
}

TEST(SchedulePhase, BackToBackReceivesKeepTheMuxBusy) {
  arch::CapturePhase phase;
  for (uint32_t s : {100u, 200u, 300u, 400u})
    phase.transfers.push_back(transfer(s, 0x4c000, {{7, 0x60000 + 0x1000 * (s / 100)}}, 500));
  for (const char* config : {"latency", "S64", "B256", "automatic", "remaining-combined"}) {
    SCOPED_TRACE(config);
    const ScheduledPhase result = schedule_phase(phase, c600(), c600_topology(), parse_config(config));
    EXPECT_GE(result.horizon, result.lower_bound);
    expect_delivers(phase, result);
    if (std::string(config) == "latency") {
      EXPECT_LE(result.horizon, result.lower_bound + 8);
    }
  }
}

// PIC pointer controls on a receiver's row (delaypic, and the pointer of sendpic/sendpicp).
size_t pointer_controls(const TileRow& row) {
  size_t n = 0;
  for (const auto& field : row.address_fields) n += field.kind == AddressField::Kind::PicPointer;
  return n;
}

// Four senders to one receiver: when each destination continues the previous one's, the
// pointer auto-increments there and only the first receive sets it; with gaps, each does.
TEST(SchedulePhase, ContiguousReceivesSetThePointerOnce) {
  for (const bool contiguous : {true, false}) {
    SCOPED_TRACE(contiguous ? "contiguous" : "gaps");
    arch::CapturePhase phase;
    uint32_t at = 0x60000;
    for (uint32_t s : {100u, 200u, 300u, 400u}) {
      phase.transfers.push_back(transfer(s, 0x4c000, {{7, at}}, 48));
      at += 48 * 4 + (contiguous ? 0 : 8);
    }
    for (const char* config : {"latency", "B1024"}) {
      SCOPED_TRACE(config);
      const ScheduledPhase result = schedule_phase(phase, c600(), c600_topology(), parse_config(config));
      EXPECT_EQ(pointer_controls(row_of(result, 7)), contiguous ? 1u : 4u);
      expect_delivers(phase, result);
    }
  }
}

TEST(SchedulePhase, TileThatSendsAndReceivesCarriesControlsOnItsSends) {
  arch::CapturePhase phase;
  // Tile 10 sends 600 words to 20 while receiving 600 from 30 and 300 from 40.
  phase.transfers.push_back(transfer(10, 0x4c000, {{20, 0x64000}}, 600));
  phase.transfers.push_back(transfer(30, 0x4c000, {{10, 0x64000}}, 600));
  phase.transfers.push_back(transfer(40, 0x4c000, {{10, 0x68000}}, 300));
  const ScheduledPhase result = schedule_phase(phase, c600(), c600_topology(), parse_config("latency"));
  bool fused = false;
  for (const auto& i : decoded(row_of(result, 10)))
    fused = fused || i.op == arch::Opcode::SendPic || i.op == arch::Opcode::SendPicP;
  EXPECT_TRUE(fused) << "controls during the send stream ride on sendpic/sendpicp";
  expect_delivers(phase, result);

  // Tile 10's message is cut into runs by those controls, yet reaches tile 20 as one write.
  const std::vector<model::PhaseTile> tiles = testing::phase_tiles(result);
  const model::PhaseOutcome outcome = model::execute_phase(c600(), c600_topology(), tiles);
  std::vector<model::WriteRun> to_20;
  for (const model::WriteRun& w : outcome.writes)
    if (tiles[w.receiver].logical == 20) to_20.push_back(w);
  ASSERT_EQ(to_20.size(), 1u);
  EXPECT_EQ(to_20[0].bytes, 600u * 4);
  EXPECT_GT(to_20[0].last_run, to_20[0].run);
}

TEST(SchedulePhase, RepeatSourceAddressesPerIteration) {
  arch::CapturePhase phase;
  phase.iterations = 3;
  arch::Transfer t = transfer(5, 0x4c000, {{6, 0x64000}, {900, 0x64000}}, 200);
  t.source_addresses = {0x4c000, 0x50000, 0x54100};
  phase.transfers.push_back(t);
  const ScheduledPhase result = schedule_phase(phase, c600(), c600_topology(), parse_config("S64"));
  const TileRow& sender = row_of(result, 5);
  std::vector<uint32_t> send_fields;
  for (const AddressField& f : sender.address_fields) {
    if (f.kind != AddressField::Kind::SendAddress) continue;
    ASSERT_EQ(f.values.size(), 3u);
    std::vector<uint32_t> addresses;
    for (uint32_t v : f.values) addresses.push_back(arch::decode(std::vector<uint32_t>{v, 0}, 0).instruction.address);
    EXPECT_EQ(addresses[1] - addresses[0], (0x50000u - 0x4c000u) / 4);
    EXPECT_EQ(addresses[2] - addresses[0], (0x54100u - 0x4c000u) / 4);
    send_fields.push_back(addresses[0]);
  }
  // S64 cuts the transfer into 4 chunks, each starting with its own address-bearing send.
  EXPECT_EQ(send_fields.size(), 4u);
  for (uint32_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    expect_delivers(phase, result, i);
  }
}

// Short transfers make stream_order(0) and stream_order(256) the same order: the latency
// policy drops the copy, and placing it anyway changes nothing but the work done.
TEST(SchedulePhase, DuplicateOrdersAreDroppedWithoutChangingTheRows) {
  arch::CapturePhase phase;
  for (uint32_t t = 0; t < 8; ++t) phase.transfers.push_back(transfer(t, 0x4c000, {{t + 100, 0x64000}}, 40 + t));
  ScheduleConfig config = parse_config("latency");
  const ScheduledPhase with = schedule_phase(phase, c600(), c600_topology(), config);
  config.deduplicate_orders = false;
  const ScheduledPhase without = schedule_phase(phase, c600(), c600_topology(), config);
  EXPECT_GE(with.orders_deduplicated, 1u);
  EXPECT_LT(without.orders_deduplicated, with.orders_deduplicated);
  EXPECT_EQ(with.orders_considered, without.orders_considered);
  EXPECT_EQ(with.horizon, without.horizon);
  ASSERT_EQ(with.rows.size(), without.rows.size());
  for (size_t i = 0; i < with.rows.size(); ++i) EXPECT_EQ(with.rows[i].words, without.rows[i].words);
  expect_delivers(phase, with);
}

TEST(SchedulePhase, EmptyPhaseHasNoRows) {
  arch::CapturePhase phase;
  const ScheduledPhase result = schedule_phase(phase, c600(), c600_topology(), parse_config("latency"));
  EXPECT_TRUE(result.rows.empty());
  EXPECT_EQ(result.horizon, 0u);
}

TEST(SchedulePhase, BadTransferIsInputError) {
  arch::CapturePhase phase;
  phase.transfers.push_back(transfer(5, 0x4c000, {{5, 0x64000}}, 10));
  EXPECT_THROW(schedule_phase(phase, c600(), c600_topology(), parse_config("latency")), InputError);
}

TEST(ParseConfig, NamesAndErrors) {
  EXPECT_EQ(parse_config("latency").order, OrderKind::Latency);
  EXPECT_EQ(parse_config("automatic").order, OrderKind::Automatic);
  EXPECT_EQ(parse_config("remaining-combined").order, OrderKind::RemainingCombined);
  const ScheduleConfig s = parse_config("S256");
  EXPECT_EQ(s.order, OrderKind::Stream);
  EXPECT_EQ(s.words, 256u);
  EXPECT_EQ(s.width, Width::Word32);
  const ScheduleConfig b = parse_config("B1024+paired");
  EXPECT_EQ(b.order, OrderKind::Balanced);
  EXPECT_EQ(b.words, 1024u);
  EXPECT_EQ(b.width, Width::Paired64);
  EXPECT_EQ(b.name, "B1024+paired");
  const ScheduleConfig latency_width = parse_config("B256+latency-width");
  EXPECT_EQ(latency_width.words, 256u);
  EXPECT_EQ(latency_width.width_policy, WidthPolicy::LatencyOriented);
  EXPECT_EQ(parse_config("latency+storage-width").width_policy, WidthPolicy::StorageFirst);
  EXPECT_EQ(parse_config("S64+paired").width_policy, WidthPolicy::Fixed);
  for (const char* bad : {"", "S", "S0", "S012", "B-1", "X12", "latency+", "latency+paired+paired", "s256",
                          "S99999999999", "B256+paired+latency-width", "B256+width"})
    EXPECT_THROW(parse_config(bad), InputError) << bad;
}

}  // namespace
}  // namespace lockstep::compiler
