#pragma once
// What each tile's row must do, derived from a placement: its send segments (item events
// and addresses) and its control events. Encoding turns a plan into instructions; the
// row check compares decoded rows against the same plan.
#include <cstdint>
#include <vector>

#include "compiler/schedule_model.hpp"

namespace lockstep::compiler {

// How many events before its first write a PIC pointer may move to avoid sharing an event
// with an XPIC control. The physical scheduler's write windows start this much earlier.
inline constexpr int32_t kPicShift = 4;

struct SendSegment {
  int32_t first_event = 0;  // item 0 leaves here; the send issues one event earlier
  uint32_t items = 0;
  uint32_t message = 0;     // index into the order
  uint32_t sctl = 0;
  uint32_t item_address = 0;  // iteration 0
};

struct ControlEvent {
  int32_t event = 0;
  bool has_xpic = false;
  bool has_pic = false;
  uint32_t xpic = 0;  // physical source, or the neutral value
  uint32_t pic = 0;   // PIC pointer: absolute word address (INCOMING_BASE = 0)
};

struct TilePlan {
  uint32_t tile = 0;  // physical
  std::vector<SendSegment> sends;     // by first_event
  std::vector<ControlEvent> controls; // by event, one entry per event
  std::vector<std::pair<int32_t, int32_t>> writes;  // (first write event, items), by event
  int32_t end_event = 0;

  // The PIC pointer in effect at the start of `event` (before any control on it): the last
  // pointer set plus the words written since. Without an earlier pointer, the next one.
  uint32_t pointer_at(int32_t event) const;
  // The XPIC value in effect at the start of `event`, or `neutral`.
  uint32_t xpic_at(int32_t event, uint32_t neutral) const;
};

// Plans of every tile that sends or receives, sorted by physical tile. Throws
// CompilerError if two XPIC sources or two PIC pointers fall on one event (a scheduler bug).
std::vector<TilePlan> make_tile_plans(const PhaseProblem& problem, const Order& order, const Placement& placement);

// Item address of a message's first item in one Repeat iteration.
uint32_t message_item_address(const PhaseProblem& problem, const Message& message, uint32_t iteration);

}  // namespace lockstep::compiler
