#pragma once
// What each tile's row must do, derived from a placement: its send segments (item events
// and addresses) and its control events. Encoding turns a plan into instructions; the
// row check compares decoded rows against the same plan.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "compiler/schedule_model.hpp"

namespace lockstep::compiler {

// How many events before its first write a PIC pointer may move to avoid sharing an event
// with an XPIC control. The physical scheduler's write windows start this much earlier.
inline constexpr int32_t kPicShift = 4;

// Paired receive (docs/scheduling.md, "Paired64"): the PIC format goes non-zero two events
// before the first write (the simulator reads it at write - 2), one earlier when that event
// is the early member's own paired XPIC teardown (items = write delay - 2, hazard 10).
inline int32_t paired_format_event(int32_t first_write, int32_t items, int32_t write_delay) {
  return items + 2 == write_delay ? first_write - 3 : first_write - 2;
}
// The format goes back to 0 two events before the last write (after the last item's
// read at write - 2), but never on or before the pointer event (messages of 1 or 2 items).
inline int32_t paired_format_off_event(int32_t first_write, int32_t items) {
  return first_write + (items < 3 ? 3 : items) - 2;
}
// The end (exclusive) of a paired receive's write timeline entry: it covers its controls.
inline int32_t paired_write_end(int32_t first_write, int32_t items) {
  return std::max(first_write + items, paired_format_off_event(first_write, items) + 1);
}

struct SendSegment {
  int32_t first_event = 0;  // item 0 leaves here; the send issues one event earlier
  uint32_t items = 0;
  uint32_t message = 0;  // index into the order
  uint32_t sctl = 0;
  uint32_t item_address = 0;  // iteration 0
};

// At most one XPIC-class control (ordinary or paired mux) and one PIC-class control (pointer
// or format) per event.
struct ControlEvent {
  int32_t event = 0;
  bool has_xpic = false;
  bool has_pic = false;
  bool has_format = false;
  bool xpic_paired = false;  // the XPIC control is on the paired mux (selector 1)
  uint32_t xpic = 0;         // physical source (paired: source XOR (tile AND 2)), or the neutral value
  uint32_t pic = 0;          // PIC pointer: absolute word address (INCOMING_BASE = 0)
  uint32_t format = 0;       // PIC format: 0 for 32-bit writes, dir(s, d) for paired items
};

struct PlannedWrite {
  int32_t first_event = 0;
  int32_t items = 0;
  uint32_t item_words = 1;  // 2 for paired items
};

struct TilePlan {
  uint32_t tile = 0;                   // physical
  std::vector<SendSegment> sends;      // by first_event
  std::vector<ControlEvent> controls;  // by event, one entry per event
  std::vector<PlannedWrite> writes;    // by first event
  int32_t end_event = 0;

  // The PIC pointer in effect at the start of `event` (before any control on it): the last
  // pointer set plus the words written since. Without an earlier pointer, the next one.
  uint32_t pointer_at(int32_t event) const;
  // The ordinary XPIC value in effect at the start of `event`, or `neutral`.
  uint32_t xpic_at(int32_t event, uint32_t neutral) const;
};

// Plans of every tile that sends or receives, sorted by physical tile. Throws
// CompilerError if two XPIC sources or two PIC pointers fall on one event (a scheduler bug).
std::vector<TilePlan> make_tile_plans(const PhaseProblem& problem, const Order& order, const Placement& placement);

// Item address of a message's first item in one Repeat iteration (byte address / 4, or / 8
// for a paired transfer).
uint32_t message_item_address(const PhaseProblem& problem, const Message& message, uint32_t iteration);

}  // namespace lockstep::compiler
