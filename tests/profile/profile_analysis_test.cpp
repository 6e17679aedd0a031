// The query arithmetic of docs/profile-queries.md on small profiles whose answers are
// worked out by hand in the comments.
#include "profile/profile_analysis.hpp"

#include <gtest/gtest.h>

#include "io/errors.hpp"

namespace lockstep::replay {
namespace {

using arch::ActivityKind;
using arch::ProfileStepKind;

// Builds a Profile sample by sample; each sample gets its own step.
struct ProfileBuilder {
  arch::Profile profile;

  ProfileBuilder() { profile.clock_hz = 1'000'000'000; }

  arch::TileProfile& tile(uint32_t physical) {
    for (auto& t : profile.tiles) {
      if (t.physical_tile == physical) return t;
    }
    profile.tiles.push_back({physical, physical, {}});
    return profile.tiles.back();
  }

  arch::ProfileStep& add(uint32_t physical, uint64_t start, uint64_t end, ProfileStepKind kind,
                         const std::string& kernel, uint32_t phase, uint32_t epoch = 0) {
    profile.steps.push_back({});
    auto& step = profile.steps.back();
    step.kind = kind;
    step.kernel = kernel;
    step.phase = phase;
    step.local_index = phase & ~arch::kExchangePhaseBit;
    tile(physical).samples.push_back({start, end, static_cast<uint32_t>(profile.steps.size() - 1), epoch, 0});
    return step;
  }
};

// Tile 5: compute A [100,160), exchange X1 [160,200) with event cycles 30.
// Tile 7: compute B [130,150), compute A [150,170), then only the sync of X1 [170,200).
// Origin 100; first offsets 0 and 30, so the crop is 30.
ProfileBuilder two_tiles() {
  ProfileBuilder b;
  b.add(5, 100, 160, ProfileStepKind::Compute, "A", 0).operation = "operation.3";
  auto& x = b.add(5, 160, 200, ProfileStepKind::Exchange, "exchange", arch::kExchangePhaseBit | 1);
  x.event_cycles = 30;
  x.phase_label = "layer0/qkv";
  x.activities = {{ActivityKind::Send, 0, 10},
                  {ActivityKind::Receive, 5, 20},
                  {ActivityKind::PartnerBusy, 15, 25},
                  {ActivityKind::Send, 28, 40}};
  b.add(7, 130, 150, ProfileStepKind::Compute, "B", 0).operation = "operation.12";
  b.add(7, 150, 170, ProfileStepKind::Compute, "A", 1).metadata = {{"reason", "Kernel"}, {"kernelSpec", "m4"}};
  b.add(7, 170, 200, ProfileStepKind::Synchronization, "sync", arch::kExchangePhaseBit | 1).metadata = {
      {"reason", "ExchangeBarrier"}};
  return b;
}

TEST(ProfileTimelineTest, CropShiftsByTheLatestFirstSampleAndClipsWhatPrecedesIt) {
  const auto b = two_tiles();
  const ProfileTimeline t = place_samples(b.profile, false);
  EXPECT_EQ(t.origin, 100u);
  EXPECT_EQ(t.crop, 30u);
  ASSERT_EQ(t.samples.size(), 5u);
  // Tile 5's compute [0,60) loses [0,30): offset 0, 30 cycles; its exchange [60,100) -> [30,70).
  EXPECT_EQ(t.samples[0].offset, 0u);
  EXPECT_EQ(t.samples[0].duration, 30u);
  EXPECT_EQ(t.samples[1].offset, 30u);
  EXPECT_EQ(t.samples[1].duration, 40u);
  EXPECT_EQ(t.samples[2].offset, 0u);  // tile 7 B [30,50) -> [0,20)
  EXPECT_EQ(t.samples[2].duration, 20u);
  EXPECT_EQ(t.samples[4].offset, 40u);  // tile 7 sync [70,100) -> [40,70)
  EXPECT_EQ(t.span, 70u);
}

TEST(ProfileTimelineTest, SharedClockKeepsEverySampleFromTheOrigin) {
  const auto b = two_tiles();
  const ProfileTimeline t = place_samples(b.profile, true);
  EXPECT_EQ(t.crop, 0u);
  EXPECT_EQ(t.samples[0].offset, 0u);
  EXPECT_EQ(t.samples[0].duration, 60u);
  EXPECT_EQ(t.samples[2].offset, 30u);
  EXPECT_EQ(t.span, 100u);
}

TEST(ProfileTimelineTest, SamplesWhollyBeforeTheCropAreDropped) {
  ProfileBuilder b;
  b.add(0, 0, 10, ProfileStepKind::Compute, "early", 0);
  b.add(0, 10, 50, ProfileStepKind::Compute, "late", 1);
  b.add(0, 50, 50, ProfileStepKind::Compute, "empty", 2);  // zero length: dropped under the crop
  b.add(1, 20, 40, ProfileStepKind::Compute, "other", 0);
  const ProfileTimeline cropped = place_samples(b.profile, false);
  ASSERT_EQ(cropped.samples.size(), 2u);  // "early" ends at the crop (20), "empty" has no cycles
  EXPECT_EQ(cropped.samples[0].offset, 0u);
  EXPECT_EQ(cropped.samples[0].duration, 30u);
  EXPECT_EQ(place_samples(b.profile, true).samples.size(), 4u);
}

TEST(ProfileTimelineTest, BadStepIndexOrBackwardSampleIsInputError) {
  ProfileBuilder b;
  b.add(0, 10, 20, ProfileStepKind::Compute, "k", 0);
  b.profile.tiles[0].samples[0].step = 9;
  EXPECT_THROW(place_samples(b.profile, false), InputError);
  b.profile.tiles[0].samples[0] = {30, 20, 0, 0, 0};
  EXPECT_THROW(place_samples(b.profile, false), InputError);
}

TEST(ProfileTimelineTest, OffsetOutsideTheSpanNamesTheOption) {
  const auto b = two_tiles();
  const ProfileTimeline t = place_samples(b.profile, false);
  EXPECT_NO_THROW(check_offset_in_span(t, 69, "--at-offset"));
  try {
    check_offset_in_span(t, 70, "--at-offset");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--at-offset: cycle 70 is outside the profile's span 0..69");
  }
}

TEST(ProfileQueryTest, GroupsByKernelWithUnionOccupancyAndPercentiles) {
  const auto b = two_tiles();
  const ProfileTimeline t = place_samples(b.profile, false);
  const auto groups = query_groups(b.profile, t, {}, parse_group_by("kernel"));
  ASSERT_EQ(groups.size(), 4u);
  // A: [0,30) on tile 5 and [20,40) on tile 7: union 40, work 50, occupancy 1.25.
  // exchange [30,70) also spans 40 but starts later; sync [40,70) 30; B [0,20) 20.
  EXPECT_EQ(groups[0].name, "A");
  EXPECT_EQ(groups[1].name, "exchange");
  EXPECT_EQ(groups[2].name, "sync");
  EXPECT_EQ(groups[3].name, "B");
  const GroupStats& a = groups[0];
  EXPECT_EQ(a.samples, 2u);
  EXPECT_EQ(a.tiles, 2u);
  EXPECT_EQ(a.phases, 2u);  // local steps 0 and 1
  EXPECT_EQ(a.phase_cycles, 40u);
  EXPECT_EQ(a.work_cycles, 50u);
  EXPECT_DOUBLE_EQ(a.occupancy, 1.25);
  EXPECT_DOUBLE_EQ(a.mean, 25.0);
  EXPECT_EQ(a.p50, 20u);  // sorted [20, 30]: index (1*50)/100 = 0
  EXPECT_EQ(a.p95, 20u);  // index (1*95)/100 = 0
  EXPECT_EQ(a.max, 30u);
  EXPECT_EQ(a.first_offset, 0u);
  EXPECT_EQ(a.last_offset, 20u);
  EXPECT_EQ(a.end_offset, 40u);
}

TEST(ProfileQueryTest, PercentileIndexIsNMinusOneTimesPOver100RoundedDown) {
  ProfileBuilder b;
  uint64_t at = 0;
  for (uint64_t d = 10; d <= 100; d += 10) {  // ten samples: 10, 20, ..., 100
    b.add(0, at, at + d, ProfileStepKind::Compute, "k", 0);
    at += d;
  }
  const auto groups = query_groups(b.profile, place_samples(b.profile, false), {}, parse_group_by("kernel"));
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].p50, 50u);  // index 9*50/100 = 4
  EXPECT_EQ(groups[0].p95, 90u);  // index 9*95/100 = 8, not the nearest-rank 100
  EXPECT_EQ(groups[0].phase_cycles, 550u);
  EXPECT_DOUBLE_EQ(groups[0].occupancy, 1.0);
}

TEST(ProfileQueryTest, UnionCountsOverlapOnceAndGapsNotAtAll) {
  ProfileBuilder b;
  b.add(0, 0, 10, ProfileStepKind::Compute, "k", 0);
  b.add(0, 20, 30, ProfileStepKind::Compute, "k", 1);
  b.add(1, 0, 5, ProfileStepKind::Compute, "k", 0);
  b.add(1, 5, 25, ProfileStepKind::Compute, "k", 1);
  // Shared clock: [0,10) [20,30) [0,5) [5,25): union [0,30) = 30; work 10+10+5+20 = 45.
  const auto groups = query_groups(b.profile, place_samples(b.profile, true), {}, parse_group_by("kind"));
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].name, "compute");
  EXPECT_EQ(groups[0].phase_cycles, 30u);
  EXPECT_EQ(groups[0].work_cycles, 45u);
  EXPECT_DOUBLE_EQ(groups[0].occupancy, 1.5);
  ProfileBuilder gap;
  gap.add(0, 0, 10, ProfileStepKind::Compute, "k", 0);
  gap.add(0, 40, 50, ProfileStepKind::Compute, "k", 1);
  const auto g = query_groups(gap.profile, place_samples(gap.profile, true), {}, parse_group_by("kind"));
  EXPECT_EQ(g[0].phase_cycles, 20u);
}

