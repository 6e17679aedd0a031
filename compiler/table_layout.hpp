#pragma once
// Where each tile's exchange table goes: 8-byte aligned, below row_region_end, in memory
// elements that none of the tile's transfer data uses (hazard 1 of docs/ipu21-exchange.md
// section 7: a row and its fetch look-ahead must not share an element with data), each row
// and the tail whole outside the stack runtime's SRAM (arch/runtime_sram.hpp).
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "arch/machine.hpp"

namespace lockstep::compiler {

// One tile's reserved area: its rows (bytes each, 8-aligned, in table order), then a tail
// (digest pointers, scratch and slots; at least the fetch look-ahead).
struct AreaRequest {
  std::vector<uint32_t> row_bytes;
  uint32_t tail_bytes = 0;
};

// Where an area went: [start, end), each row's address, then the tail's.
struct AreaLayout {
  uint32_t start = 0;
  std::vector<uint32_t> row_addresses;
  uint32_t tail_address = 0;
  uint32_t end = 0;
};

// Lays `request` out in the free run [begin, end), split into pieces by the runtime's
// SRAM: each row, in table order, goes to the lowest piece with room (so a table that fits
// below the first gap is laid out in order from `begin`), the tail right after the rows of
// the highest piece used, or in the next piece with room. Rows that reach the run's end
// (where data may follow) so keep the tail as their look-ahead; a row before the
// runtime's SRAM only reads it.
// None when it does not fit; `missing` then says by how many bytes at least.
std::optional<AreaLayout> lay_out_area(uint64_t begin, uint64_t end, const AreaRequest& request, uint32_t& missing);

// The memory elements below row_region_end that one tile's transfer data touches.
class ElementUse {
 public:
  explicit ElementUse(const arch::MachineDescription& machine);
  void add_range(uint32_t address, uint64_t bytes);
  void add(const ElementUse& other);
  bool used(uint32_t element) const { return element < used_.size() && used_[element]; }

  // The lowest free run (unused elements below row_region_end) that holds `request` laid
  // out from its start, or none; `missing` receives the fewest bytes any run lacks and
  // `largest_run` the longest run in bytes.
  bool find_free(const AreaRequest& request, AreaLayout& layout, uint32_t& largest_run, uint32_t& missing) const;
  // [begin, end) of each run of unused elements, ascending (begin past the entry stub).
  std::vector<std::pair<uint64_t, uint64_t>> free_runs() const;

 private:
  const arch::MachineDescription* machine_;
  std::vector<bool> used_;
};

// Places every tile's reserved area (its table, then its fetch look-ahead or digest slots).
// One common start is used when every tile has room there, else each tile its own.
// Throws InputError naming the tile and the bytes missing when a tile has no room.
std::vector<AreaLayout> place_reserved_areas(const std::vector<uint32_t>& tiles, const std::vector<ElementUse>& data,
                                             const std::vector<AreaRequest>& requests,
                                             const arch::MachineDescription& machine);

}  // namespace lockstep::compiler
