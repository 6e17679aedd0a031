#pragma once
// Cross-phase row sharing: on one tile, rows that are equal once their address-bearing
// words are zeroed are stored once; each use then patches the words that differ.
#include <cstdint>
#include <vector>

#include "compiler/phase_schedule.hpp"

namespace lockstep::compiler {

// One row as stored in a tile's table, and the phases (by position in the package's phase
// list) that execute it.
struct StoredRow {
  std::vector<uint32_t> words;          // stored content (patched words hold the first use's values)
  std::vector<uint32_t> uses;           // phase positions, ascending
  std::vector<uint32_t> patched_words;  // word indices whose value differs between uses or iterations
  uint32_t offset = 0;                  // byte offset in the tile's table, 8-aligned
};

struct TileTable {
  uint32_t tile = 0;
  std::vector<StoredRow> rows;
  std::vector<int32_t> row_of_phase;  // per phase position: index into rows, -1 when no row
  uint32_t bytes = 0;                 // table size as laid out (after sharing when enabled)
  uint32_t unshared_bytes = 0;        // what one copy per use would take
};

// `rows_by_phase[p]` is the tile's row in phase position p, or nullptr. With `share` false
// every use gets its own copy (and no setup patches are needed).
TileTable build_tile_table(uint32_t tile, const std::vector<const TileRow*>& rows_by_phase, bool share);

// Rows are placed 8-byte aligned (a sendpicp must start on an 8-byte boundary).
inline uint32_t row_bytes_aligned(size_t words) { return static_cast<uint32_t>((words * 4 + 7) & ~size_t{7}); }

// True when the field takes more than one value over its iterations.
bool varies_per_iteration(const AddressField& field);

}  // namespace lockstep::compiler
