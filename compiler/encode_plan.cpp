// make_tile_plans: the per-tile facts (send segments, control events) of a placement.
#include "compiler/encode_plan.hpp"

#include <algorithm>
#include <string>

#include "arch/errors.hpp"

namespace lockstep::compiler {
namespace {

constexpr int32_t kReceiveTail = 6;

struct RawControl {
  int32_t event;
  uint8_t kind;  // 0 neutral XPIC, 1 source XPIC, 2 PIC pointer
  uint32_t value;
};

struct Receive {
  int32_t m;      // first mux event
  int32_t n;      // items
  int32_t write_delay;
  uint32_t source;  // physical
  uint32_t pic;     // destination word address
};

// The XPIC and PIC controls of a tile's receives. A PIC pointer goes on the first write
// event m + W(d) unless an XPIC control already sits there: then it moves up to
// kPicShift events earlier (still after the previous message's last write, and off the
// tile's message starts, hazard 9), or is dropped when the destination continues the
// previous message's (the pointer has auto-incremented to it). Only when neither is
// possible do XPIC and PIC share an event (encoded with sendpicp).
std::vector<RawControl> receive_controls(std::vector<Receive>& receives, const std::vector<SendSegment>& sends,
                                         uint32_t neutral) {
  std::sort(receives.begin(), receives.end(), [](const Receive& a, const Receive& b) { return a.m < b.m; });
  std::vector<int32_t> xpic_events, starts;
  for (const Receive& r : receives) {
    xpic_events.push_back(r.m);
    xpic_events.push_back(r.m + r.n);
  }
  std::sort(xpic_events.begin(), xpic_events.end());
  for (const SendSegment& s : sends) {
    starts.push_back(s.first_event - 1);
    starts.push_back(s.first_event);
  }
  std::sort(starts.begin(), starts.end());
  auto has = [](const std::vector<int32_t>& v, int32_t e) { return std::binary_search(v.begin(), v.end(), e); };
  std::vector<RawControl> list;
  list.reserve(receives.size() * 3);
  int32_t previous_last_write = 0;
  uint32_t previous_next_pic = 0;
  bool have_previous = false;
  for (const Receive& r : receives) {
    list.push_back({r.m, 1, r.source});
    list.push_back({r.m + r.n, 0, neutral});
    const int32_t first_write = r.m + r.write_delay;
    int32_t event = first_write;
    if (has(xpic_events, first_write)) {
      const bool continues = have_previous && previous_next_pic == r.pic;
      event = -1;
      for (int32_t q = first_write - 1; q >= first_write - kPicShift && q > previous_last_write && q >= 1; --q) {
        if (!has(xpic_events, q) && !has(starts, q)) {
          event = q;
          break;
        }
      }
      if (event < 0 && !continues) event = first_write;
    }
    if (event >= 0) list.push_back({event, 2, r.pic});
    previous_last_write = first_write + r.n - 1;
    previous_next_pic = r.pic + static_cast<uint32_t>(r.n);
    have_previous = true;
  }
  return list;
}

}  // namespace

uint32_t TilePlan::pointer_at(int32_t event) const {
  const ControlEvent* last = nullptr;
  for (const ControlEvent& c : controls) {
    if (c.event >= event) break;
    if (c.has_pic) last = &c;
  }
  if (!last) {
    for (const ControlEvent& c : controls)
      if (c.event >= event && c.has_pic) return c.pic;
  }
  if (!last) return 0;
  uint32_t pointer = last->pic;
  for (const auto& [first, items] : writes) {
    const int32_t from = std::max(first, last->event);
    const int32_t to = std::min(first + items, event);
    if (to > from) pointer += static_cast<uint32_t>(to - from);
  }
  return pointer;
}

uint32_t TilePlan::xpic_at(int32_t event, uint32_t neutral) const {
  uint32_t value = neutral;
  for (const ControlEvent& c : controls) {
    if (c.event >= event) break;
    if (c.has_xpic) value = c.xpic;
  }
  return value;
}

uint32_t message_item_address(const PhaseProblem& problem, const Message& message, uint32_t iteration) {
  const arch::Transfer& transfer = problem.phase->transfers[message.transfer];
  return transfer.source_addresses[iteration] / 4 + message.offset;
}

std::vector<TilePlan> make_tile_plans(const PhaseProblem& problem, const Order& order, const Placement& placement) {
  const uint32_t neutral = problem.machine->neutral_mux;
  std::vector<std::vector<SendSegment>> sends(problem.tiles);
  std::vector<std::vector<Receive>> receives(problem.tiles);
  std::vector<int32_t> end(problem.tiles, -1);
  for (size_t i = 0; i < order.size(); ++i) {
    const Message& message = order[i];
    const TransferInfo& transfer = problem.transfers[message.transfer];
    const int32_t n = static_cast<int32_t>(items_of(message));
    const int32_t t = placement.issue[i];
    sends[transfer.source].push_back(
        {t + 1, static_cast<uint32_t>(n), static_cast<uint32_t>(i), transfer.sctl, message_item_address(problem, message, 0)});
    end[transfer.source] = std::max(end[transfer.source], t + n);
    const arch::Destination* dests = problem.phase->transfers[message.transfer].destinations.data();
    for (size_t k = 0; k < transfer.receivers.size(); ++k) {
      const ReceiverInfo& r = transfer.receivers[k];
      const int32_t m = t + 1 + r.ttm;
      receives[r.tile].push_back({m, n, r.write_delay, transfer.source, dests[k].address / 4 + message.offset});
      end[r.tile] = std::max(end[r.tile], m + n - 1 + r.write_delay + kReceiveTail);
    }
  }
  std::vector<TilePlan> plans;
  for (uint32_t tile = 0; tile < problem.tiles; ++tile) {
    if (end[tile] < 0) continue;
    TilePlan plan;
    plan.tile = tile;
    plan.sends = std::move(sends[tile]);
    std::sort(plan.sends.begin(), plan.sends.end(),
              [](const SendSegment& a, const SendSegment& b) { return a.first_event < b.first_event; });
    std::vector<RawControl> list = receive_controls(receives[tile], plan.sends, neutral);
    std::sort(list.begin(), list.end(), [](const RawControl& a, const RawControl& b) {
      return a.event != b.event ? a.event < b.event : a.kind < b.kind;
    });
    for (size_t i = 0; i < list.size();) {
      ControlEvent control;
      control.event = list[i].event;
      bool neutral_seen = false;
      for (; i < list.size() && list[i].event == control.event; ++i) {
        const RawControl& c = list[i];
        const std::string where = "scheduling: phase " + std::to_string(problem.phase->id) + " tile " +
                                  std::to_string(problem.topology->logical(tile)) + " event " + std::to_string(c.event);
        if (c.kind == 0) {
          neutral_seen = true;
        } else if (c.kind == 1) {
          if (control.has_xpic) throw CompilerError(where + ": two mux windows open on one event");
          control.has_xpic = true;
          control.xpic = c.value;
        } else {
          if (control.has_pic) throw CompilerError(where + ": two PIC pointers on one event");
          control.has_pic = true;
          control.pic = c.value;
        }
      }
      if (neutral_seen && !control.has_xpic) {
        control.has_xpic = true;
        control.xpic = neutral;
      }
      plan.controls.push_back(control);
    }
    for (const Receive& r : receives[tile]) plan.writes.emplace_back(r.m + r.write_delay, r.n);
    plan.end_event = end[tile];
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace lockstep::compiler
