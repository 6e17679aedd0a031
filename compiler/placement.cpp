#include "compiler/placement.hpp"

#include <algorithm>

#include "arch/errors.hpp"

namespace lockstep::compiler {

TileMemory::TileMemory(uint32_t tiles, uint32_t begin, uint32_t end, std::string file)
    : begin_(begin),
      end_(end),
      file_(std::move(file)),
      persistent_(tiles, begin),
      scratch_(tiles, begin),
      peak_(tiles, begin) {}

uint32_t TileMemory::take(uint32_t tile, uint32_t& top, const std::string& tensor,
                          uint64_t bytes) {
  const uint64_t start = (uint64_t{top} + 7) & ~uint64_t{7};
  if (start + bytes > end_) {
    const uint64_t missing = start + bytes - end_;
    throw InputError(file_ + ": placement: tile " + std::to_string(tile) + ": tensor " + tensor +
                     ": " + std::to_string(missing) + " bytes missing (needs " +
                     std::to_string(bytes) + ", " + std::to_string(start - begin_) + " of " +
                     std::to_string(end_ - begin_) + " already in use)");
  }
  top = static_cast<uint32_t>(start + bytes);
  peak_[tile] = std::max(peak_[tile], top);
  return static_cast<uint32_t>(start);
}

uint32_t TileMemory::place(uint32_t tile, const std::string& tensor, uint64_t bytes) {
  const uint32_t address = take(tile, persistent_[tile], tensor, bytes);
  scratch_[tile] = std::max(scratch_[tile], persistent_[tile]);
  return address;
}

void TileMemory::begin_scratch() { scratch_ = persistent_; }

uint32_t TileMemory::scratch(uint32_t tile, const std::string& tensor, uint64_t bytes) {
  return take(tile, scratch_[tile], tensor, bytes);
}

}  // namespace lockstep::compiler
