// The timeline, filters, groups and summary of docs/profile-queries.md.
#include "profile/profile_analysis.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "io/errors.hpp"

namespace lockstep::replay {
namespace {

const arch::ProfileStep& step_of(const arch::Profile& profile, const PlacedSample& placed) {
  return profile.steps[profile.tiles[placed.tile].samples[placed.sample].step];
}

const arch::CycleSample& sample_of(const arch::Profile& profile, const PlacedSample& placed) {
  return profile.tiles[placed.tile].samples[placed.sample];
}

void check_sample(const arch::Profile& profile, size_t tile, size_t index) {
  const auto& tile_profile = profile.tiles[tile];
  const auto& sample = tile_profile.samples[index];
  const std::string where =
      "profile: tile " + std::to_string(tile_profile.physical_tile) + " sample " + std::to_string(index) + ": ";
  if (sample.step >= profile.steps.size()) {
    throw InputError(where + "names step " + std::to_string(sample.step) + " of " +
                     std::to_string(profile.steps.size()));
  }
  if (sample.end_cycle < sample.start_cycle) {
    throw InputError(where + "ends at cycle " + std::to_string(sample.end_cycle) + " before its start " +
                     std::to_string(sample.start_cycle));
  }
}

// Length of the union of [offset, end) intervals.
uint64_t union_length(std::vector<std::pair<uint64_t, uint64_t>> intervals) {
  if (intervals.empty()) return 0;
  std::sort(intervals.begin(), intervals.end());
  uint64_t total = 0;
  auto [begin, end] = intervals.front();
  for (const auto& [next_begin, next_end] : intervals) {
    if (next_begin > end) {  // a gap: close the covered run
      total += end - begin;
      begin = next_begin;
      end = next_end;
    } else {
      end = std::max(end, next_end);
    }
  }
  return total + (end - begin);
}

std::string phase_group_name(const arch::ProfileStep& step, const arch::CycleSample& sample) {
  std::string name = "phase " + std::to_string(step.phase) + "/" + std::to_string(sample.epoch);
  if (sample.invocation > 0) name += " #" + std::to_string(sample.invocation);
  return name;
}

}  // namespace

ProfileTimeline place_samples(const arch::Profile& profile, bool shared_clock) {
  ProfileTimeline timeline;
  // Origin: the earliest first sample over tiles (the stack's "minimum signed difference
  // from the first tile's first sample"; cycles are already unwrapped here).
  bool any = false;
  for (const auto& tile : profile.tiles) {
    if (tile.samples.empty()) continue;
    timeline.origin =
        any ? std::min(timeline.origin, tile.samples.front().start_cycle) : tile.samples.front().start_cycle;
    any = true;
  }
  if (!shared_clock) {
    for (const auto& tile : profile.tiles) {
      if (!tile.samples.empty()) {
        timeline.crop = std::max(timeline.crop, tile.samples.front().start_cycle - timeline.origin);
      }
    }
  }
  for (uint32_t t = 0; t < profile.tiles.size(); ++t) {
    const auto& samples = profile.tiles[t].samples;
    for (uint32_t i = 0; i < samples.size(); ++i) {
      check_sample(profile, t, i);
      // Samples before the origin (out of start order) are clipped to it.
      const uint64_t start = std::max(samples[i].start_cycle, timeline.origin) - timeline.origin;
      const uint64_t end = std::max(samples[i].end_cycle, timeline.origin) - timeline.origin;
      const uint64_t from = std::max(start, timeline.crop);
      if (!shared_clock && end <= from) continue;  // nothing left after the crop
      const uint64_t offset = from - timeline.crop;
      const uint64_t duration = end > from ? end - from : 0;
      timeline.samples.push_back({t, i, offset, duration});
      timeline.span = std::max(timeline.span, offset + duration);
    }
  }
  return timeline;
}

double cycles_to_ms(uint64_t cycles, uint64_t clock_hz) {
  return clock_hz == 0 ? 0.0 : static_cast<double>(cycles) * 1000.0 / static_cast<double>(clock_hz);
}

void check_offset_in_span(const ProfileTimeline& timeline, uint64_t at, const std::string& option) {
  if (at < timeline.span) return;
  if (timeline.span == 0) throw InputError(option + ": the profile has no samples to look at");
  throw InputError(option + ": cycle " + std::to_string(at) + " is outside the profile's span 0.." +
                   std::to_string(timeline.span - 1));
}

bool is_exchange_step(const arch::ProfileStep& step) {
  return step.kind == arch::ProfileStepKind::Exchange ||
         (step.kind == arch::ProfileStepKind::Synchronization && (step.phase & arch::kExchangePhaseBit) != 0);
}

bool sample_matches(const arch::Profile& profile, const PlacedSample& placed, const SampleFilter& filter) {
  const auto& step = step_of(profile, placed);
  const auto& sample = sample_of(profile, placed);
  if (filter.kind && step.kind != *filter.kind) return false;
  if (filter.kernel && step.kernel != *filter.kernel) return false;
  if (filter.operation && step.operation.find(*filter.operation) == std::string::npos) return false;
  if (filter.tiles && !filter.tiles->count(profile.tiles[placed.tile].physical_tile)) return false;
  if (filter.phases && !filter.phases->count(step.phase)) return false;
  if (filter.epoch && sample.epoch != *filter.epoch) return false;
  if (filter.metadata_name) {
    const std::string* value = arch::find_metadata(step, *filter.metadata_name);
    if (value == nullptr) return false;
    if (filter.metadata_value && *value != *filter.metadata_value) return false;
  }
  if (filter.at_offset && !(placed.offset <= *filter.at_offset && *filter.at_offset < placed.end())) return false;
  return true;
}

GroupBy parse_group_by(const std::string& text) {
  static const std::map<std::string, GroupKey> keys = {{"kind", GroupKey::Kind},
                                                       {"kernel", GroupKey::Kernel},
                                                       {"operation", GroupKey::Operation},
                                                       {"phase", GroupKey::Phase},
                                                       {"tile", GroupKey::Tile}};
  if (auto it = keys.find(text); it != keys.end()) return {it->second, ""};
  if (text.rfind("meta:", 0) == 0 && text.size() > 5) return {GroupKey::Metadata, text.substr(5)};
  throw InputError("--group-by: '" + text + "' is not one of kind, kernel, operation, phase, tile, meta:NAME");
}

std::string group_by_name(const GroupBy& group_by) {
  switch (group_by.key) {
    case GroupKey::Kind:
      return "kind";
    case GroupKey::Kernel:
      return "kernel";
    case GroupKey::Operation:
      return "operation";
    case GroupKey::Phase:
      return "phase";
    case GroupKey::Tile:
      return "tile";
    case GroupKey::Metadata:
      return "meta:" + group_by.metadata_name;
  }
  return "";
}

std::string group_name(const arch::Profile& profile, const PlacedSample& placed, const GroupBy& group_by) {
  const auto& step = step_of(profile, placed);
  switch (group_by.key) {
    case GroupKey::Kind:
      return arch::profile_step_kind_name(step.kind);
    case GroupKey::Kernel:
      return step.kernel.empty() ? "(no kernel)" : step.kernel;
    case GroupKey::Operation:
      return step.operation.empty() ? "(no operation)" : step.operation;
    case GroupKey::Phase:
      return phase_group_name(step, sample_of(profile, placed));
    case GroupKey::Tile:
      return "tile " + std::to_string(profile.tiles[placed.tile].physical_tile);
    case GroupKey::Metadata: {
      const std::string* value = arch::find_metadata(step, group_by.metadata_name);
      return value == nullptr ? "(missing)" : *value;
    }
  }
  return "";
}

GroupStats group_stats(const std::string& name, const arch::Profile& profile,
                       const std::vector<PlacedSample>& samples) {
  GroupStats stats;
  stats.name = name;
  stats.samples = samples.size();
  if (samples.empty()) return stats;
  std::set<uint32_t> tiles;
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> phases;
  std::vector<std::pair<uint64_t, uint64_t>> intervals;
  std::vector<uint64_t> durations;
  stats.first_offset = std::numeric_limits<uint64_t>::max();
  for (const auto& placed : samples) {
    const auto& sample = sample_of(profile, placed);
    tiles.insert(placed.tile);
    phases.insert({step_of(profile, placed).phase, sample.epoch, sample.invocation});
    intervals.emplace_back(placed.offset, placed.end());
    durations.push_back(placed.duration);
    stats.work_cycles += placed.duration;
    stats.first_offset = std::min(stats.first_offset, placed.offset);
    stats.last_offset = std::max(stats.last_offset, placed.offset);
    stats.end_offset = std::max(stats.end_offset, placed.end());
  }
  stats.tiles = tiles.size();
  stats.phases = phases.size();
  stats.phase_cycles = union_length(std::move(intervals));
  stats.occupancy =
      stats.phase_cycles == 0 ? 0.0 : static_cast<double>(stats.work_cycles) / static_cast<double>(stats.phase_cycles);
  stats.mean = static_cast<double>(stats.work_cycles) / static_cast<double>(stats.samples);
  std::sort(durations.begin(), durations.end());
  const size_t n = durations.size();
  stats.p50 = durations[(n - 1) * 50 / 100];
  stats.p95 = durations[(n - 1) * 95 / 100];
  stats.max = durations.back();
  return stats;
}

std::vector<GroupStats> query_groups(const arch::Profile& profile, const ProfileTimeline& timeline,
                                     const SampleFilter& filter, const GroupBy& group_by) {
  std::map<std::string, std::vector<PlacedSample>> groups;
  for (const auto& placed : timeline.samples) {
    if (sample_matches(profile, placed, filter)) groups[group_name(profile, placed, group_by)].push_back(placed);
  }
  std::vector<GroupStats> result;
  for (const auto& [name, samples] : groups) result.push_back(group_stats(name, profile, samples));
  std::sort(result.begin(), result.end(), [](const GroupStats& a, const GroupStats& b) {
    if (a.phase_cycles != b.phase_cycles) return a.phase_cycles > b.phase_cycles;
    return std::tie(a.first_offset, a.name) < std::tie(b.first_offset, b.name);
  });
  return result;
}

std::vector<PlacedSample> longest_samples(const arch::Profile& profile, const ProfileTimeline& timeline,
                                          const SampleFilter& filter, size_t count) {
  std::vector<PlacedSample> matching;
  for (const auto& placed : timeline.samples) {
    if (sample_matches(profile, placed, filter)) matching.push_back(placed);
  }
  const auto longer = [](const PlacedSample& a, const PlacedSample& b) {
    if (a.duration != b.duration) return a.duration > b.duration;
    return std::tie(a.offset, a.tile, a.sample) < std::tie(b.offset, b.tile, b.sample);
  };
  const size_t n = std::min(count, matching.size());
  std::partial_sort(matching.begin(), matching.begin() + static_cast<std::ptrdiff_t>(n), matching.end(), longer);
  matching.resize(n);
  return matching;
}

ProfileSummary summarize_profile(const arch::Profile& profile, const ProfileTimeline& timeline, size_t tile_count) {
  ProfileSummary summary;
  summary.samples = timeline.samples.size();
  summary.span = timeline.span;
  summary.exchanges = exchange_windows(profile, timeline).size();
  const SampleFilter all;
  summary.by_kind = query_groups(profile, timeline, all, {GroupKey::Kind, ""});
  summary.by_operation = query_groups(profile, timeline, all, {GroupKey::Operation, ""});
  summary.by_kernel = query_groups(profile, timeline, all, {GroupKey::Kernel, ""});
  std::map<uint32_t, TileTotals> tiles;  // by profile index
  for (const auto& placed : timeline.samples) {
    auto& totals = tiles[placed.tile];
    totals.physical_tile = profile.tiles[placed.tile].physical_tile;
    switch (step_of(profile, placed).kind) {
      case arch::ProfileStepKind::Compute:
        totals.compute += placed.duration;
        break;
      case arch::ProfileStepKind::Exchange:
        totals.exchange += placed.duration;
        break;
      case arch::ProfileStepKind::Synchronization:
        totals.synchronization += placed.duration;
        break;
      case arch::ProfileStepKind::Idle:
        totals.idle += placed.duration;
        break;
    }
  }
  summary.tiles = tiles.size();
  std::vector<TileTotals> ranked;
  for (const auto& [index, totals] : tiles) ranked.push_back(totals);
  const auto busier = [](const TileTotals& a, const TileTotals& b) {
    return a.compute != b.compute ? a.compute > b.compute : a.physical_tile < b.physical_tile;
  };
  std::sort(ranked.begin(), ranked.end(), busier);
  const size_t n = std::min(tile_count, ranked.size());
  summary.busiest.assign(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n));
  std::stable_sort(ranked.begin(), ranked.end(), [](const TileTotals& a, const TileTotals& b) {
    return a.compute != b.compute ? a.compute < b.compute : a.physical_tile < b.physical_tile;
  });
  summary.idlest.assign(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n));
  return summary;
}

}  // namespace lockstep::replay
