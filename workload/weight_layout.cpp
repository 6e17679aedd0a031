#include "workload/weight_layout.hpp"

#include <stdexcept>

namespace lockstep::workload {

void write_weight_blocks(arch::Package& program, const std::vector<WeightBlock>& blocks, const BlockWriter& writer) {
  for (const WeightBlock& block : blocks) {
    arch::TileProgram& tile = program.tiles.at(block.tile);
    arch::Segment* segment = nullptr;
    for (auto& s : tile.segments)
      if (s.address == block.base) segment = &s;
    if (segment == nullptr || segment->fill != arch::FillKind::Tokens) {
      throw std::logic_error("weight block " + block.tensor + " on tile " + std::to_string(block.tile) +
                             " has no token segment at its base");
    }
    segment->fill = arch::FillKind::Bytes;
    segment->bytes.assign(segment->size, 0);
    const uint32_t stride = block.stride == 0 ? block.bytes() : block.stride;
    for (uint32_t layer = 0; layer < block.copies; ++layer) {
      writer(block, layer, segment->bytes.mutable_data() + uint64_t{layer} * stride);
    }
  }
}

}  // namespace lockstep::workload
