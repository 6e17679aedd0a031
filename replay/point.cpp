#include "replay/point.hpp"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <chrono>
#include <cstring>
#include <optional>

#include "compiler/compile.hpp"
#include "formats/package.hpp"
#include "io/errors.hpp"
#include "model/sram.hpp"
#include "replay/point_check.hpp"
#include "sim/backend.hpp"

namespace lockstep::replay {
namespace {

// Pages this process touched for the first time so far (and other minor faults).
uint64_t minor_faults() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_minflt);
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The capture reduced to the one phase replayed (and to its first iteration if asked).
arch::Capture single_phase(const arch::Capture& capture, const arch::CapturePhase& phase, bool all_iterations) {
  arch::Capture out;
  out.version = capture.version;
  out.machine_name = capture.machine_name;
  out.phases.push_back(phase);
  if (!all_iterations && phase.iterations > 1) {
    auto& p = out.phases.back();
    p.iterations = 1;
    for (auto& t : p.transfers) t.source_addresses.resize(1);
  }
  return out;
}

std::string hazard_line(const sim::Hazard& h) {
  return sim::hazard_name(h.kind) + " tile " + std::to_string(h.tile) + " phase " + std::to_string(h.phase) +
         " iteration " + std::to_string(h.iteration) + " cycle " + std::to_string(h.cycle) + " row+" +
         std::to_string(h.row_offset) + " `" + h.instruction + "`: " + h.detail;
}

}  // namespace

const arch::CapturePhase& find_phase(const arch::Capture& capture, uint32_t phase_id) {
  for (const auto& p : capture.phases) {
    if (p.id == phase_id) return p;
  }
  throw InputError("phase " + std::to_string(phase_id) + ": not in the capture (" +
                   std::to_string(capture.phases.size()) + " phases)");
}

arch::MachineDescription machine_for(const arch::Capture& capture, const std::string& override_machine) {
  if (!override_machine.empty()) return arch::load_machine(override_machine);
  if (capture.machine_name.empty()) return arch::load_machine(arch::kDefaultMachine);
  return arch::load_machine(capture.machine_name);
}

arch::Package device_replay_package(const arch::Capture& capture, const arch::MachineDescription& machine,
                                    const PointSpec& spec, uint64_t seed, uint64_t words) {
  const arch::Capture one = single_phase(capture, find_phase(capture, spec.phase), true);
  compiler::CompileOptions options;
  options.config = compiler::parse_config(spec.compiler_config());
  options.phases = std::vector<uint32_t>{spec.phase};
  options.token_seed = seed;
  options.with_proof = false;
  options.sampled_proof_words = words;
  return compiler::compile_capture(one, machine, options).package;
}

