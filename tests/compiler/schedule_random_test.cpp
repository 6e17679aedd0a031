// Every configuration on random small phases (fixed seeds): every word lands once, at the
// right address, with no hazard; horizons never beat the lower bound; same input, same rows.
#include <gtest/gtest.h>

#include "compiler/phase_schedule.hpp"
#include "schedule_test_support.hpp"

namespace lockstep::compiler {
namespace {

using testing::c600;
using testing::c600_topology;
using testing::expect_delivers;
using testing::random_phase;

const char* const kConfigs[] = {"latency", "S64", "S256", "S1024", "B64", "B1024", "automatic", "remaining-combined"};

TEST(ScheduleRandom, EveryConfigurationDeliversEveryWord) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const arch::CapturePhase phase = random_phase(seed, 16 + seed * 4, 40, 300, seed % 2 ? 1 : 4);
    for (const char* config : kConfigs) {
      SCOPED_TRACE(std::string(config) + " seed " + std::to_string(seed));
      const ScheduledPhase result = schedule_phase(phase, c600(), c600_topology(), parse_config(config));
      EXPECT_GE(result.horizon, result.lower_bound);
      EXPECT_EQ(result.lower_bound, phase_lower_bound(phase, c600_topology(), Width::Word32));
      EXPECT_GE(result.orders_considered, 1u);
      expect_delivers(phase, result);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(ScheduleRandom, DenseSmallMessagesNeedAlignedSendpicp) {
  // Many 1..8 word messages among few tiles: controls pile up on sending tiles.
  for (uint32_t seed = 11; seed <= 30; ++seed) {
    const arch::CapturePhase phase = random_phase(seed, 4 + seed % 8, 120, 8, 3);
    for (const char* config : kConfigs) {
      SCOPED_TRACE(std::string(config) + " seed " + std::to_string(seed));
      const ScheduledPhase result = schedule_phase(phase, c600(), c600_topology(), parse_config(config));
      expect_delivers(phase, result);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(ScheduleRandom, RepeatIterationsDeliverFromTheirOwnSources) {
  const arch::CapturePhase phase = random_phase(21, 24, 30, 200, 2, 3);
  const ScheduledPhase result = schedule_phase(phase, c600(), c600_topology(), parse_config("latency"));
  for (uint32_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    expect_delivers(phase, result, i);
  }
}

TEST(ScheduleRandom, Deterministic) {
  const arch::CapturePhase phase = random_phase(31, 40, 80, 500, 3);
  const ScheduledPhase a = schedule_phase(phase, c600(), c600_topology(), parse_config("latency"));
  const ScheduledPhase b = schedule_phase(phase, c600(), c600_topology(), parse_config("latency"));
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i) EXPECT_EQ(a.rows[i].words, b.rows[i].words);
  EXPECT_EQ(a.horizon, b.horizon);
  EXPECT_EQ(a.orders_considered, b.orders_considered);
  EXPECT_EQ(a.orders_deduplicated, b.orders_deduplicated);
}

}  // namespace
}  // namespace lockstep::compiler
