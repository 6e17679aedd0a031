#include "compiler/table_layout.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "io/errors.hpp"
#include "io/hex.hpp"

namespace lockstep::compiler {
namespace {

using arch::hex;

}  // namespace

ElementUse::ElementUse(const arch::MachineDescription& machine)
    : machine_(&machine), used_(machine.element_of(machine.row_region_end - 1) + 1, false) {}

void ElementUse::add_range(uint32_t address, uint64_t bytes) {
  if (bytes == 0) return;
  const uint64_t begin = std::max<uint64_t>(address, machine_->sram_base);
  const uint64_t end = std::min<uint64_t>(uint64_t{address} + bytes, machine_->row_region_end);
  if (begin >= end) return;
  const uint32_t first = machine_->element_of(static_cast<uint32_t>(begin));
  const uint32_t last = machine_->element_of(static_cast<uint32_t>(end - 1));
  for (uint32_t e = first; e <= last && e < used_.size(); ++e) used_[e] = true;
}

void ElementUse::add(const ElementUse& other) {
  for (size_t e = 0; e < used_.size() && e < other.used_.size(); ++e) used_[e] = used_[e] || other.used_[e];
}

bool ElementUse::find_free(uint32_t bytes, uint32_t& address, uint32_t& largest_run) const {
  largest_run = 0;
  uint64_t run_start = 0;
  bool in_run = false;
  const uint32_t step = machine_->element_bytes;
  // Walk element by element from the bottom of SRAM to the end of the row region.
  for (uint64_t a = machine_->sram_base; a < machine_->row_region_end;) {
    const uint64_t next = std::min<uint64_t>((a / step + 1) * step, machine_->row_region_end);
    const bool free = !used(machine_->element_of(static_cast<uint32_t>(a)));
    if (free && !in_run) {
      // The bottom of SRAM holds the loader's slot and the entry stub of a device image.
      run_start = (std::max<uint64_t>(a, uint64_t{machine_->sram_base} + arch::kEntryStubEnd) + 7) & ~uint64_t{7};
      in_run = true;
    }
    if (!free) in_run = false;
    if (in_run) {
      const uint64_t run = next > run_start ? next - run_start : 0;
      largest_run = std::max<uint32_t>(largest_run, static_cast<uint32_t>(run));
      if (run >= bytes) {
        address = static_cast<uint32_t>(run_start);
        return true;
      }
    }
    a = next;
  }
  return false;
}

std::vector<uint32_t> place_reserved_areas(const std::vector<uint32_t>& tiles,
                                           const std::vector<ElementUse>& data,
                                           const std::vector<uint32_t>& bytes_needed,
                                           const arch::MachineDescription& machine) {
  std::vector<uint32_t> addresses(tiles.size(), 0);
  ElementUse all(machine);
  for (const ElementUse& use : data) all.add(use);
  const uint32_t most = bytes_needed.empty() ? 0 : *std::max_element(bytes_needed.begin(), bytes_needed.end());
  uint32_t common = 0;
  uint32_t largest = 0;
  if (all.find_free(most, common, largest)) {
    std::fill(addresses.begin(), addresses.end(), common);
    return addresses;
  }
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (!data[i].find_free(bytes_needed[i], addresses[i], largest)) {
      throw InputError("tile " + std::to_string(tiles[i]) + ": exchange table and digest slots need " +
                       std::to_string(bytes_needed[i]) + " bytes in memory elements free of transfer data below " +
                       hex(machine.row_region_end) + ", the largest free run is " + std::to_string(largest) +
                       " bytes: " + std::to_string(bytes_needed[i] - largest) + " bytes missing");
    }
  }
  return addresses;
}

}  // namespace lockstep::compiler
