#include "model/run_monitor.hpp"

#include <systemc>

namespace lockstep::model {

void RunMonitor::report(RecordedHazard hazard) {
  hazards_.push_back(std::move(hazard));
  if (!keep_going && !stopping_) {
    // The first hazard ends the run; the phase that found it still completes.
    stopping_ = true;
    sc_core::sc_stop();
  }
}

void RunMonitor::record(const PhaseRecord& record) {
  executions_.push_back(record);
  if (after_phase) after_phase(record);
}

}  // namespace lockstep::model
