// make_tile_plans: the per-tile facts (send segments, control events) of a placement.
#include "compiler/encode_plan.hpp"

#include <algorithm>
#include <string>

#include "io/errors.hpp"
#include "io/parallel.hpp"

namespace lockstep::compiler {
namespace {

constexpr int32_t kReceiveTail = 6;

enum class RawKind : uint8_t { Neutral, Source, PairedNeutral, PairedSource, Pointer, Format };

struct RawControl {
  int32_t event;
  RawKind kind;
  uint32_t value;
};

struct Receive {
  int32_t m;  // first mux event
  int32_t n;  // items
  int32_t write_delay;
  uint32_t source;  // XPIC value selecting the sender (paired: source XOR (tile AND 2))
  uint32_t pic;     // destination word address
  bool paired = false;
  bool early = false;   // paired: this tile issues the paired XPIC controls
  uint32_t format = 0;  // paired: format value
};

// The XPIC and PIC controls of a tile's receives. A receive whose destination continues
// the previous one's needs no PIC pointer: the pointer has auto-incremented to it. Any
// other's goes on the first write event m + W(d) unless an XPIC control already sits
// there: then it moves up to kPicShift events earlier (still after the previous message's
// last write, and off the tile's message starts, hazard 9); only when that is impossible
// do XPIC and PIC share an event (encoded with sendpicp). A paired receive keeps
// its pointer on the first write and adds the format controls (paired_format_event, and
// 0 at first write + items - 2); only its early member opens the paired mux.
std::vector<RawControl> receive_controls(std::vector<Receive>& receives, const std::vector<SendSegment>& sends,
                                         uint32_t neutral) {
  std::sort(receives.begin(), receives.end(), [](const Receive& a, const Receive& b) { return a.m < b.m; });
  std::vector<int32_t> xpic_events, starts;
  for (const Receive& r : receives) {
    if (r.paired && !r.early) continue;
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
    const int32_t first_write = r.m + r.write_delay;
    if (r.paired) {
      if (r.early) {
        list.push_back({r.m, RawKind::PairedSource, r.source});
        list.push_back({r.m + r.n, RawKind::PairedNeutral, neutral});
      }
      list.push_back({paired_format_event(first_write, r.n, r.write_delay), RawKind::Format, r.format});
      list.push_back({paired_format_off_event(first_write, r.n), RawKind::Format, 0});
      list.push_back({first_write, RawKind::Pointer, r.pic});
      previous_last_write = paired_write_end(first_write, r.n) - 1;  // covers the format-off event
      previous_next_pic = r.pic + 2 * static_cast<uint32_t>(r.n);
      have_previous = true;
      continue;
    }
    list.push_back({r.m, RawKind::Source, r.source});
    list.push_back({r.m + r.n, RawKind::Neutral, neutral});
    // The pointer has auto-incremented to a destination that continues the previous one.
    const bool continues = have_previous && previous_next_pic == r.pic;
    int32_t event = continues ? -1 : first_write;
    if (!continues && has(xpic_events, first_write)) {
      event = -1;
      for (int32_t q = first_write - 1; q >= first_write - kPicShift && q > previous_last_write && q >= 1; --q) {
        if (!has(xpic_events, q) && !has(starts, q)) {
          event = q;
          break;
        }
      }
      if (event < 0) event = first_write;
    }
    if (event >= 0) list.push_back({event, RawKind::Pointer, r.pic});
    previous_last_write = first_write + r.n - 1;
    previous_next_pic = r.pic + static_cast<uint32_t>(r.n);
    have_previous = true;
  }
  return list;
}

// One tile's plan: its sends in event order and its controls, merged per event.
TilePlan plan_tile(const PhaseProblem& problem, uint32_t tile, std::vector<SendSegment>& sends,
                   std::vector<Receive>& receives, int32_t end) {
  // Built only when a check fails: formatting it for every control cost more than the plan.
  auto where = [&](int32_t event) {
    return "scheduling: phase " + std::to_string(problem.phase->id) + " tile " +
           std::to_string(problem.topology->logical(tile)) + " event " + std::to_string(event);
  };
  const uint32_t neutral = problem.machine->neutral_mux;
  TilePlan plan;
  plan.tile = tile;
  plan.sends = std::move(sends);
  std::sort(plan.sends.begin(), plan.sends.end(),
            [](const SendSegment& a, const SendSegment& b) { return a.first_event < b.first_event; });
  std::vector<RawControl> list = receive_controls(receives, plan.sends, neutral);
  std::sort(list.begin(), list.end(), [](const RawControl& a, const RawControl& b) {
    return a.event != b.event ? a.event < b.event : a.kind < b.kind;
  });
  plan.controls.reserve(list.size());  // at most one per raw control (grown, it was 6% of a compile)
  plan.writes.reserve(receives.size());
  for (size_t i = 0; i < list.size();) {
    ControlEvent control;
    control.event = list[i].event;
    bool neutral_seen = false, paired_neutral_seen = false;
    for (; i < list.size() && list[i].event == control.event; ++i) {
      const RawControl& c = list[i];
      switch (c.kind) {
        case RawKind::Neutral:
          neutral_seen = true;
          break;
        case RawKind::PairedNeutral:
          paired_neutral_seen = true;
          break;
        case RawKind::Source:
        case RawKind::PairedSource:
          if (control.has_xpic) throw CompilerError(where(c.event) + ": two mux windows open on one event");
          control.has_xpic = true;
          control.xpic_paired = c.kind == RawKind::PairedSource;
          control.xpic = c.value;
          break;
        case RawKind::Pointer:
        case RawKind::Format:
          if (control.has_pic || control.has_format) {
            throw CompilerError(where(c.event) + ": two PIC controls on one event");
          }
          (c.kind == RawKind::Pointer ? control.has_pic : control.has_format) = true;
          (c.kind == RawKind::Pointer ? control.pic : control.format) = c.value;
          break;
      }
    }
    // A neutral is replaced by a source on the same mux; one on the other mux cannot share the event.
    if ((neutral_seen && control.has_xpic && control.xpic_paired) ||
        (paired_neutral_seen && control.has_xpic && !control.xpic_paired) || (neutral_seen && paired_neutral_seen))
      throw CompilerError(where(control.event) + ": ordinary and paired mux controls on one event");
    if ((neutral_seen || paired_neutral_seen) && !control.has_xpic) {
      control.has_xpic = true;
      control.xpic_paired = paired_neutral_seen;
      control.xpic = neutral;
    }
    if (control.has_format && control.has_xpic)
      throw CompilerError(where(control.event) + ": a format control shares its event with a mux control");
    plan.controls.push_back(control);
  }
  for (const Receive& r : receives) plan.writes.push_back({r.m + r.write_delay, r.n, r.paired ? 2u : 1u});
  plan.end_event = end;
  return plan;
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
  for (const PlannedWrite& w : writes) {
    const int32_t from = std::max(w.first_event, last->event);
    const int32_t to = std::min(w.first_event + w.items, event);
    if (to > from) pointer += static_cast<uint32_t>(to - from) * w.item_words;
  }
  return pointer;
}

uint32_t TilePlan::xpic_at(int32_t event, uint32_t neutral) const {
  uint32_t value = neutral;
  for (const ControlEvent& c : controls) {
    if (c.event >= event) break;
    if (c.has_xpic && !c.xpic_paired) value = c.xpic;
  }
  return value;
}

uint32_t message_item_address(const PhaseProblem& problem, const Message& message, uint32_t iteration) {
  const arch::Transfer& transfer = problem.phase->transfers[message.transfer];
  const uint32_t item_bytes = 4 * problem.transfers[message.transfer].item_words();
  return transfer.source_addresses[iteration] / item_bytes + message.offset;
}

std::vector<TilePlan> make_tile_plans(const PhaseProblem& problem, const Order& order, const Placement& placement) {
  std::vector<std::vector<SendSegment>> sends(problem.tiles);
  std::vector<std::vector<Receive>> receives(problem.tiles);
  std::vector<int32_t> end(problem.tiles, -1);
  // Counted first so every tile's lists are allocated once.
  std::vector<uint32_t> send_count(problem.tiles, 0), receive_count(problem.tiles, 0);
  for (const Message& message : order) {
    const TransferInfo& transfer = problem.transfers[message.transfer];
    ++send_count[transfer.source];
    for (const ReceiverInfo& r : transfer.receivers) ++receive_count[r.tile];
  }
  for (uint32_t tile = 0; tile < problem.tiles; ++tile) {
    sends[tile].reserve(send_count[tile]);
    receives[tile].reserve(receive_count[tile]);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    const Message& message = order[i];
    const TransferInfo& transfer = problem.transfers[message.transfer];
    const int32_t n = static_cast<int32_t>(items_of(message));
    const int32_t t = placement.issue[i];
    sends[transfer.source].push_back({t + 1, static_cast<uint32_t>(n), static_cast<uint32_t>(i), transfer.sctl,
                                      message_item_address(problem, message, 0)});
    end[transfer.source] = std::max(end[transfer.source], t + n);
    const arch::Destination* dests = problem.phase->transfers[message.transfer].destinations.data();
    for (size_t k = 0; k < transfer.receivers.size(); ++k) {
      const ReceiverInfo& r = transfer.receivers[k];
      const int32_t m = t + 1 + r.ttm;
      Receive receive{m, n, r.write_delay, transfer.source,
                      dests[k].address / 4 + message.offset * transfer.item_words()};
      if (transfer.paired) {
        receive.paired = true;
        receive.early = r.early;
        receive.format = r.format;
        receive.source = transfer.source ^ (r.tile & 2u);  // the early member's paired XPIC value
      }
      receives[r.tile].push_back(receive);
      end[r.tile] = std::max(end[r.tile], m + n - 1 + r.write_delay + kReceiveTail);
    }
  }
  // A paired sender's partner is busy until the sender's row ends: a delay-only row.
  for (uint32_t partner : problem.busy_partners)
    end[partner] = std::max(end[partner], end[arch::Topology::partner(partner)]);
  // Tiles are planned in parallel, each into its own slot, then gathered in tile order.
  std::vector<TilePlan> by_tile(problem.tiles);
  arch::parallel_for_each(uint32_t{0}, problem.tiles, [&](uint32_t tile) {
    if (end[tile] >= 0) by_tile[tile] = plan_tile(problem, tile, sends[tile], receives[tile], end[tile]);
  });
  std::vector<TilePlan> plans;
  for (uint32_t tile = 0; tile < problem.tiles; ++tile) {
    if (end[tile] >= 0) plans.push_back(std::move(by_tile[tile]));
  }
  return plans;
}

}  // namespace lockstep::compiler
