#include "model/exchange_activities.hpp"

#include <algorithm>
#include <map>

namespace lockstep::model {
namespace {

arch::ExchangeActivity interval(arch::ActivityKind kind, int64_t begin, int64_t end) {
  const auto clip = [](int64_t v) { return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, UINT32_MAX)); };
  return {kind, clip(begin), clip(end)};
}

// Sorted by (kind, start); one kind's overlapping or touching intervals become one.
void merge(std::vector<arch::ExchangeActivity>& list) {
  std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
    return std::tie(a.kind, a.start_cycle, a.end_cycle) < std::tie(b.kind, b.start_cycle, b.end_cycle);
  });
  std::vector<arch::ExchangeActivity> out;
  for (const auto& a : list) {
    if (a.end_cycle <= a.start_cycle) continue;
    if (!out.empty() && out.back().kind == a.kind && a.start_cycle <= out.back().end_cycle) {
      out.back().end_cycle = std::max(out.back().end_cycle, a.end_cycle);
    } else {
      out.push_back(a);
    }
  }
  list = std::move(out);
}

}  // namespace

std::shared_ptr<const PhaseActivities> exchange_activities(const PhaseOutcome& outcome,
                                                           std::span<const PhaseTile> tiles) {
  auto result = std::make_shared<PhaseActivities>();
  result->horizon = outcome.horizon;
  result->row_end = outcome.tile_horizon;
  auto& per_tile = result->per_tile;
  per_tile.resize(tiles.size());
  std::map<uint32_t, size_t> by_physical;
  for (size_t i = 0; i < tiles.size(); ++i) by_physical[tiles[i].physical] = i;
  for (size_t i = 0; i < outcome.schedules.size() && i < tiles.size(); ++i) {
    for (const SendRun& run : outcome.schedules[i].runs) {
      per_tile[i].push_back(interval(arch::ActivityKind::Send, run.first_event, run.first_event + run.items));
      if (!run.wide()) continue;
      const auto partner = by_physical.find(tiles[i].physical ^ 2u);
      if (partner == by_physical.end()) continue;
      per_tile[partner->second].push_back(
          interval(arch::ActivityKind::PartnerBusy, run.issue_event, outcome.tile_horizon[i]));
    }
  }
  for (const WriteRun& w : outcome.writes) {
    const int64_t items = w.bytes / w.item_bytes;
    per_tile[w.receiver].push_back(
        interval(arch::ActivityKind::Receive, w.first_write_event, w.first_write_event + items));
  }
  for (auto& list : per_tile) merge(list);
  return result;
}

}  // namespace lockstep::model
