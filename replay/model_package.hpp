#pragma once
// The whole model as one package: the workload lowering's program (segments, kernels, one
// exchange step per phase and tile without a row, the layers as one Repeat) merged with
// what the exchange compiler makes of the lowering's capture (rows, CSR values, tables,
// shared-row setup patches and Repeat patch lists). This layer sits above both: the
// compiler and the workload front-ends never include each other. `lockstep build` is the
// command around it (docs/user-guide.md "Building a whole model").
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "compiler/compile.hpp"
#include "formats/capture.hpp"
#include "formats/package.hpp"
#include "workload/model_weights.hpp"
#include "workload/workload.hpp"

namespace lockstep::replay {

// What the merge did, for the command's summary line and the tests.
struct MergeSummary {
  uint32_t phases = 0;
  uint32_t tiles = 0;               // tiles of the merged package
  uint32_t table_bytes = 0;         // largest compiled table on one tile
  uint64_t segment_bytes = 0;       // all segments of all tiles (what a loader writes)
  uint64_t rows = 0;                // exchange steps that got a row (static steps)
  uint64_t no_row_steps = 0;        // exchange steps that stay barrier-only
  uint32_t setup_patch_steps = 0;   // shared-row setup patches inserted (static steps)
  uint32_t repeat_patch_steps = 0;  // per-iteration (Repeat) patch lists inserted
  uint32_t tiles_added = 0;         // compiled tiles the program did not list
  uint32_t tiles_without_rows = 0;  // program tiles with no row in any phase
};

// Merges the compiled exchange into the program: for every tile, every exchange step of
// phase p gets the compiled row address, INCOMING_BASE, MUX, FORMAT and MUXPAIR of that
// tile for phase p, preceded by the patch steps the compiler put before that phase's
// exchange (shared-row setup, then the Repeat patch list; per-iteration values map onto
// the program's innermost Repeat, whose count must equal the phase's iterations). The
// compiled tables become segments inside each program tile's table region (with the
// machine's fetch look-ahead). `compiled` must come from compile_capture(capture) without
// the payload proof. InputError when a table does not fit or the two do not describe the
// same program (phases, machine); CompilerError for a compiled structure it cannot place.
arch::Package merge_exchange(arch::Package program, const arch::Capture& capture, const arch::Package& compiled,
                             const arch::MachineDescription& machine, MergeSummary* summary = nullptr);

struct ModelPackageOptions {
  compiler::ScheduleConfig config = compiler::parse_config("B1024");
  bool share_rows = true;
  // The parameters as the device holds them; without them the weights stay payload tokens.
  const workload::DeviceWeights* weights = nullptr;
  // FP16 [rows, patch_values] loaded into the `patches` input binding; empty: none.
  std::vector<uint16_t> patches;
  // Called with a short description of each stage as it starts ("lowering", ...).
  std::function<void(const std::string&)> on_stage;
};

struct ModelPackage {
  arch::Package package;
  compiler::CompileReport report;
  MergeSummary summary;
  double lower_seconds = 0;
  double compile_seconds = 0;
  double merge_seconds = 0;
};

// Lowers the workload on the machine, compiles every phase of its capture (no payload
// proof: the program's own data flows through the exchanges) and merges the two.
ModelPackage build_model_package(const workload::Workload& workload, const arch::MachineDescription& machine,
                                 const ModelPackageOptions& options);

}  // namespace lockstep::replay
