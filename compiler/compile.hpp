#pragma once
// The exchange compiler's entry point: captures in, packages and reports out.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/capture.hpp"
#include "formats/package.hpp"

namespace lockstep::compiler {

enum class OrderKind : uint8_t {
  Latency,            // several candidate orders, shortest horizon kept (the default)
  Stream,             // S(W): streams cut into chunks of at most W words, list-scheduled
  Balanced,           // B(W): endpoint-balanced waves of at most W words per tile
  Automatic,          // see docs/scheduling.md
  RemainingCombined,  // see docs/scheduling.md
};

enum class Width : uint8_t { Word32, Paired64 };
enum class WidthPolicy : uint8_t { Fixed, LatencyOriented, StorageFirst };

struct ScheduleConfig {
  std::string name;  // "latency", "S256", "B1024", "automatic", "remaining-combined"
  OrderKind order = OrderKind::Latency;
  uint32_t words = 0;  // W for Stream / Balanced
  Width width = Width::Word32;
  WidthPolicy width_policy = WidthPolicy::Fixed;
  // Drop identical candidate orders before physical scheduling (always on in production;
  // off only to measure what it saves: bench_scheduler --no-dedup).
  bool deduplicate_orders = true;
  // Latency policy only: also schedule the phase with wide multicast transfers cut into
  // receiver groups of 4 and of 3 (compiler/multicast_split.hpp) and keep the shortest.
  // Off only to measure it (bench_multicast_split).
  bool split_multicast = true;
};

// Parses "latency", "automatic", "remaining-combined", "S<W>", "B<W>", with an optional
// "+paired" suffix (Paired64). InputError on anything else.
ScheduleConfig parse_config(const std::string& name);

struct PhaseReport {
  uint32_t phase = 0;
  std::string label;
  uint32_t execution_count = 1;
  std::string config;
  Width width = Width::Word32;
  uint32_t horizon = 0;
  uint32_t lower_bound = 0;
  uint32_t max_row_bytes = 0;
  uint64_t total_row_bytes = 0;
  uint32_t patch_calls = 0;  // Repeat source-address patches, all tiles
  uint32_t patch_words = 0;
  uint32_t max_patch_words_per_tile = 0;
  double compile_ms = 0;
};

struct CompileReport {
  std::vector<PhaseReport> phases;
  uint32_t table_bytes_unshared = 0;  // largest per-tile table without row sharing
  uint32_t table_bytes_shared = 0;    // with cross-phase row sharing
  uint32_t sharing_patch_calls = 0;
  uint32_t sharing_patch_words = 0;
  uint32_t orders_considered = 0;
  uint32_t orders_deduplicated = 0;  // identical candidate orders dropped
};

// How far a compile has come: the stage ("scheduling": phases, "packaging", "proving": phase
// iterations of the payload proof) and how much of it is done (total 0: no count). Called
// from any thread, one call at a time.
using CompileProgress = std::function<void(const std::string& stage, uint64_t done, uint64_t total)>;

struct CompileOptions {
  ScheduleConfig config;
  // Per phase id, a configuration that replaces `config` for that phase (what
  // `compile --selection` applies from a sweep report); phases not named use `config`.
  std::map<uint32_t, ScheduleConfig> phase_configs;
  const ScheduleConfig& config_for(uint32_t phase) const {
    const auto it = phase_configs.find(phase);
    return it == phase_configs.end() ? config : it->second;
  }
  std::optional<std::vector<uint32_t>> phases;  // phase ids to compile; all when empty
  bool share_rows = true;
  uint64_t token_seed = 1;  // payload tokens in source memory
  bool with_proof = true;   // add the payload expectations to the package
  // > 0 (with with_proof false): instead of checksums, an output binding "proof.sampled" over
  // destination spans of about this many words in all, which a device reads back and the host
  // compares with the simulated run (what a hardware replay checks; docs/device.md).
  uint64_t sampled_proof_words = 0;
  CompileProgress on_progress;  // optional
};

struct CompileResult {
  arch::Package package;
  CompileReport report;
};

// Whether a Paired64 configuration can compile `phase` differently from its Word32 twin: only
// through transfers eligible for 64-bit items (docs/scheduling.md, "Paired64"). Without one,
// both widths give the same package and the same report figures.
bool paired_width_applies(const arch::CapturePhase& phase, const arch::MachineDescription& machine);

// Throws InputError for a bad capture, CompilerError when a stage check fails.
CompileResult compile_capture(const arch::Capture& capture, const arch::MachineDescription& machine,
                              const CompileOptions& options);

}  // namespace lockstep::compiler
