#pragma once
// The state the lowering builds up: tile memory, the capture's phases, each tile's steps
// (top level and layer Repeat body), segments and iterated pointers. Shared by lower.cpp,
// lower_gemm.cpp and lower_attention.cpp.
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/capture.hpp"
#include "formats/package.hpp"
#include "workload/lower.hpp"
#include "workload/placement.hpp"
#include "workload/workload.hpp"

namespace lockstep::workload {

// Bytes of one FP16 value and one FP32 value.
inline constexpr uint32_t kHalf = 2;
inline constexpr uint32_t kFloat = 4;

// A tensor stored once per layer, layer l at base + l * stride, read through a pointer
// slot that the layer Repeat advances by `stride` (or a plain address outside it).
struct LayerTensor {
  uint32_t base = 0;
  uint32_t stride = 0;
  uint32_t slot = 0;  // pointer slot address; 0 = not iterated, use base directly
  arch::Operand operand() const { return slot ? arch::Operand{slot, true} : arch::Operand{base, false}; }
};

class LowerContext {
 public:
  LowerContext(const Workload& workload, const arch::MachineDescription& machine);

  const Workload& workload;
  const arch::MachineDescription& machine;
  const uint32_t tiles;
  TileMemory memory;
  arch::Capture capture;
  std::vector<GemmPlan> gemm_plans;

  // Owners: tiles holding activation rows, balanced whole rows, spread over the chip.
  uint32_t owners = 0;
  uint32_t owner_tile(uint32_t owner) const;
  Span owner_rows(uint32_t owner) const { return balanced_part(workload.rows(), owners, owner); }
  uint32_t owner_of_row(uint32_t row) const { return balanced_part_of(workload.rows(), owners, row); }

  // Steps go to the layer Repeat's body between begin_layers() and end_layers().
  void begin_layers();
  void end_layers();
  bool in_layers() const { return in_layers_; }
  uint32_t iterations() const { return in_layers_ ? workload.layers : 1; }

  // A new exchange phase; every tile gets its exchange step. Returns the phase index.
  size_t phase(const std::string& label, const std::string& operation);
  // A transfer in phase `index`; destinations equal to the source must not be passed.
  void transfer(size_t index, uint32_t source_tile, uint32_t source_address,
                std::vector<arch::Destination> destinations, uint32_t words);
  // The same from a per-layer tensor: iteration l reads source.base + l * source.stride.
  void transfer(size_t index, uint32_t source_tile, const LayerTensor& source,
                std::vector<arch::Destination> destinations, uint32_t words);
  void kernel(uint32_t tile, std::string name, std::vector<arch::Operand> operands, std::vector<int64_t> scalars);
  // Tokens-filled weights holding block `rows` x `columns` of tensor `name`: per layer when
  // `per_layer`, with a pointer slot inside the Repeat. Recorded in `weights`.
  // `exchanged`: transfers read it (scratch keeps out of its last memory element).
  LayerTensor place_weights(uint32_t tile, const std::string& name, Span rows, Span columns, WeightFormat format,
                            bool per_layer, bool exchanged = false);
  std::vector<WeightBlock> weights;

  arch::Package finish(std::vector<arch::Binding> bindings);

 private:
  std::vector<arch::Step>& steps(uint32_t tile) { return in_layers_ ? body_[tile] : top_[tile]; }
  bool in_layers_ = false;
  std::vector<std::vector<arch::Step>> top_;
  std::vector<std::vector<arch::Step>> body_;
  std::vector<std::vector<arch::IteratedPointer>> pointers_;
  std::vector<std::vector<arch::Segment>> segments_;
};

// Owner-side addresses of a row-major [rows, columns] FP16 activation, one per owner.
struct Activation {
  std::string name;
  uint32_t columns = 0;
  std::vector<uint32_t> address;  // per owner
};
Activation place_activation(LowerContext& context, const std::string& name, uint32_t columns,
                            uint32_t bytes_per_value = kHalf);

// A GEMM [rows, in] x [in, out] with weights resident on a K x O grid of tiles, or on
// `row_groups` copies of it: then block (kb, ob)'s rows of the reduction dimension are shared
// out over its copies, each resident on one, and every layer each copy sends its share to
// the others, so each copy multiplies its group of rows by the whole block.
struct GemmLayout {
  GemmPlan plan;
  uint32_t tile_offset = 0;
  std::vector<LayerTensor> weights;  // per grid tile (index()): its share of the block's rows
  std::vector<LayerTensor> bias;     // per grid tile: bias of its output columns
  size_t index(uint32_t kb, uint32_t ob, uint32_t m) const {
    return (size_t{kb} * plan.o_blocks + ob) * plan.row_groups + m;
  }
  uint32_t grid_tile(uint32_t kb, uint32_t ob, uint32_t m = 0) const;
  uint32_t tiles = 0;
};
GemmLayout plan_gemm(LowerContext& context, const std::string& name, uint32_t in, uint32_t out, bool per_layer,
                     uint32_t tile_offset);
// An element-wise kernel the reducers apply to their FP16 output slices before the scatter.
enum class GemmEpilogue { None, Gelu };
void emit_gemm(LowerContext& context, GemmLayout& layout, const Activation& input, const Activation& output,
               GemmEpilogue epilogue = GemmEpilogue::None);

// Multi-head attention from the fused QKV activation [rows, 3 * hidden] into `context_out`.
void emit_attention(LowerContext& context, const Activation& qkv, const Activation& context_out, uint32_t tile_offset);

}  // namespace lockstep::workload
