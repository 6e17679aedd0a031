#pragma once
// Where each tile's exchange table goes: 8-byte aligned, below row_region_end, in memory
// elements that none of the tile's transfer data uses (hazard 1 of docs/ipu21-exchange.md
// section 7: a row and its fetch look-ahead must not share an element with data).
#include <cstdint>
#include <vector>

#include "arch/machine.hpp"

namespace lockstep::compiler {

// The memory elements below row_region_end that one tile's transfer data touches.
class ElementUse {
 public:
  explicit ElementUse(const arch::MachineDescription& machine);
  void add_range(uint32_t address, uint64_t bytes);
  void add(const ElementUse& other);
  bool used(uint32_t element) const { return element < used_.size() && used_[element]; }

  // The lowest 8-aligned address from which `bytes` bytes lie in unused elements below
  // row_region_end, or none; `largest_run` receives the longest unused run in bytes.
  bool find_free(uint32_t bytes, uint32_t& address, uint32_t& largest_run) const;

 private:
  const arch::MachineDescription* machine_;
  std::vector<bool> used_;
};

// Places every tile's reserved area (its table, then its fetch look-ahead or digest slots).
// One common address is used when every tile has room there, else each tile its own.
// Throws InputError naming the tile and the bytes missing when a tile has no room.
std::vector<uint32_t> place_reserved_areas(const std::vector<uint32_t>& tiles,
                                           const std::vector<ElementUse>& data,
                                           const std::vector<uint32_t>& bytes_needed,
                                           const arch::MachineDescription& machine);

}  // namespace lockstep::compiler
