#include "model/run_monitor.hpp"

#include <algorithm>
#include <cstdio>
#include <systemc>

namespace lockstep::model {

void RunMonitor::report(RecordedHazard hazard) {
  if (!keep_going) {
    // The first hazard ends the run; the phase that found it still completes.
    if (!stopping_) {
      stopping_ = true;
      stop_horizon_ = hazard.cycle;
      sc_core::sc_stop();
    } else {
      stop_horizon_ = std::min(stop_horizon_, hazard.cycle);
    }
  }
  hazards_.push_back(std::move(hazard));
}

void RunMonitor::set_limits(uint64_t max_cycles, double timeout_seconds) {
  max_cycles_ = max_cycles;
  timeout_seconds_ = timeout_seconds;
  deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                     std::chrono::duration<double>(timeout_seconds));
}

void RunMonitor::check_limits(uint64_t cycle) {
  if (stopping_) return;
  if (max_cycles_ > 0 && cycle > max_cycles_) {
    limit_reached_ =
        "the run passed --max-cycles " + std::to_string(max_cycles_) + " (at cycle " + std::to_string(cycle) + ")";
  } else if (timeout_seconds_ > 0 && std::chrono::steady_clock::now() > deadline_) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", timeout_seconds_);
    limit_reached_ = "the run passed --timeout " + std::string(seconds) + " s (at cycle " + std::to_string(cycle) + ")";
  } else {
    return;
  }
  stopping_ = true;
  sc_core::sc_stop();
}

void RunMonitor::request_stop(std::string where) {
  if (stopping_) return;
  stopping_ = true;
  stopped_at_ = std::move(where);
}

void RunMonitor::record(const PhaseRecord& record) {
  check_limits(record.release_cycle + record.horizon);
  if (after_phase) after_phase(record);
  if (keep_tile_records) {
    executions_.push_back(record);
  } else {  // without copying the tiles first
    executions_.push_back(PhaseRecord{
        record.phase, record.iteration, record.release_cycle, record.horizon, {}, record.last_arrival, record.before});
  }
}

}  // namespace lockstep::model
