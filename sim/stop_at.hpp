#pragma once
// `--stop-at` inside the SystemC backend: arming the stop before the run, and what a stopped
// run hands back (the dumps and every tile's exchange state). sim/systemc_backend.cpp uses it.
#include "model/chip.hpp"
#include "model/run_monitor.hpp"
#include "sim/backend.hpp"

namespace lockstep::sim {

// Sets the monitor up to stop where options.stop_at says (after any after_phase already set).
void arm_stop(const RunOptions& options, model::RunMonitor& monitor);
// After the run: where it stopped, the dumps and the rows (nothing when it never stopped).
void collect_stop(const RunOptions& options, const model::RunMonitor& monitor, const model::Chip& chip,
                  const MemoryView& view, RunResult& result);

}  // namespace lockstep::sim