TEST(ProfileQueryTest, FiltersNarrowTheSamples) {
  const auto b = two_tiles();
  const ProfileTimeline t = place_samples(b.profile, false);
  const auto count = [&](const SampleFilter& f) {
    uint64_t n = 0;
    for (const auto& g : query_groups(b.profile, t, f, parse_group_by("tile"))) n += g.samples;
    return n;
  };
  SampleFilter f;
  f.kind = ProfileStepKind::Compute;
  EXPECT_EQ(count(f), 3u);
  f = {};
  f.kernel = "A";
  EXPECT_EQ(count(f), 2u);
  f.kernel = "a";  // exact
  EXPECT_EQ(count(f), 0u);
  f = {};
  f.operation = "operation.1";  // substring: operation.12
  EXPECT_EQ(count(f), 1u);
  f = {};
  f.tiles = std::set<uint32_t>{7};
  EXPECT_EQ(count(f), 3u);
  f = {};
  f.phases = std::set<uint32_t>{arch::kExchangePhaseBit | 1};
  EXPECT_EQ(count(f), 2u);
  f = {};
  f.metadata_name = "reason";
  EXPECT_EQ(count(f), 2u);
  f.metadata_value = "Kernel";
  EXPECT_EQ(count(f), 1u);
  f = {};
  f.epoch = 1;
  EXPECT_EQ(count(f), 0u);
  f = {};
  f.at_offset = 30;  // tile 5's exchange [30,70) and tile 7's A [20,40); not tile 5's A [0,30)
  EXPECT_EQ(count(f), 2u);
}

