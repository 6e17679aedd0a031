// Exchange windows and the phases view of docs/profile-queries.md: each tile's work is
// charged to the next global exchange on that tile, the stack's "profile-phases" grouping.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "io/errors.hpp"
#include "profile/profile_analysis.hpp"

namespace lockstep::replay {
namespace {

const arch::ProfileStep& step_of(const arch::Profile& profile, const PlacedSample& placed) {
  return profile.steps[profile.tiles[placed.tile].samples[placed.sample].step];
}

ExchangeKey exchange_key(const arch::Profile& profile, const PlacedSample& placed) {
  const auto& sample = profile.tiles[placed.tile].samples[placed.sample];
  return {sample.invocation, sample.epoch, profile.steps[sample.step].phase & ~arch::kExchangePhaseBit};
}

// A compute sample that the stack's renderer draws as idle does not count as work.
bool counts_as_compute(const arch::ProfileStep& step) {
  if (step.kind != arch::ProfileStepKind::Compute) return false;
  const std::string* active = arch::find_metadata(step, "active");
  return active == nullptr || *active != "false";
}

struct PhaseAccumulator {
  bool any = false;
  uint64_t start = 0, end = 0;
  std::set<uint32_t> tiles;
  uint64_t compute = 0, synchronization = 0;
  std::map<std::string, KernelCycles> kernels;

  void add_interval(const PlacedSample& placed) {
    start = any ? std::min(start, placed.offset) : placed.offset;
    end = any ? std::max(end, placed.end()) : placed.end();
    any = true;
    tiles.insert(placed.tile);
  }

  void add_work(const arch::ProfileStep& step, const PlacedSample& placed) {
    add_interval(placed);
    if (counts_as_compute(step)) {
      compute += placed.duration;
      auto& kernel = kernels[step.kernel.empty() ? "(no kernel)" : step.kernel];
      kernel.cycles += placed.duration;
      kernel.samples += 1;
    } else {
      synchronization += placed.duration;
    }
  }

