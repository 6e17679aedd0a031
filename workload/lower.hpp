#pragma once
// Lowering a ViT encoder workload onto a machine's tiles (docs/lowering.md): the exchange
// capture (every phase of transfers, Repeat source addresses kept) and the per-tile
// resident program (arch::Package: weight segments, kernel and exchange steps, the layer
// Repeat with iterated weight pointers). Exchange steps carry no rows: the exchange
// compiler adds them.
#include <cstdint>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/capture.hpp"
#include "formats/package.hpp"
#include "workload/weight_layout.hpp"
#include "workload/workload.hpp"

namespace lockstep::workload {

struct TileMemoryUse {
  uint32_t tile = 0;
  uint32_t persistent_bytes = 0;  // weights, pointers, resident activations
  uint32_t peak_bytes = 0;        // persistent + the largest operation's scratch
};

// How one GEMM was split (for --stats and tests).
struct GemmPlan {
  std::string name;         // e.g. "layer.mlp.up"
  uint32_t in = 0;          // reduction dimension
  uint32_t out = 0;         // output columns
  uint32_t k_blocks = 0;    // blocks of the reduction dimension
  uint32_t o_blocks = 0;    // blocks of output columns
  uint32_t chunks = 0;      // row chunks (passes) so the scratch fits
  uint32_t row_groups = 1;  // groups of a chunk's rows, each on its own copy of the K x O grid
};

struct Lowered {
  arch::Capture capture;
  arch::Package program;
  std::vector<TileMemoryUse> memory;  // one per tile, in tile order
  std::vector<GemmPlan> gemms;
  uint32_t owners = 0;               // tiles holding activation rows
  std::vector<WeightBlock> weights;  // where every parameter lives (token-filled until written)
};

// InputError (file: placement: tile T: tensor X: N bytes missing ...) when it cannot fit.
Lowered lower_workload(const Workload& workload, const arch::MachineDescription& machine);

}  // namespace lockstep::workload
