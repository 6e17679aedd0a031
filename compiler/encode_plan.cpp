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

}  // namespace

uint32_t message_item_address(const PhaseProblem& problem, const Message& message, uint32_t iteration) {
  const arch::Transfer& transfer = problem.phase->transfers[message.transfer];
  return transfer.source_addresses[iteration] / 4 + message.offset;
}

std::vector<TilePlan> make_tile_plans(const PhaseProblem& problem, const Order& order, const Placement& placement) {
  const uint32_t neutral = problem.machine->neutral_mux;
  std::vector<std::vector<SendSegment>> sends(problem.tiles);
  std::vector<std::vector<RawControl>> raw(problem.tiles);
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
      auto& list = raw[r.tile];
      list.push_back({m, 1, transfer.source});
      list.push_back({m + n, 0, neutral});
      list.push_back({m + r.write_delay, 2, dests[k].address / 4 + message.offset});
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
    auto& list = raw[tile];
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
    plan.end_event = end[tile];
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace lockstep::compiler
