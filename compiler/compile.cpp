// compile_capture: schedule the selected phases in parallel, then package them.
#include "compiler/compile.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>
#include <string>

#include "arch/topology.hpp"
#include "compiler/package_builder.hpp"
#include "compiler/phase_schedule.hpp"
#include "compiler/schedule_model.hpp"
#include "io/errors.hpp"
#include "io/parallel.hpp"

namespace lockstep::compiler {
namespace {

std::vector<const arch::CapturePhase*> selected_phases(const arch::Capture& capture, const CompileOptions& options) {
  std::vector<const arch::CapturePhase*> selected;
  if (!options.phases || options.phases->empty()) {
    for (const auto& phase : capture.phases) selected.push_back(&phase);
    return selected;
  }
  const std::set<uint32_t> wanted(options.phases->begin(), options.phases->end());
  std::set<uint32_t> found;
  // Capture order is program order, whatever order the list gives.
  for (const auto& phase : capture.phases) {
    if (wanted.count(phase.id)) {
      selected.push_back(&phase);
      found.insert(phase.id);
    }
  }
  for (uint32_t id : wanted) {
    if (!found.count(id)) throw InputError("phases: phase " + std::to_string(id) + " is not in the capture");
  }
  return selected;
}

}  // namespace

CompileResult compile_capture(const arch::Capture& capture, const arch::MachineDescription& machine,
                              const CompileOptions& options) {
  if (!capture.machine_name.empty() && capture.machine_name != machine.name) {
    throw InputError("capture: machine: the capture is for machine '" + capture.machine_name + "', not '" +
                     machine.name + "'");
  }
  const auto start = std::chrono::steady_clock::now();
  arch::validate_capture(capture, machine, "capture");
  const std::vector<const arch::CapturePhase*> selected = selected_phases(capture, options);
  const arch::Topology topology(machine);

  // Results by index: the package does not depend on which thread finished first.
  std::vector<ScheduledPhase> scheduled(selected.size());
  std::vector<double> milliseconds(selected.size(), 0.0);
  std::mutex progress_mutex;
  uint64_t phases_done = 0;
  arch::parallel_for_each(size_t{0}, selected.size(), [&](size_t i) {
    const auto start = std::chrono::steady_clock::now();
    scheduled[i] = schedule_phase(*selected[i], machine, topology, options.config_for(selected[i]->id));
    milliseconds[i] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (options.on_progress) {
      const std::lock_guard<std::mutex> lock(progress_mutex);
      options.on_progress("scheduling", ++phases_done, selected.size());
    }
  });

  const double scheduling = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<PackagingPhase> inputs;
  for (size_t i = 0; i < selected.size(); ++i) inputs.push_back(PackagingPhase{selected[i], &scheduled[i]});
  CompileResult result = build_package(inputs, machine, options);
  spdlog::debug("compile: validating the capture and scheduling {:.2f} s, packaging{} {:.2f} s", scheduling,
                options.with_proof ? " and proving" : "",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - scheduling);
  for (size_t i = 0; i < selected.size(); ++i) {
    result.report.phases[i].compile_ms = milliseconds[i];
    spdlog::debug("compile: phase {} scheduled in {:.0f} ms", selected[i]->id, milliseconds[i]);
  }
  return result;
}

bool paired_width_applies(const arch::CapturePhase& phase, const arch::MachineDescription& machine) {
  const auto eligible = paired_eligible(phase, arch::Topology(machine));
  return std::find(eligible.begin(), eligible.end(), true) != eligible.end();
}

}  // namespace lockstep::compiler
