#pragma once
// Packaging: scheduled phases in, a runnable package with its payload proof out.
// Lays out every tile's table (with cross-phase row sharing), builds the shared-row setup
// and Repeat patch lists, fills source memory with payload tokens, and writes the steps and
// expectations that let the simulator prove every destination word after every iteration.
#include <vector>

#include "arch/machine.hpp"
#include "compiler/compile.hpp"
#include "compiler/phase_schedule.hpp"
#include "formats/capture.hpp"

namespace lockstep::compiler {

struct PackagingPhase {
  const arch::CapturePhase* capture = nullptr;
  const ScheduledPhase* scheduled = nullptr;
};

// Phases run in the given order. Fills every CompileReport field except the per-phase
// compile_ms and the config name (the caller's). Throws InputError when a tile has no
// room for its table, CompilerError when the schedules are inconsistent with the capture.
CompileResult build_package(const std::vector<PackagingPhase>& phases, const arch::MachineDescription& machine,
                            const CompileOptions& options);

}  // namespace lockstep::compiler