TEST(ProfileQueryTest, GroupNamesForEveryKey) {
  const auto b = two_tiles();
  const ProfileTimeline t = place_samples(b.profile, false);
  const auto names = [&](const std::string& key) {
    std::set<std::string> result;
    for (const auto& g : query_groups(b.profile, t, {}, parse_group_by(key))) result.insert(g.name);
    return result;
  };
  EXPECT_EQ(names("kind"), (std::set<std::string>{"compute", "exchange", "synchronization"}));
  EXPECT_EQ(names("operation"), (std::set<std::string>{"(no operation)", "operation.12", "operation.3"}));
  EXPECT_EQ(names("tile"), (std::set<std::string>{"tile 5", "tile 7"}));
  EXPECT_EQ(names("phase"), (std::set<std::string>{"phase 0/0", "phase 1/0", "phase 2147483649/0"}));
  EXPECT_EQ(names("meta:kernelSpec"), (std::set<std::string>{"(missing)", "m4"}));
  EXPECT_THROW(parse_group_by("colour"), InputError);
  EXPECT_THROW(parse_group_by("meta:"), InputError);
}

TEST(ProfileQueryTest, LongestSamplesComeFirst) {
  const auto b = two_tiles();
  const ProfileTimeline t = place_samples(b.profile, false);
  const auto longest = longest_samples(b.profile, t, {}, 2);
  ASSERT_EQ(longest.size(), 2u);
  EXPECT_EQ(longest[0].duration, 40u);  // the exchange
  EXPECT_EQ(longest[1].duration, 30u);  // tile 5's A at 0 before tile 7's sync at 40
  EXPECT_EQ(longest[1].offset, 0u);
}

