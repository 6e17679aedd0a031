// When a run stops (model/run_monitor.hpp). Tiles run ahead of one another between barriers,
// so a hazard stops the others only once they pass its cycle (one that runs later may still
// find an earlier hazard); a request or a limit stops every tile at once.
#include "model/run_monitor.hpp"

#include <gtest/gtest.h>

namespace lockstep::model {
namespace {

RecordedHazard hazard_at(uint64_t cycle) {
  RecordedHazard h;
  h.hazard.kind = HazardClass::WriteOutOfRange;
  h.cycle = cycle;
  return h;
}

TEST(RunMonitor, AHazardStopsOtherTilesOnlyOnceTheyPassItsCycle) {
  RunMonitor monitor;
  EXPECT_FALSE(monitor.stops(0));
  monitor.report(hazard_at(500));
  EXPECT_TRUE(monitor.stopping());
  EXPECT_FALSE(monitor.stops(499));
  EXPECT_TRUE(monitor.stops(500));
  monitor.report(hazard_at(300));  // found by a tile that ran later: the earlier one counts
  EXPECT_FALSE(monitor.stops(299));
  EXPECT_TRUE(monitor.stops(300));
  monitor.report(hazard_at(400));
  EXPECT_TRUE(monitor.stops(300));
  EXPECT_EQ(monitor.hazards().size(), 3u);
}

TEST(RunMonitor, ARequestStopsEveryTileAtOnce) {
  RunMonitor monitor;
  monitor.request_stop("tile 1 step 2");
  EXPECT_TRUE(monitor.stops(0));
  monitor.report(hazard_at(700));  // after a request, hazards no longer move the stop
  EXPECT_TRUE(monitor.stops(0));
}

TEST(RunMonitor, KeepGoingCollectsHazardsWithoutStopping) {
  RunMonitor monitor;
  monitor.keep_going = true;
  monitor.report(hazard_at(10));
  EXPECT_FALSE(monitor.stopping());
  EXPECT_FALSE(monitor.stops(1000));
}

}  // namespace
}  // namespace lockstep::model
