#pragma once
// One point of a replay or sweep: one phase of a capture compiled under one configuration,
// run on the SystemC model for every Repeat iteration, its payload checked after each.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/capture.hpp"
#include "formats/package.hpp"
#include "model/watch.hpp"
#include "profile/profile.hpp"

namespace lockstep::replay {

struct PointSpec {
  uint32_t phase = 0;   // capture phase id
  std::string config;   // configuration name as in the sweep file ("B256", "latency", ...)
  bool paired = false;  // the paired-width alternative (Paired64)
  // The name compiler::parse_config understands ("B256" or "B256+paired").
  std::string compiler_config() const { return paired ? config + "+paired" : config; }
  // The name used in tables and plots ("B256" or "B256p").
  std::string display_name() const { return paired ? config + "p" : config; }
};

// One phase (every Repeat iteration) compiled for a device: no checksum kernels (a device has
// none of Lockstep's), its payload shown instead by the "proof.sampled" output binding over
// about `words` destination words, which the host compares with the simulated run.
arch::Package device_replay_package(const arch::Capture& capture, const arch::MachineDescription& machine,
                                    const PointSpec& spec, uint64_t seed, uint64_t words);

struct PointOptions {
  uint64_t seed = 1;                // payload token seed
  std::optional<uint64_t> samples;  // destination words checked per iteration; all when empty
  bool all_iterations = true;       // false: replay only the first Repeat iteration
  bool payload_digest = false;      // fnv1a64 of every destination byte after the run
  size_t max_mismatches = 10;       // how many mismatches to keep (all are counted)
  size_t max_hazards = 10;
  bool profile = false;                    // keep the run's cycle profile (PointResult::profile)
  std::vector<model::WatchRange> watches;  // words to watch (sim::RunOptions::watches)
};

struct Mismatch {
  uint32_t tile = 0;
  uint32_t address = 0;
  uint32_t iteration = 0;
  uint32_t expected = 0;
  uint32_t found = 0;
  bool operator==(const Mismatch&) const = default;
};

struct PointResult {
  PointSpec spec;
  std::string label;
  uint32_t execution_count = 1;
  uint32_t iterations = 1;        // Repeat iterations replayed
  uint32_t horizon = 0;           // simulated: max over executions
  uint32_t compiled_horizon = 0;  // what the compiler's schedule promised
  uint32_t lower_bound = 0;
  uint32_t max_row_bytes = 0;
  uint64_t total_row_bytes = 0;
  uint32_t table_bytes_shared = 0;
  uint32_t table_bytes_unshared = 0;
  uint32_t patch_calls = 0;
  uint32_t patch_words = 0;
  double compile_ms = 0;
  double simulate_ms = 0;
  uint32_t executions = 0;     // phase executions seen by the simulator
  uint64_t words_checked = 0;  // summed over iterations
  uint64_t mismatch_count = 0;
  std::vector<Mismatch> mismatches;  // the first max_mismatches
  uint64_t hazard_count = 0;
  std::vector<std::string> hazards;  // the first max_hazards, one line each
  uint64_t expectation_failures = 0;
  uint64_t payload_digest = 0;                   // when PointOptions::payload_digest
  std::string error;                             // compile or run failure (then nothing else is valid)
  int error_exit_code = 0;                       // 2 bad input, 3 internal
  std::shared_ptr<const arch::Profile> profile;  // with PointOptions::profile, when it ran
  std::vector<model::WatchWrite> watch_writes;   // PointOptions::watches' writes

  bool payload_ok() const {
    return error.empty() && mismatch_count == 0 && hazard_count == 0 && expectation_failures == 0 &&
           executions == iterations && iterations > 0;
  }
};

const arch::CapturePhase& find_phase(const arch::Capture& capture, uint32_t phase_id);

// Compiles, simulates and checks one point. InputError for a phase id not in the capture
// or a configuration the compiler does not know; every failure of the compiler or the
// simulator after that is recorded in PointResult::error (exit code 2 when the compiler
// called it bad input, 3 otherwise) so a sweep can go on.
PointResult run_point(const arch::Capture& capture, const arch::MachineDescription& machine, const PointSpec& spec,
                      const PointOptions& options);

// Runs the points in order, each as run_point would, except that a paired point right after
// its word32 twin (same phase and configuration) whose phase has no pair-eligible transfer is
// neither compiled nor simulated: both widths compile to the same package
// (compiler::paired_width_applies), so it takes the twin's result, with compile_ms and
// simulate_ms 0.
std::vector<PointResult> run_points(const arch::Capture& capture, const arch::MachineDescription& machine,
                                    const std::vector<PointSpec>& specs, const PointOptions& options);

// The machine a capture refers to, unless the user names another.
arch::MachineDescription machine_for(const arch::Capture& capture, const std::string& override_machine);

}  // namespace lockstep::replay
