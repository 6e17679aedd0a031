// place_order: earliest-fit list scheduling of messages on per-tile timelines.
//
// For a message of N items from s issued at event t:
//   * s emits items at events t+1 .. t+N (one stream per tile);
//   * receiver d selects them in the mux window [m, m+N), m = t + 1 + ttm(s, d); windows of
//     one tile never overlap (write windows then cannot either: W(d) is fixed per tile);
//   * d's controls: XPIC source at m, neutral at m+N (merged with a source starting there),
//     PIC pointer at m + W(d) (the first write);
//   * hazard 9: no control of a tile at the issue event t or first-item event t+1 of any of
//     its messages;
//   * every control at event >= 1 (it must be carried by an instruction that ends there);
//   * hazard 2: s's read window [t, t+N] and any write window [m+W, last write + 6] of the
//     same tile must not overlap in time when they share a memory element (the write
//     window starts kPicShift events early: the pointer may move there).
// A paired message (docs/scheduling.md "Paired64") uses m = t + pttm (spec section 6) and the paired
// write delay for both members of each receiving pair; only the early member opens a (paired)
// mux window; both keep a write window from the format control to the last write; formats
// stay off every mux control event of the tile and every paired one of its partner.
#include "compiler/physical_schedule.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <initializer_list>

#include "arch/topology.hpp"
#include "compiler/encode_plan.hpp"
#include "compiler/schedule_intervals.hpp"

namespace lockstep::compiler {
namespace {

constexpr int32_t kReceiveTail = 6;  // a receive row ends this many events after its last write

// Per-element windows of one tile, one set per bit of the element mask: a mask names its
// sets directly (searching a list of the elements in use cost a cache miss per element).
struct ElementWindows {
  std::array<IntervalSet, 64> sets;
  // End of the latest window intersecting [a, b) on any element of `mask`, or a.
  int32_t overlap_end(uint64_t mask, int32_t a, int32_t b) const {
    int32_t end = a;
    for (; mask != 0; mask &= mask - 1) end = std::max(end, sets[std::countr_zero(mask)].overlap_end(a, b));
    return end;
  }
  void add(uint64_t mask, int32_t a, int32_t b) {
    for (; mask != 0; mask &= mask - 1) sets[std::countr_zero(mask)].add(a, b);
  }
};

// Marks on a tile's event clock, one byte per event (grown on demand): O(1) membership.
class EventMarks {
 public:
  static constexpr uint8_t kControl = 1;        // any control
  static constexpr uint8_t kStart = 2;          // issue or first-item event of a message
  static constexpr uint8_t kXpic = 4;           // XPIC control (single_controls only)
  static constexpr uint8_t kPic = 8;            // PIC control (single_controls only)
  static constexpr uint8_t kXpicOrdinary = 16;  // ordinary XPIC control
  static constexpr uint8_t kXpicPaired = 32;    // paired XPIC control
  static constexpr uint8_t kFormat = 64;        // PIC format control
  bool has(int32_t event, uint8_t mark) const {
    return event >= 0 && static_cast<size_t>(event) < marks_.size() && (marks_[static_cast<size_t>(event)] & mark);
  }
  void set(int32_t event, uint8_t mark) {
    const size_t e = static_cast<size_t>(event);
    if (e >= marks_.size()) marks_.resize(std::max<size_t>({e + 1, marks_.size() * 2, 1024}), 0);
    marks_[e] |= mark;
  }

