#pragma once
// Where the lowering put every parameter: blocks of the network's tensors on tiles, one copy
// per layer for the layer tensors. A weight source (seeded, or a safetensors file) fills
// these blocks with real values in place of the lowering's payload tokens.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "formats/package.hpp"
#include "workload/placement.hpp"

namespace lockstep::workload {

enum class WeightFormat : uint8_t {
  F143,  // one byte per value (x 2^weight_scale): GEMM weights
  Fp16,  // biases, position embedding, final layernorm gain and bias
};

// Values [rows) x [columns) of tensor `tensor` (row-major [in, out] for GEMM weights, [1, n]
// for vectors, [tokens, hidden] for the position embedding), stored row-major on `tile`:
// layer l's copy at base + l * stride (stride 0: one copy, not per layer).
struct WeightBlock {
  std::string tensor;  // e.g. "layer.mlp.up.weight", "embed.position", "final.ln.gamma"
  uint32_t tile = 0;
  uint32_t base = 0;
  uint32_t stride = 0;
  uint32_t copies = 1;  // layers, or 1
  Span rows;
  Span columns;
  WeightFormat format = WeightFormat::Fp16;
  uint32_t bytes() const { return rows.size() * columns.size() * (format == WeightFormat::F143 ? 1 : 2); }
};

// Writes one block's bytes for layer `layer` (copy index) into `out` (block.bytes() bytes).
using BlockWriter = std::function<void(const WeightBlock& block, uint32_t layer, uint8_t* out)>;

// Replaces every block's token-filled segment in `program` with the bytes `writer` gives,
// layer by layer. Throws std::logic_error if a block has no segment of its own.
void write_weight_blocks(arch::Package& program, const std::vector<WeightBlock>& blocks, const BlockWriter& writer);

}  // namespace lockstep::workload
