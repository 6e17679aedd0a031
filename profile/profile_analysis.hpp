#pragma once
// What the IPU21 stack's profile query tool computes (docs/IPU21-DEVICE.md 15.5), on
// Lockstep's in-memory profile: the samples placed on one timeline (origin, crop), filters,
// grouping with per-group statistics, the phases view (work grouped by the next global
// exchange) with its exchange summary, and the whole-profile summary.
// Definitions, field by field: docs/profile-queries.md. Plain C++: no simulator.
#include <compare>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "profile/profile.hpp"

namespace lockstep::replay {

// ---- The timeline -------------------------------------------------------------------

// One sample on the timeline, in cycles from the origin (after the crop, if any).
struct PlacedSample {
  uint32_t tile = 0;    // index into Profile::tiles
  uint32_t sample = 0;  // index into that tile's samples
  uint64_t offset = 0;
  uint64_t duration = 0;
  uint64_t end() const { return offset + duration; }
};

struct ProfileTimeline {
  uint64_t origin = 0;                // absolute cycle of the earliest first sample (offset 0 uncropped)
  uint64_t crop = 0;                  // cycles cut from the front: the latest first-sample offset (0: shared clock)
  uint64_t span = 0;                  // the latest sample end
  std::vector<PlacedSample> samples;  // by tile (profile order), then by start
};

// Origin: the earliest first-sample start over tiles. Crop (unless `shared_clock`): every
// offset shifted back by the latest first-sample offset, the parts before it clipped and
// samples left with no cycles dropped. InputError for a sample whose step index is out of
// range or whose end precedes its start.
ProfileTimeline place_samples(const arch::Profile& profile, bool shared_clock);

// cycles × 1000 / clock_hz (0 when the clock is unknown).
double cycles_to_ms(uint64_t cycles, uint64_t clock_hz);

// InputError "OPTION: cycle N is outside the profile's span 0..S" unless at < span.
void check_offset_in_span(const ProfileTimeline& timeline, uint64_t at, const std::string& option);

// True when the step is an exchange for the phases view: an exchange step, or a
// synchronization step with the exchange phase bit (a tile that only syncs with it).
bool is_exchange_step(const arch::ProfileStep& step);

// ---- Filters and groups -------------------------------------------------------------

struct SampleFilter {
  std::optional<arch::ProfileStepKind> kind;
  std::optional<std::string> kernel;         // exact
  std::optional<std::string> operation;      // substring
  std::optional<std::set<uint32_t>> tiles;   // physical tile ids
  std::optional<std::set<uint32_t>> phases;  // Step.phase values
  std::optional<std::string> metadata_name;
  std::optional<std::string> metadata_value;  // only with metadata_name
  std::optional<uint32_t> epoch;
  std::optional<uint64_t> at_offset;  // offset <= at < offset + duration
};

bool sample_matches(const arch::Profile& profile, const PlacedSample& sample, const SampleFilter& filter);

enum class GroupKey { Kind, Kernel, Operation, Phase, Tile, Metadata };
struct GroupBy {
  GroupKey key = GroupKey::Kernel;
  std::string metadata_name;  // GroupKey::Metadata
};
// "kind", "kernel", "operation", "phase", "tile" or "meta:NAME"; InputError otherwise.
GroupBy parse_group_by(const std::string& text);
std::string group_by_name(const GroupBy& group_by);

// A sample's group name: kind name, kernel ("(no kernel)"), operation ("(no operation)"),
// "phase P/E" (" #I" added for a later invocation), "tile N", or the metadata value
// ("(missing)").
std::string group_name(const arch::Profile& profile, const PlacedSample& sample, const GroupBy& group_by);

struct GroupStats {
  std::string name;
  uint64_t samples = 0;
  uint64_t tiles = 0;         // distinct tiles
  uint64_t phases = 0;        // distinct (phase, epoch, invocation)
  uint64_t phase_cycles = 0;  // length of the union of the sample intervals
  uint64_t work_cycles = 0;   // sum of durations
  double occupancy = 0;       // work / phase cycles: average active tiles
  double mean = 0;
  uint64_t p50 = 0, p95 = 0, max = 0;  // durations: sorted[(n - 1) * p / 100]
  uint64_t first_offset = 0;           // earliest start
  uint64_t last_offset = 0;            // latest start
  uint64_t end_offset = 0;             // latest end
};

// Statistics of `samples` (any order) under one name.
GroupStats group_stats(const std::string& name, const arch::Profile& profile, const std::vector<PlacedSample>& samples);

// The matching samples grouped; sorted by phase cycles descending, then first offset,
// then name. No match: an empty vector.
std::vector<GroupStats> query_groups(const arch::Profile& profile, const ProfileTimeline& timeline,
                                     const SampleFilter& filter, const GroupBy& group_by);

// The `count` longest matching samples, longest first (ties: offset, tile).
std::vector<PlacedSample> longest_samples(const arch::Profile& profile, const ProfileTimeline& timeline,
                                          const SampleFilter& filter, size_t count);

// ---- Exchanges and the phases view --------------------------------------------------

struct ExchangeKey {
  uint32_t invocation = 0;
  uint32_t epoch = 0;
  uint32_t phase = 0;  // the exchange phase id (the phase bit cleared)
  auto operator<=>(const ExchangeKey&) const = default;
};

// Cycles of the exchange horizon summed over tiles, by what the tile does then.
struct RoleCycles {
  uint64_t send = 0, receive = 0, both = 0, partner_busy = 0, idle = 0;
  uint64_t total() const { return send + receive + both + partner_busy + idle; }
  RoleCycles& operator+=(const RoleCycles& other);
};

enum class ExchangeRole : uint8_t { Send = 0, Receive = 1, Both = 2, PartnerBusy = 3, Idle = 4 };
struct RoleSegment {
  uint32_t start = 0, end = 0;
  ExchangeRole role = ExchangeRole::Idle;
};

// One tile's roles over [0, event_cycles), as adjacent segments (equal neighbours merged):
// send and receive at once is Both; partner busy counts only when the tile neither sends
// nor receives; no activity is Idle. Activities are clipped to the horizon.
std::vector<RoleSegment> role_segments(const std::vector<arch::ExchangeActivity>& activities, uint32_t event_cycles);

// The same, summed by role. One tile's roles over [0, event_cycles): send and receive at once is
// "both"; partner busy counts only when the tile neither sends nor receives; no activity is idle.
RoleCycles role_cycles(const std::vector<arch::ExchangeActivity>& activities, uint32_t event_cycles);

// One global exchange, (invocation, epoch, phase), over every tile that took part.
struct ExchangeWindow {
  ExchangeKey key;
  std::string label;             // the phase label the exchange steps carry
  uint32_t tiles = 0;            // tiles with an exchange step
  uint32_t sync_only_tiles = 0;  // tiles with only the synchronization step
  uint32_t event_cycles = 0;     // scheduled horizon (the largest any step carries)
  uint64_t min_start = 0, max_start = 0, max_end = 0;
  uint64_t measured() const { return max_end - max_start; }  // from the last tile's entry
  uint64_t arrival_wait() const { return max_start - min_start; }
  int64_t boundary() const { return static_cast<int64_t>(measured()) - event_cycles; }
  // The renderer's event start: the end less the scheduled horizon (0 at the earliest).
  uint64_t event_start() const;
  RoleCycles roles;
};

// Every exchange window of the timeline, in key order.
std::vector<ExchangeWindow> exchange_windows(const arch::Profile& profile, const ProfileTimeline& timeline);

struct KernelCycles {
  std::string kernel;
  uint64_t cycles = 0;
  uint64_t samples = 0;
};

// The work before one global exchange (and the exchange itself), over all tiles.
struct PhaseGroup {
  std::optional<ExchangeWindow> exchange;  // none: the work after the last exchange
  uint64_t start = 0, end = 0;             // the group's first start and last end
  uint64_t cycles() const { return end - start; }
  uint32_t tiles = 0;                   // tiles with a sample in the group
  uint64_t compute_cycles = 0;          // compute samples (not those marked active=false)
  uint64_t synchronization_cycles = 0;  // synchronization and idle samples before the exchange
  // compute / (cycles × tiles): the share of the tiles' time spent computing, 0..1.
  double occupancy = 0;
  double active_tiles = 0;            // compute / cycles: tiles computing on average
  std::vector<KernelCycles> kernels;  // by cycles descending, then name
};

// Compute and synchronization samples grouped by the next exchange on their tile
// (an exchange step or a synchronization step with the phase bit); the group takes the
// exchange's key. Sorted by start.
std::vector<PhaseGroup> phase_groups(const arch::Profile& profile, const ProfileTimeline& timeline);

struct PhaseFilter {
  std::optional<uint32_t> epoch;
  std::optional<uint64_t> max_cycles;
  std::optional<double> max_occupancy;
  std::optional<uint64_t> at_offset;  // start <= at < end
};
bool phase_matches(const PhaseGroup& group, const PhaseFilter& filter);

// start (ascending, the default), cycles (longest first), occupancy (lowest first),
// compute (most first), exchange (measured, longest first), wait (longest first),
// boundary (largest first), phase (key order).
enum class PhaseSort { Start, Cycles, Occupancy, Compute, Exchange, Wait, Boundary, Phase };
PhaseSort parse_phase_sort(const std::string& text);  // InputError naming the keys
const std::vector<std::string>& phase_sort_names();
void sort_phase_groups(std::vector<PhaseGroup>& groups, PhaseSort sort);

// ---- The summary --------------------------------------------------------------------

struct TileTotals {
  uint32_t physical_tile = 0;
  uint64_t compute = 0, exchange = 0, synchronization = 0, idle = 0;
};

struct ProfileSummary {
  uint64_t tiles = 0;  // tiles with samples on the timeline
  uint64_t samples = 0;
  uint64_t span = 0;
  uint64_t exchanges = 0;  // exchange windows
  std::vector<GroupStats> by_kind, by_operation, by_kernel;
  std::vector<TileTotals> busiest, idlest;  // by compute cycles: most first, least first
};
ProfileSummary summarize_profile(const arch::Profile& profile, const ProfileTimeline& timeline, size_t tile_count);

}  // namespace lockstep::replay