TEST(ProfileExchangeTest, RoleCyclesSplitTheHorizon) {
  // send [0,10), receive [5,20), partner busy [15,25), send [28,40) clipped to 30:
  // [0,5) send, [5,10) both, [10,20) receive (busy does not count while receiving),
  // [20,25) partner busy, [25,28) idle, [28,30) send.
  const std::vector<arch::ExchangeActivity> activities = {{ActivityKind::Send, 0, 10},
                                                          {ActivityKind::Receive, 5, 20},
                                                          {ActivityKind::PartnerBusy, 15, 25},
                                                          {ActivityKind::Send, 28, 40}};
  const RoleCycles roles = role_cycles(activities, 30);
  EXPECT_EQ(roles.send, 7u);
  EXPECT_EQ(roles.both, 5u);
  EXPECT_EQ(roles.receive, 10u);
  EXPECT_EQ(roles.partner_busy, 5u);
  EXPECT_EQ(roles.idle, 3u);
  EXPECT_EQ(roles.total(), 30u);
  const auto segments = role_segments(activities, 30);
  ASSERT_EQ(segments.size(), 6u);  // send, both, receive, partner busy, idle, send
  EXPECT_EQ(segments[2].start, 10u);
  EXPECT_EQ(segments[2].end, 20u);
  EXPECT_EQ(segments[2].role, ExchangeRole::Receive);
  EXPECT_EQ(segments[5].role, ExchangeRole::Send);
  EXPECT_EQ(segments[5].end, 30u);
  EXPECT_EQ(role_cycles(activities, 0).total(), 0u);
  EXPECT_EQ(role_cycles({}, 12).idle, 12u);
}

