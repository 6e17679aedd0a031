#pragma once
// What a run observes while the SystemC model executes: hazards with their place in time,
// phase executions, and whether the run must stop. Shared by tiles, barrier and fabric.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/cycle_split.hpp"
#include "model/hazard.hpp"
#include "model/watch.hpp"

namespace lockstep::model {

struct RecordedHazard {
  ModelHazard hazard;  // hazard.event is the event within the phase (or 0 for steps)
  uint32_t phase = 0;
  uint32_t iteration = 0;
  uint64_t cycle = 0;  // absolute tile cycle from the start of the run
};

// Words one tile took from one sender in one contiguous run: consecutive destination and
// source addresses, one item per event.
struct ReceivedRun {
  uint32_t sender = 0;  // logical
  uint32_t address = 0;
  uint32_t source_address = 0;
  uint32_t bytes = 0;
  int64_t first_write_event = 0;
  int64_t last_write_event = 0;
};

// One tile's part in a phase execution (recorded only when RunMonitor::record_tiles).
struct TileRecord {
  uint32_t tile = 0;                  // logical
  int64_t row_end = 0;                // the event its row returned at
  std::vector<ReceivedRun> received;  // by first write event
};

struct PhaseRecord {
  uint32_t phase = 0;
  uint32_t iteration = 0;
  uint64_t release_cycle = 0;
  uint64_t horizon = 0;
  std::vector<TileRecord> tiles;  // by logical tile; empty unless record_tiles
  uint32_t last_arrival = 0;      // the tile whose arrival released the phase
  CycleSplit before;              // what it did from its own previous release to this one
};

class RunMonitor {
 public:
  bool keep_going = false;
  std::optional<uint32_t> trace_tile;
  bool record_tiles = false;      // record every tile's row end and received runs per execution
  bool keep_tile_records = true;  // keep them in executions() (false: after_phase sees them only)
  bool profile = false;           // tiles record a sample per executed step (model/step_record.hpp)
  // Copies lay runs of deferred payload tokens over their destinations' pages instead of making
  // the tokens there (SramArena::lay_out): for a replay, whose destinations are only compared;
  // where later phases read them, making them at once is cheaper (docs/performance.md, round
  // thirty-two). The words are the same either way.
  bool lay_copied_tokens = false;
  // Writes smaller than a page land as runs of bytes on pages nothing else wrote (SramArena::
  // lay_small_writes): for a replay, whose tiles' rows, code and loop counters then touch no page
  // (docs/performance.md, round thirty-three). The words read are the same either way.
  bool lay_small_writes = false;
  // Called after every phase execution, memory as it stands then.
  std::function<void(const PhaseRecord&)> after_phase;
  // Called as each receiver's words land in an execution copied SRAM to SRAM (one without
  // hazards), on the copying thread, receivers in parallel: (phase, iteration, the receiver's
  // logical tile). Nothing else writes that receiver's SRAM until after_phase, so a check of
  // its words can read them here, while they are in cache. An execution with hazards, or one
  // whose words were in place already, reports no receiver.
  std::function<void(uint32_t, uint32_t, uint32_t)> after_landing;
  // Watched words (model/watch.hpp); null unless the run watches any.
  Watcher* watcher = nullptr;
  // `--stop-at tile:T,step:S`: the tile stops as it enters its top-level step S.
  std::optional<std::pair<uint32_t, uint32_t>> stop_step;
  // Every tile waits out each step at its boundary instead of running ahead to its next
  // barrier: for a run that may stop on request (`--stop-at`), so that the other tiles have
  // done exactly what precedes the stop in time.
  bool synchronous_steps = false;

  // Stops the run where the user asked (`--stop-at`): `where` says where.
  void request_stop(std::string where);
  const std::string& stopped_at() const { return stopped_at_; }

  // Bounds on a run (0 = none): simulated cycles, and wall-clock time from set_limits.
  void set_limits(uint64_t max_cycles, double timeout_seconds);
  // Stops the run once `cycle` passes max_cycles or the wall clock passes the timeout;
  // tiles call it at every Repeat iteration, the barrier at every phase.
  void check_limits(uint64_t cycle);
  // Why the run stopped short of its end ("" when it did not).
  const std::string& limit_reached() const { return limit_reached_; }

  void report(RecordedHazard hazard);
  void record(const PhaseRecord& record);
  bool stopping() const { return stopping_; }
  // Whether a tile at `cycle` stops. A hazard stops the others only once they pass its cycle:
  // tiles run ahead of one another between barriers, so one that runs later may still
  // find an earlier hazard. A request or a limit stops every tile at once.
  bool stops(uint64_t cycle) const { return stopping_ && cycle >= stop_horizon_; }

  const std::vector<RecordedHazard>& hazards() const { return hazards_; }
  const std::vector<PhaseRecord>& executions() const { return executions_; }

  // What the phases' copies moved between SRAMs over the run, so that a benchmark can set a
  // memcpy of that volume beside the run (the `--log-level debug` summary prints it).
  struct CopyTotals {
    uint64_t copies = 0;  // memory copies made (a phase with hazards copies write by write)
    uint64_t bytes = 0;
    uint64_t landed_bytes = 0;  // not copied: repeats whose bytes SRAM already held
  };
  void count_copies(uint64_t copies, uint64_t bytes) {
    copied_.copies += copies;
    copied_.bytes += bytes;
  }
  void count_landed(uint64_t bytes) { copied_.landed_bytes += bytes; }
  const CopyTotals& copied() const { return copied_; }

 private:
  bool stopping_ = false;
  uint64_t stop_horizon_ = 0;  // the earliest stopping hazard's cycle
  uint64_t max_cycles_ = 0;
  double timeout_seconds_ = 0;
  std::chrono::steady_clock::time_point deadline_{};
  std::string limit_reached_;
  std::string stopped_at_;
  std::vector<RecordedHazard> hazards_;
  std::vector<PhaseRecord> executions_;
  CopyTotals copied_;
};

}  // namespace lockstep::model