  PhaseGroup finish(std::optional<ExchangeWindow> exchange) const {
    PhaseGroup group;
    group.exchange = std::move(exchange);
    group.start = start;
    group.end = end;
    group.tiles = static_cast<uint32_t>(tiles.size());
    group.compute_cycles = compute;
    group.synchronization_cycles = synchronization;
    const double cycles = static_cast<double>(end - start);
    if (cycles > 0 && group.tiles > 0) {
      group.active_tiles = static_cast<double>(compute) / cycles;
      group.occupancy = group.active_tiles / group.tiles;
    }
    for (const auto& [name, kernel] : kernels) {
      group.kernels.push_back(kernel);
      group.kernels.back().kernel = name;
    }
    std::sort(group.kernels.begin(), group.kernels.end(), [](const KernelCycles& a, const KernelCycles& b) {
      return a.cycles != b.cycles ? a.cycles > b.cycles : a.kernel < b.kernel;
    });
    return group;
  }
};

}  // namespace

RoleCycles& RoleCycles::operator+=(const RoleCycles& other) {
  send += other.send;
  receive += other.receive;
  both += other.both;
  partner_busy += other.partner_busy;
  idle += other.idle;
  return *this;
}

std::vector<RoleSegment> role_segments(const std::vector<arch::ExchangeActivity>& activities, uint32_t event_cycles) {
  std::vector<RoleSegment> segments;
  if (event_cycles == 0) return segments;
  // A sweep over the activity boundaries, clipped to the horizon: +1 at a start, -1 at an end.
  std::vector<std::tuple<uint32_t, int, arch::ActivityKind>> events;
  for (const auto& activity : activities) {
    const uint32_t begin = std::min(activity.start_cycle, event_cycles);
    const uint32_t end = std::min(activity.end_cycle, event_cycles);
    if (end <= begin) continue;
    events.emplace_back(begin, +1, activity.kind);
    events.emplace_back(end, -1, activity.kind);
  }
  std::sort(events.begin(), events.end());
  int active[3] = {0, 0, 0};  // by ActivityKind
  uint32_t at = 0;
  const auto close = [&](uint32_t until) {
    if (until == at) return;
    const bool send = active[0] > 0, receive = active[1] > 0, busy = active[2] > 0;
    const ExchangeRole role = send && receive ? ExchangeRole::Both
                              : send          ? ExchangeRole::Send
                              : receive       ? ExchangeRole::Receive
                              : busy          ? ExchangeRole::PartnerBusy
                                              : ExchangeRole::Idle;
    if (!segments.empty() && segments.back().role == role && segments.back().end == at) {
      segments.back().end = until;
    } else {
      segments.push_back({at, until, role});
    }
    at = until;
  };
  for (const auto& [position, delta, kind] : events) {
    close(position);
    active[static_cast<int>(kind)] += delta;
  }
  close(event_cycles);
  return segments;
}

RoleCycles role_cycles(const std::vector<arch::ExchangeActivity>& activities, uint32_t event_cycles) {
  RoleCycles roles;
  for (const auto& segment : role_segments(activities, event_cycles)) {
    const uint64_t length = segment.end - segment.start;
    switch (segment.role) {
      case ExchangeRole::Send:
        roles.send += length;
        break;
      case ExchangeRole::Receive:
        roles.receive += length;
        break;
      case ExchangeRole::Both:
        roles.both += length;
        break;
      case ExchangeRole::PartnerBusy:
        roles.partner_busy += length;
        break;
      case ExchangeRole::Idle:
        roles.idle += length;
        break;
    }
  }
  return roles;
}

uint64_t ExchangeWindow::event_start() const { return max_end > event_cycles ? max_end - event_cycles : 0; }

std::vector<ExchangeWindow> exchange_windows(const arch::Profile& profile, const ProfileTimeline& timeline) {
  std::map<ExchangeKey, ExchangeWindow> windows;
  std::map<ExchangeKey, std::pair<std::set<uint32_t>, std::set<uint32_t>>> tiles;  // exchange, sync only
  // A step runs once per Repeat iteration and invocation: its roles are worked out once.
  std::vector<std::optional<RoleCycles>> step_roles(profile.steps.size());
  for (const auto& placed : timeline.samples) {
    const auto& step = step_of(profile, placed);
    if (!is_exchange_step(step)) continue;
    const ExchangeKey key = exchange_key(profile, placed);
    auto [it, added] = windows.try_emplace(key);
    ExchangeWindow& window = it->second;
    if (added) {
      window.key = key;
      window.min_start = window.max_start = placed.offset;
      window.max_end = placed.end();
    }
    window.min_start = std::min(window.min_start, placed.offset);
    window.max_start = std::max(window.max_start, placed.offset);
    window.max_end = std::max(window.max_end, placed.end());
    if (window.label.empty()) window.label = step.phase_label;
    auto& [exchanging, syncing] = tiles[key];
    if (step.kind == arch::ProfileStepKind::Exchange) {
      exchanging.insert(placed.tile);
      window.event_cycles = std::max(window.event_cycles, step.event_cycles);
      auto& roles = step_roles[profile.tiles[placed.tile].samples[placed.sample].step];
      if (!roles) roles = role_cycles(step.activities, step.event_cycles);
      window.roles += *roles;
    } else {
      syncing.insert(placed.tile);
    }
  }
  std::vector<ExchangeWindow> result;
  for (auto& [key, window] : windows) {
    auto& [exchanging, syncing] = tiles[key];
    for (uint32_t tile : exchanging) syncing.erase(tile);
    window.tiles = static_cast<uint32_t>(exchanging.size());
    window.sync_only_tiles = static_cast<uint32_t>(syncing.size());
    result.push_back(std::move(window));
  }
  return result;
}

std::vector<PhaseGroup> phase_groups(const arch::Profile& profile, const ProfileTimeline& timeline) {
  std::map<ExchangeKey, ExchangeWindow> windows;
  for (auto& window : exchange_windows(profile, timeline)) windows.emplace(window.key, std::move(window));
  std::map<ExchangeKey, PhaseAccumulator> groups;
  PhaseAccumulator after_last;  // work with no exchange after it on its tile
  // timeline.samples runs tile by tile in start order: work waits in `pending` until the
  // tile's next exchange names its group.
  std::vector<PlacedSample> pending;
  const auto flush_to = [&](PhaseAccumulator& group) {
    for (const auto& placed : pending) group.add_work(step_of(profile, placed), placed);
    pending.clear();
  };
  for (size_t i = 0; i < timeline.samples.size(); ++i) {
    const PlacedSample& placed = timeline.samples[i];
    if (is_exchange_step(step_of(profile, placed))) {
      PhaseAccumulator& group = groups[exchange_key(profile, placed)];
      flush_to(group);
      group.add_interval(placed);
    } else {
      pending.push_back(placed);
    }
    const bool tile_ends = i + 1 == timeline.samples.size() || timeline.samples[i + 1].tile != placed.tile;
    if (tile_ends) flush_to(after_last);
  }
  std::vector<PhaseGroup> result;
  for (const auto& [key, group] : groups) result.push_back(group.finish(windows.at(key)));
  if (after_last.any) result.push_back(after_last.finish(std::nullopt));
  sort_phase_groups(result, PhaseSort::Start);
  return result;
}

bool phase_matches(const PhaseGroup& group, const PhaseFilter& filter) {
  if (filter.epoch && (!group.exchange || group.exchange->key.epoch != *filter.epoch)) return false;
  if (filter.max_cycles && group.cycles() > *filter.max_cycles) return false;
  if (filter.max_occupancy && group.occupancy > *filter.max_occupancy) return false;
  if (filter.at_offset && !(group.start <= *filter.at_offset && *filter.at_offset < group.end)) return false;
  return true;
}

const std::vector<std::string>& phase_sort_names() {
  static const std::vector<std::string> names = {"start",    "cycles", "occupancy", "compute",
                                                 "exchange", "wait",   "boundary",  "phase"};
  return names;
}

PhaseSort parse_phase_sort(const std::string& text) {
  const auto& names = phase_sort_names();
  const auto it = std::find(names.begin(), names.end(), text);
  if (it != names.end()) return static_cast<PhaseSort>(it - names.begin());
  std::string list;
  for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
  throw InputError("--sort-by: '" + text + "' is not one of " + list);
}

void sort_phase_groups(std::vector<PhaseGroup>& groups, PhaseSort sort) {
  // The sort key, larger first where the definition says so; ties by start, then key
  // (the group after the last exchange last).
  const auto key = [sort](const PhaseGroup& g) -> double {
    const ExchangeWindow* x = g.exchange ? &*g.exchange : nullptr;
    switch (sort) {
      case PhaseSort::Start:
        return static_cast<double>(g.start);
      case PhaseSort::Cycles:
        return -static_cast<double>(g.cycles());
      case PhaseSort::Occupancy:
        return g.occupancy;
      case PhaseSort::Compute:
        return -static_cast<double>(g.compute_cycles);
      case PhaseSort::Exchange:
        return x ? -static_cast<double>(x->measured()) : 0.0;
      case PhaseSort::Wait:
        return x ? -static_cast<double>(x->arrival_wait()) : 0.0;
      case PhaseSort::Boundary:
        return x ? -static_cast<double>(x->boundary()) : 0.0;
      case PhaseSort::Phase:
        return 0.0;
    }
    return 0.0;
  };
  const auto tie = [](const PhaseGroup& g) {
    return std::make_tuple(!g.exchange.has_value(), g.exchange ? g.exchange->key : ExchangeKey{});
  };
  std::stable_sort(groups.begin(), groups.end(), [&](const PhaseGroup& a, const PhaseGroup& b) {
    const double ka = key(a), kb = key(b);
    if (ka != kb) return ka < kb;
    if (sort != PhaseSort::Phase && a.start != b.start) return a.start < b.start;
    return tie(a) < tie(b);
  });
}

}  // namespace lockstep::replay