 private:
  std::vector<uint8_t> marks_;
};

struct TileTimeline {
  IntervalSet sends;    // events at which an item leaves
  IntervalSet windows;  // XPIC windows (ordinary, and paired on an early member)
  IntervalSet writes;   // write windows (a paired one from its format control)
  EventMarks marks;
  ElementWindows reads;
  ElementWindows writes_by_element;
};

// How far issue event t must move for receiver r of a message of n items to obey the
// receive-side rules (0: it may stay).
int32_t receiver_shift(std::vector<TileTimeline>& tiles, const TransferInfo& transfer, const ReceiverInfo& r, int32_t t,
                       int32_t n, bool single_controls) {
  TileTimeline& receiver = tiles[r.tile];
  const int32_t m = t + 1 + r.ttm;
  const int32_t first_write = m + r.write_delay;
  const bool opens_mux = !transfer.paired || r.early;
  if (opens_mux) {
    const int32_t window = receiver.windows.earliest_free(m, n);
    if (window != m) return window - m;
  }
  const int32_t write_from = transfer.paired ? paired_format_event(first_write, n, r.write_delay) : first_write;
  const int32_t write_end = transfer.paired ? paired_write_end(first_write, n) : first_write + n;
  const int32_t write = receiver.writes.earliest_free(write_from, write_end - write_from);
  if (write != write_from) return write - write_from;
  using M = EventMarks;
  auto any = [](const TileTimeline& tile, std::initializer_list<int32_t> events, uint8_t mark) {
    for (int32_t e : events)
      if (tile.marks.has(e, mark)) return true;
    return false;
  };
  if (!transfer.paired) {
    if (any(receiver, {m, m + n, first_write}, M::kStart)) return 1;
    // One XPIC-class control per event; no format control where an XPIC must go.
    if (any(receiver, {m, m + n}, M::kXpicPaired | M::kFormat)) return 1;
    if (single_controls && (any(receiver, {m, m + n}, M::kPic) || receiver.marks.has(first_write, M::kXpic))) return 1;
  } else {
    const TileTimeline& partner = tiles[arch::Topology::partner(r.tile)];
    const int32_t format_on = paired_format_event(first_write, n, r.write_delay);
    const int32_t format_off = paired_format_off_event(first_write, n);
    if (any(receiver, {first_write, format_on, format_off}, M::kStart)) return 1;
    // Hazard 10: no format change on a paired XPIC event of the tile or its partner; and a
    // format control cannot share an event with any XPIC control (no instruction carries both).
    if (any(receiver, {format_on, format_off}, M::kXpicOrdinary | M::kXpicPaired)) return 1;
    if (any(partner, {format_on, format_off}, M::kXpicPaired)) return 1;
    if (opens_mux) {
      if (any(receiver, {m, m + n}, M::kStart | M::kXpicOrdinary | M::kFormat)) return 1;
      if (any(partner, {m, m + n}, M::kFormat)) return 1;
    }
    if (single_controls &&
        ((opens_mux && any(receiver, {m, m + n}, M::kPic)) || receiver.marks.has(first_write, M::kXpic)))
      return 1;
  }
  // A message of exactly W(d) items has its own neutral XPIC on its first write event;
  // no shift of t can change that (it used to loop forever here). The encoder moves
  // that PIC up to kPicShift events earlier instead (encode_plan.cpp).
  const int32_t pointer = first_write - kPicShift;
  const int32_t read_end = receiver.reads.overlap_end(r.write_mask, pointer, pointer + kPicShift + n + kReceiveTail);
  if (read_end != pointer) return read_end - pointer;
  return 0;
}

void reserve_receive(std::vector<TileTimeline>& tiles, const TransferInfo& transfer, const ReceiverInfo& r, int32_t t,
                     int32_t n, bool single_controls) {
  using M = EventMarks;
  TileTimeline& receiver = tiles[r.tile];
  const int32_t m = t + 1 + r.ttm;
  const int32_t first_write = m + r.write_delay;
  const uint8_t xpic =
      M::kControl | (single_controls ? M::kXpic : 0) | (transfer.paired ? M::kXpicPaired : M::kXpicOrdinary);
  const uint8_t pic = M::kControl | (single_controls ? M::kPic : 0);
  if (!transfer.paired || r.early) {
    receiver.windows.add(m, m + n);
    receiver.marks.set(m, xpic);
    receiver.marks.set(m + n, xpic);
  }
  receiver.marks.set(first_write, pic);
  int32_t write_from = first_write;
  if (transfer.paired) {
    write_from = paired_format_event(first_write, n, r.write_delay);
    receiver.marks.set(write_from, M::kControl | M::kFormat);
    receiver.marks.set(paired_format_off_event(first_write, n), M::kControl | M::kFormat);
  }
  receiver.writes.add(write_from, transfer.paired ? paired_write_end(first_write, n) : first_write + n);
  if (r.write_mask)
    receiver.writes_by_element.add(r.write_mask, first_write - kPicShift, first_write + n + kReceiveTail);
}

}  // namespace

Placement place_order(const PhaseProblem& problem, const Order& order, bool single_controls) {
  std::vector<TileTimeline> tiles(problem.tiles);
  Placement placement;
  placement.issue.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const Message& message = order[i];
    const TransferInfo& transfer = problem.transfers[message.transfer];
    const int32_t n = static_cast<int32_t>(items_of(message));
    TileTimeline& sender = tiles[transfer.source];
    int32_t t = 0;
    for (const ReceiverInfo& r : transfer.receivers) t = std::max(t, -r.ttm);
    size_t first_receiver = 0;
    for (;;) {
      const int32_t free = sender.sends.earliest_free(t + 1, n) - 1;
      if (free != t) {
        t = free;
        continue;
      }
      if (sender.marks.has(t, EventMarks::kControl) || sender.marks.has(t + 1, EventMarks::kControl)) {
        ++t;
        continue;
      }
      const int32_t read_end = sender.writes_by_element.overlap_end(transfer.read_mask, t, t + n + 1);
      if (read_end != t) {
        t = read_end;
        continue;
      }
      // Every shift skips only events that break some rule, so the first event that breaks
      // none is found whatever order the receivers are asked in: the one that moved t last
      // goes first, as it is the likeliest to move it again (one ask per step, not one per
      // receiver before it).
      bool moved = false;
      const size_t receivers = transfer.receivers.size();
      for (size_t k = 0; k < receivers; ++k) {
        const size_t index = (first_receiver + k) % receivers;
        const int32_t shift = receiver_shift(tiles, transfer, transfer.receivers[index], t, n, single_controls);
        if (shift != 0) {
          t += shift;
          first_receiver = index;
          moved = true;
          break;
        }
      }
      if (!moved) break;
    }
    placement.issue[i] = t;
    sender.sends.add(t + 1, t + n + 1);
    sender.marks.set(t, EventMarks::kStart);
    sender.marks.set(t + 1, EventMarks::kStart);
    if (transfer.read_mask) sender.reads.add(transfer.read_mask, t, t + n + 1);
    for (const ReceiverInfo& r : transfer.receivers) reserve_receive(tiles, transfer, r, t, n, single_controls);
  }
  compute_horizon(problem, order, placement);
  return placement;
}

void compute_horizon(const PhaseProblem& problem, const Order& order, Placement& placement) {
  placement.horizon = 0;
  placement.critical_tile = 0;
  auto consider = [&](int32_t end, uint32_t tile) {
    if (end > placement.horizon || (end == placement.horizon && tile < placement.critical_tile)) {
      placement.horizon = end;
      placement.critical_tile = tile;
    }
  };
  for (size_t i = 0; i < order.size(); ++i) {
    const TransferInfo& transfer = problem.transfers[order[i].transfer];
    const int32_t n = static_cast<int32_t>(items_of(order[i]));
    const int32_t t = placement.issue[i];
    consider(t + n, transfer.source);
    for (const ReceiverInfo& r : transfer.receivers)
      consider(t + 1 + r.ttm + n - 1 + r.write_delay + kReceiveTail, r.tile);
  }
}

}  // namespace lockstep::compiler
