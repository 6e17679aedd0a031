#include "workload/placement.hpp"

#include <algorithm>

#include "io/errors.hpp"

namespace lockstep::workload {

namespace {
uint64_t align8(uint64_t address) { return (address + 7) & ~uint64_t{7}; }
}  // namespace

TileMemory::TileMemory(uint32_t tiles, uint32_t begin, uint32_t end, std::string file,
                       const arch::MachineDescription* elements)
    : begin_(begin),
      end_(end),
      file_(std::move(file)),
      elements_(elements),
      persistent_(tiles, begin),
      exchanged_(tiles, begin),
      scratch_(tiles, begin),
      peak_(tiles, begin) {}

uint32_t TileMemory::take(uint32_t tile, uint32_t& top, const std::string& tensor, uint64_t bytes) {
  const uint64_t start = align8(top);
  if (start + bytes > end_) {
    const uint64_t missing = start + bytes - end_;
    throw InputError(file_ + ": placement: tile " + std::to_string(tile) + ": tensor " + tensor + ": " +
                     std::to_string(missing) + " bytes missing (needs " + std::to_string(bytes) + ", " +
                     std::to_string(start - begin_) + " of " + std::to_string(end_ - begin_) + " already in use)");
  }
  top = static_cast<uint32_t>(start + bytes);
  peak_[tile] = std::max(peak_[tile], top);
  return static_cast<uint32_t>(start);
}

uint32_t TileMemory::place(uint32_t tile, const std::string& tensor, uint64_t bytes, bool exchanged) {
  const uint32_t address = take(tile, persistent_[tile], tensor, bytes);
  scratch_[tile] = std::max(scratch_[tile], persistent_[tile]);
  if (exchanged) exchanged_[tile] = persistent_[tile];
  return address;
}

uint32_t TileMemory::apart(uint32_t start, uint32_t below_end) const {
  const uint64_t aligned = align8(start);
  if (!elements_ || below_end <= begin_ || aligned >= end_) return static_cast<uint32_t>(aligned);
  const uint32_t element = elements_->element_of(below_end - 1);
  if (elements_->element_of(static_cast<uint32_t>(aligned)) != element) {
    return static_cast<uint32_t>(aligned);
  }
  // The first address of the next element (elements are aligned to their size).
  const arch::MachineDescription& m = *elements_;
  if (aligned < m.interleaved_base) {
    return std::min<uint32_t>(m.interleaved_base,
                              static_cast<uint32_t>((aligned / m.element_bytes + 1) * m.element_bytes));
  }
  const uint64_t offset = aligned - m.interleaved_base;
  return static_cast<uint32_t>(m.interleaved_base +
                               (offset / m.interleaved_element_bytes + 1) * m.interleaved_element_bytes);
}

uint32_t TileMemory::scratch_start(uint32_t tile) const {
  const uint32_t start = apart(persistent_[tile], exchanged_[tile]);
  // In the interleaved region when it is at least half the SRAM (IPU21: 416 of 624 KiB), so
  // the GEMMs' block buffers and the attention's keys and values can take the AMP's
  // interleaved-weights cost (docs/lowering.md "SRAM placement").
  if (interleaved_scratch_ && elements_ && 2 * (end_ - elements_->interleaved_base) >= end_ - begin_) {
    return std::max(start, elements_->interleaved_base);
  }
  return start;
}

void TileMemory::begin_scratch() {
  for (uint32_t t = 0; t < tiles(); ++t) scratch_[t] = scratch_start(t);
}

uint32_t TileMemory::scratch(uint32_t tile, const std::string& tensor, uint64_t bytes) {
  return take(tile, scratch_[tile], tensor, bytes);
}

uint32_t TileMemory::scratch_apart(uint32_t tile, const std::string& tensor, uint64_t bytes, uint32_t below_end) {
  uint32_t top = std::max(scratch_[tile], std::min(end_, apart(scratch_[tile], below_end)));
  const uint32_t address = take(tile, top, tensor, bytes);
  scratch_[tile] = top;
  return address;
}

}  // namespace lockstep::workload