TEST(ProfileExchangeTest, WindowCountsSyncOnlyParticipants) {
  const auto b = two_tiles();
  const auto windows = exchange_windows(b.profile, place_samples(b.profile, false));
  ASSERT_EQ(windows.size(), 1u);
  const ExchangeWindow& w = windows[0];
  EXPECT_EQ(w.key, (ExchangeKey{0, 0, 1}));
  EXPECT_EQ(w.label, "layer0/qkv");
  EXPECT_EQ(w.tiles, 1u);
  EXPECT_EQ(w.sync_only_tiles, 1u);
  // Entries at 30 (tile 5) and 40 (tile 7, the last), both end at 70.
  EXPECT_EQ(w.min_start, 30u);
  EXPECT_EQ(w.max_start, 40u);
  EXPECT_EQ(w.max_end, 70u);
  EXPECT_EQ(w.measured(), 30u);
  EXPECT_EQ(w.arrival_wait(), 10u);
  EXPECT_EQ(w.event_cycles, 30u);
  EXPECT_EQ(w.boundary(), 0);
  EXPECT_EQ(w.event_start(), 40u);
  EXPECT_EQ(w.roles.total(), 30u);  // only the exchange step's horizon
}

TEST(ProfilePhasesTest, WorkGoesToTheNextExchangeOnItsTile) {
  const auto b = two_tiles();
  const auto groups = phase_groups(b.profile, place_samples(b.profile, false));
  ASSERT_EQ(groups.size(), 1u);
  const PhaseGroup& g = groups[0];
  ASSERT_TRUE(g.exchange.has_value());
  // Tile 5: A [0,30) then the exchange [30,70); tile 7: B [0,20), A [20,40), sync [40,70).
  EXPECT_EQ(g.start, 0u);
  EXPECT_EQ(g.end, 70u);
  EXPECT_EQ(g.tiles, 2u);
  EXPECT_EQ(g.compute_cycles, 70u);  // 30 + 20 + 20
  EXPECT_DOUBLE_EQ(g.active_tiles, 1.0);
  EXPECT_DOUBLE_EQ(g.occupancy, 0.5);  // 70 / (70 * 2)
  ASSERT_EQ(g.kernels.size(), 2u);
  EXPECT_EQ(g.kernels[0].kernel, "A");
  EXPECT_EQ(g.kernels[0].cycles, 50u);
  EXPECT_EQ(g.kernels[1].kernel, "B");
}

