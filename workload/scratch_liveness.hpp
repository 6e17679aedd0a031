#pragma once
// Scratch SRAM reuse by liveness (docs/lowering.md, "SRAM placement"). An operation (a GEMM
// row chunk, the attention) uses a few scratch buffers on each tile, each live from the step
// that first writes it to the step that last reads it. Buffers whose live ranges overlap
// interfere; the interference graph is coloured (Boost.Graph's sequential vertex colouring,
// in order of first use, which for live ranges -- an interval graph -- uses the fewest
// colours) and every colour becomes one region as large as its largest buffer, so buffers
// that are never live together share memory.
//
// A buffer may also have to stay out of another's memory elements (a phase that sends one
// while receiving into the other, hazard 2 of docs/ipu21-exchange.md section 7): the two
// interfere, and the later region starts in a fresh element.
#include <cstdint>
#include <string>
#include <vector>

#include "workload/placement.hpp"

namespace lockstep::workload {

struct ScratchBuffer {
  std::string name;
  uint64_t bytes = 0;
  uint32_t first = 0;  // step of the operation that first writes it
  uint32_t last = 0;   // step that last reads it (inclusive)
};

// Pairs of buffers (indices) that must share no memory element.
struct ApartPair {
  size_t a = 0;
  size_t b = 0;
};

// The colour of each buffer; equal colours never interfere. Depends on the live ranges and
// apart pairs only, so one colouring serves every tile of an operation.
std::vector<uint32_t> colour_by_liveness(const std::vector<ScratchBuffer>& buffers,
                                         const std::vector<ApartPair>& apart);

struct ScratchLayout {
  std::vector<uint32_t> address;  // per buffer
  uint64_t end = 0;               // first byte above the last region (may exceed the memory)
};

// Regions in colour order from the tile's scratch start; nothing is reserved.
ScratchLayout layout_scratch(const TileMemory& memory, uint32_t tile, const std::vector<ScratchBuffer>& buffers,
                             const std::vector<uint32_t>& colours, const std::vector<ApartPair>& apart);

// layout_scratch() and reserve it (TileMemory::reserve_scratch: peak, or the placement error
// naming the tile and the largest buffer of the region that does not fit).
std::vector<uint32_t> place_scratch(TileMemory& memory, uint32_t tile, const std::vector<ScratchBuffer>& buffers,
                                    const std::vector<uint32_t>& colours, const std::vector<ApartPair>& apart);

}  // namespace lockstep::workload