namespace {

// A point compiled: the result so far (everything but the simulation), and the package to
// simulate unless the compiler failed or the phase moves nothing.
struct CompiledPoint {
  PointResult result;
  std::optional<arch::Package> package;
};

CompiledPoint compile_point(const arch::Capture& one, const arch::MachineDescription& machine, const PointSpec& spec,
                            const PointOptions& options) {
  const auto& phase = one.phases.front();
  compiler::CompileOptions compile_options;
  compile_options.config = compiler::parse_config(spec.compiler_config());
  compile_options.phases = std::vector<uint32_t>{spec.phase};
  compile_options.token_seed = options.seed;
  // The checker reads every checked word after every iteration; the package's own
  // checksum kernels and expectations would prove the same words again at a cost.
  compile_options.with_proof = false;

  CompiledPoint out;
  PointResult& result = out.result;
  result.spec = spec;
  result.label = phase.label;
  result.execution_count = phase.execution_count;
  result.iterations = phase.iterations;

  compiler::CompileResult compiled;
  const auto compile_start = std::chrono::steady_clock::now();
  try {
    compiled = compiler::compile_capture(one, machine, compile_options);
  } catch (const InputError& e) {
    // The capture was validated and the configuration parsed before: the compiler
    // rejecting it now is recorded so a sweep can go on, as bad input (exit 2).
    result.error = std::string("compile: ") + e.what();
    result.error_exit_code = 2;
    return out;
  } catch (const std::exception& e) {
    result.error = std::string("compile: ") + e.what();
    result.error_exit_code = 3;
    return out;
  }
  result.compile_ms = ms_since(compile_start);
  const auto& report = compiled.report;
  for (const auto& p : report.phases) {
    if (p.phase != spec.phase) continue;
    result.compiled_horizon = p.horizon;
    result.lower_bound = p.lower_bound;
    result.max_row_bytes = p.max_row_bytes;
    result.total_row_bytes = p.total_row_bytes;
    result.patch_calls = p.patch_calls;
    result.patch_words = p.patch_words;
  }
  result.table_bytes_shared = report.table_bytes_shared;
  result.table_bytes_unshared = report.table_bytes_unshared;
  if (phase.transfers.empty()) {
    // Nothing moves, so no tile has a row and the machine never runs the phase: every
    // iteration is complete, with horizon 0 and no word to check.
    result.executions = result.iterations;
    return out;
  }
  out.package = std::move(compiled.package);
  return out;
}

void simulate_point(const arch::Package& package, const arch::CapturePhase& phase,
                    const arch::MachineDescription& machine, const PointOptions& options, PointResult& result) {
  // The check's own preparation counts as checking.
  const auto simulate_start = std::chrono::steady_clock::now();
  const uint64_t faults_before = minor_faults();
  PayloadChecker checker(phase, options, result);
  sim::RunOptions run_options;
  run_options.profile = options.profile;
  run_options.watches = options.watches;
  run_options.lay_copied_tokens = true;  // its destinations are only compared
  run_options.lay_small_writes = true;   // nothing but its tiles reads their rows and code
  run_options.after_exchange = [&checker](const sim::PhaseExecution& e, sim::MemoryView& m) { checker.after(e, m); };
  run_options.after_landing = [&checker](uint32_t phase, uint32_t iteration, uint32_t tile, const sim::MemoryView& m) {
    checker.landed(phase, iteration, tile, m);
  };
  try {
    auto backend = sim::make_systemc_backend(machine);
    auto run = backend->run(package, run_options);
    if (run.profile) result.profile = std::make_shared<const arch::Profile>(std::move(*run.profile));
    result.hazard_count = run.hazards.size();
    for (size_t i = 0; i < run.hazards.size() && i < options.max_hazards; ++i) {
      result.hazards.push_back(hazard_line(run.hazards[i]));
    }
    result.expectation_failures = run.expectation_failures.size();
    result.watch_writes = std::move(run.watch_writes);
  } catch (const std::exception& e) {
    // Even a package the simulator rejects is the compiler's output, not the user's input.
    result.error = std::string("simulate: ") + e.what();
    result.error_exit_code = 3;
  }
  result.simulate_ms = ms_since(simulate_start);
  // The process's faults meanwhile: this point's alone when points run one at a time.
  spdlog::debug(
      "point phase {} {}: horizon {} ({} compiled), {} words checked, {} mismatches; "
      "compiled in {:.1f} ms, simulated and checked in {:.1f} ms, {} page faults meanwhile",
      result.spec.phase, result.spec.display_name(), result.horizon, result.compiled_horizon, result.words_checked,
      result.mismatch_count, result.compile_ms, result.simulate_ms, minor_faults() - faults_before);
}

}  // namespace

PointResult run_point(const arch::Capture& capture, const arch::MachineDescription& machine, const PointSpec& spec,
                      const PointOptions& options) {
  return run_points(capture, machine, std::vector<PointSpec>{spec}, options).front();
}

std::vector<PointResult> run_points(const arch::Capture& capture, const arch::MachineDescription& machine,
                                    const std::vector<PointSpec>& specs, const PointOptions& options) {
  std::vector<PointResult> results;
  // Each point after the first takes the last one's SRAM mapping, zeroed again, instead of
  // faulting its pages in afresh; a single point keeps nothing.
  std::optional<model::KeptSramMappings> keep_sram;
  if (specs.size() > 1) keep_sram.emplace();
  for (const auto& spec : specs) {
    const arch::Capture one = single_phase(capture, find_phase(capture, spec.phase), options.all_iterations);
    if (spec.paired && !results.empty() && !results.back().spec.paired && results.back().spec.phase == spec.phase &&
        results.back().spec.config == spec.config && !compiler::paired_width_applies(one.phases.front(), machine)) {
      // The same package as its word32 twin (compiler::paired_width_applies), so the same run.
      PointResult twin = results.back();
      twin.spec = spec;
      twin.compile_ms = 0;
      twin.simulate_ms = 0;
      spdlog::debug("point phase {} {}: no pair-eligible transfer, the result of {}", spec.phase, spec.display_name(),
                    results.back().spec.display_name());
      results.push_back(std::move(twin));
      continue;
    }
    auto compiled = compile_point(one, machine, spec, options);
    if (compiled.package) {
      simulate_point(*compiled.package, one.phases.front(), machine, options, compiled.result);
    }
    results.push_back(std::move(compiled.result));
  }
  return results;
}

}  // namespace lockstep::replay
