#pragma once
// SRAM placement for the lowering: balanced splits of rows and columns over tiles, and a
// per-tile allocator with a persistent part (weights, resident activations) and a scratch
// part that each operation reuses. Running out names the tile, the tensor and the bytes.
// Given the machine, it also keeps what a tile sends and what it receives in one phase in
// different memory elements (docs/ipu21-exchange.md section 7, hazard 2): scratch starts
// in an element above the exchanged persistent data, and scratch_apart() opens a fresh
// element when needed.
#include <cstdint>
#include <string>
#include <vector>

#include "arch/machine.hpp"

namespace lockstep::workload {

struct Span {
  uint32_t begin = 0;
  uint32_t end = 0;
  uint32_t size() const { return end - begin; }
};

// Part i of `count` units split over `parts` as evenly as whole units allow (sizes differ
// by at most one; no part is padded to a block multiple).
inline Span balanced_part(uint32_t count, uint32_t parts, uint32_t i) {
  return {static_cast<uint32_t>(uint64_t{count} * i / parts), static_cast<uint32_t>(uint64_t{count} * (i + 1) / parts)};
}
// The part that holds unit `unit`.
inline uint32_t balanced_part_of(uint32_t count, uint32_t parts, uint32_t unit) {
  uint32_t p = static_cast<uint32_t>((uint64_t{unit} * parts + parts - 1) / count);
  while (p > 0 && balanced_part(count, parts, p).begin > unit) --p;
  while (balanced_part(count, parts, p).end <= unit) ++p;
  return p;
}

class TileMemory {
 public:
  // [begin, end) of every tile is available; `file` prefixes placement errors.
  // With `elements`, element boundaries are respected as described above.
  TileMemory(uint32_t tiles, uint32_t begin, uint32_t end, std::string file,
             const arch::MachineDescription* elements = nullptr);

  // Persistent: kept for the whole program. 8-aligned. `exchanged`: transfers read or
  // write it (activations), so scratch keeps out of its last element.
  uint32_t place(uint32_t tile, const std::string& tensor, uint64_t bytes, bool exchanged = false);
  // Scratch: lives until the next begin_scratch(); every tile restarts above its
  // persistent data (scratch_start). Call only after all persistent placement.
  void begin_scratch();
  uint32_t scratch(uint32_t tile, const std::string& tensor, uint64_t bytes);
  // Scratch that shares no memory element with [.., below_end) (a span placed earlier).
  uint32_t scratch_apart(uint32_t tile, const std::string& tensor, uint64_t bytes, uint32_t below_end);

  // Scratch from the interleaved region up when that is at least half the SRAM (the lowering
  // asks for it: docs/lowering.md "SRAM placement"); off by default.
  void prefer_interleaved_scratch(bool on) { interleaved_scratch_ = on; }
  // Where scratch starts after begin_scratch() (above the persistent data, and in the
  // interleaved region when preferred), and the first 8-aligned address at or above `start`
  // that shares no element with the byte before `below_end`: for planning.
  uint32_t scratch_start(uint32_t tile) const;
  uint32_t apart(uint32_t start, uint32_t below_end) const;
  uint32_t end() const { return end_; }

  uint32_t free_after_persistent(uint32_t tile) const { return end_ - persistent_[tile]; }
  uint32_t persistent_bytes(uint32_t tile) const { return persistent_[tile] - begin_; }
  uint32_t peak_bytes(uint32_t tile) const { return peak_[tile] - begin_; }
  uint32_t tiles() const { return static_cast<uint32_t>(persistent_.size()); }
  uint32_t capacity() const { return end_ - begin_; }

 private:
  uint32_t take(uint32_t tile, uint32_t& top, const std::string& tensor, uint64_t bytes);
  uint32_t begin_;
  uint32_t end_;
  std::string file_;
  const arch::MachineDescription* elements_;
  std::vector<uint32_t> persistent_;
  std::vector<uint32_t> exchanged_;  // end of the highest exchanged persistent tensor
  std::vector<uint32_t> scratch_;
  std::vector<uint32_t> peak_;
  bool interleaved_scratch_ = false;
};

}  // namespace lockstep::workload