// Two epochs of a Repeat over exchange 4, work after the last exchange, a sync-only
// tile whose compute belongs to the exchange it only syncs with.
TEST(ProfilePhasesTest, EpochsSplitAndTrailingWorkHasItsOwnGroup) {
  ProfileBuilder b;
  const uint32_t x4 = arch::kExchangePhaseBit | 4;
  b.add(0, 0, 10, ProfileStepKind::Compute, "k", 0, 0);
  b.add(0, 10, 20, ProfileStepKind::Exchange, "exchange", x4, 0).event_cycles = 10;
  b.add(0, 20, 40, ProfileStepKind::Compute, "k", 0, 1);
  b.add(0, 40, 50, ProfileStepKind::Exchange, "exchange", x4, 1).event_cycles = 10;
  b.add(0, 50, 55, ProfileStepKind::Compute, "tail", 5, 0);
  b.add(1, 0, 4, ProfileStepKind::Compute, "j", 0, 0);
  b.add(1, 4, 20, ProfileStepKind::Synchronization, "sync", x4, 0);
  b.add(1, 20, 30, ProfileStepKind::Idle, "idle", 0, 1);
  b.add(1, 30, 50, ProfileStepKind::Synchronization, "sync", x4, 1);
  const ProfileTimeline t = place_samples(b.profile, false);
  auto groups = phase_groups(b.profile, t);
  ASSERT_EQ(groups.size(), 3u);
  // Epoch 0: [0,20), tiles 0 and 1, compute 10 + 4 = 14, occupancy 14 / (20 * 2).
  ASSERT_TRUE(groups[0].exchange);
  EXPECT_EQ(groups[0].exchange->key, (ExchangeKey{0, 0, 4}));
  EXPECT_EQ(groups[0].cycles(), 20u);
  EXPECT_EQ(groups[0].compute_cycles, 14u);
  EXPECT_DOUBLE_EQ(groups[0].occupancy, 0.35);
  EXPECT_EQ(groups[0].exchange->arrival_wait(), 6u);  // entries 4 and 10
  EXPECT_EQ(groups[0].exchange->measured(), 10u);
  EXPECT_EQ(groups[0].exchange->boundary(), 0);
  // Epoch 1: [20,50), compute 20 on tile 0; tile 1's idle counts as synchronization.
  EXPECT_EQ(groups[1].exchange->key, (ExchangeKey{0, 1, 4}));
  EXPECT_EQ(groups[1].compute_cycles, 20u);
  EXPECT_EQ(groups[1].synchronization_cycles, 10u);
  EXPECT_DOUBLE_EQ(groups[1].occupancy, 20.0 / 60.0);
  EXPECT_EQ(groups[1].exchange->measured(), 10u);  // last entry 40 (tile 0) to 50
  EXPECT_EQ(groups[1].exchange->arrival_wait(), 10u);
  // After the last exchange: tile 0's tail [50,55).
  EXPECT_FALSE(groups[2].exchange);
  EXPECT_EQ(groups[2].start, 50u);
  EXPECT_EQ(groups[2].cycles(), 5u);

  PhaseFilter filter;
  filter.epoch = 1;
  EXPECT_FALSE(phase_matches(groups[0], filter));
  EXPECT_TRUE(phase_matches(groups[1], filter));
  filter = {};
  filter.max_occupancy = 0.34;
  EXPECT_TRUE(phase_matches(groups[1], filter));
  EXPECT_FALSE(phase_matches(groups[0], filter));
  filter = {};
  filter.max_cycles = 20;
  EXPECT_TRUE(phase_matches(groups[0], filter));
  EXPECT_FALSE(phase_matches(groups[1], filter));
  filter = {};
  filter.at_offset = 20;
  EXPECT_FALSE(phase_matches(groups[0], filter));
  EXPECT_TRUE(phase_matches(groups[1], filter));

  sort_phase_groups(groups, parse_phase_sort("occupancy"));  // 0.333, 0.35, 1 (the tail)
  EXPECT_EQ(groups[0].exchange->key.epoch, 1u);
  EXPECT_EQ(groups[1].exchange->key.epoch, 0u);
  EXPECT_FALSE(groups[2].exchange);
  sort_phase_groups(groups, parse_phase_sort("cycles"));  // 30, 20, 5
  EXPECT_EQ(groups[0].cycles(), 30u);
  EXPECT_EQ(groups[2].cycles(), 5u);
  EXPECT_THROW(parse_phase_sort("colour"), InputError);
}

TEST(ProfileSummaryTest, TotalsAndBusiestTiles) {
  const auto b = two_tiles();
  const ProfileSummary s = summarize_profile(b.profile, place_samples(b.profile, false), 5);
  EXPECT_EQ(s.tiles, 2u);
  EXPECT_EQ(s.samples, 5u);
  EXPECT_EQ(s.span, 70u);
  EXPECT_EQ(s.exchanges, 1u);
  ASSERT_EQ(s.by_kind.size(), 3u);
  ASSERT_EQ(s.busiest.size(), 2u);
  EXPECT_EQ(s.busiest[0].physical_tile, 7u);  // compute 40 against tile 5's 30
  EXPECT_EQ(s.busiest[0].compute, 40u);
  EXPECT_EQ(s.busiest[0].synchronization, 30u);
  EXPECT_EQ(s.idlest[0].physical_tile, 5u);
  EXPECT_EQ(s.idlest[0].exchange, 40u);
  EXPECT_DOUBLE_EQ(cycles_to_ms(1'000'000, 1'000'000'000), 1.0);
  EXPECT_DOUBLE_EQ(cycles_to_ms(5, 0), 0.0);
}

}  // namespace
}  // namespace lockstep::replay
