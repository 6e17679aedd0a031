#include "compiler/table_layout.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "arch/runtime_sram.hpp"
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

std::optional<AreaLayout> lay_out_area(uint64_t begin, uint64_t end, const AreaRequest& request, uint32_t& missing) {
  struct Piece {
    uint64_t at, end;
  };
  std::vector<Piece> pieces;
  for (uint64_t at = arch::clear_of_runtime_sram(begin, 0); at < end;) {
    uint64_t piece_end = end;
    for (const arch::SramRange& r : arch::kRuntimeOwnedSram) {
      if (r.begin >= at) piece_end = std::min<uint64_t>(piece_end, r.begin);
    }
    pieces.push_back({at, piece_end});
    at = arch::clear_of_runtime_sram(piece_end, 1);
  }
  uint64_t needed = request.tail_bytes, room = 0;
  for (const uint32_t bytes : request.row_bytes) needed += bytes;
  for (const Piece& piece : pieces) room += piece.end - piece.at;
  missing = static_cast<uint32_t>(std::min<uint64_t>(needed > room ? needed - room : 1, UINT32_MAX));
  AreaLayout layout;
  size_t highest = 0;
  for (const uint32_t bytes : request.row_bytes) {
    size_t p = 0;
    while (p < pieces.size() && pieces[p].end - pieces[p].at < bytes) ++p;
    if (p == pieces.size()) return std::nullopt;
    layout.row_addresses.push_back(static_cast<uint32_t>(pieces[p].at));
    pieces[p].at += bytes;
    highest = std::max(highest, p);
  }
  // The tail follows the highest rows, so rows that reach the run's end keep the look-ahead.
  while (highest < pieces.size() && pieces[highest].end - pieces[highest].at < request.tail_bytes) ++highest;
  if (highest == pieces.size()) return std::nullopt;
  layout.tail_address = static_cast<uint32_t>(pieces[highest].at);
  layout.end = static_cast<uint32_t>(layout.tail_address + request.tail_bytes);
  layout.start = layout.tail_address;
  for (const uint32_t address : layout.row_addresses) layout.start = std::min(layout.start, address);
  return layout;
}

std::vector<std::pair<uint64_t, uint64_t>> ElementUse::free_runs() const {
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  const uint32_t step = machine_->element_bytes;
  // Walk element by element from the bottom of SRAM to the end of the row region.
  for (uint64_t a = machine_->sram_base; a < machine_->row_region_end;) {
    const uint64_t next = std::min<uint64_t>((a / step + 1) * step, machine_->row_region_end);
    if (!used(machine_->element_of(static_cast<uint32_t>(a)))) {
      if (runs.empty() || runs.back().second != a) {
        // The bottom of SRAM holds the loader's slot and the entry stub of a device image.
        const uint64_t begin =
            (std::max<uint64_t>(a, uint64_t{machine_->sram_base} + arch::kEntryStubEnd) + 7) & ~uint64_t{7};
        runs.emplace_back(begin, next);
      } else {
        runs.back().second = next;
      }
    }
    a = next;
  }
  return runs;
}

bool ElementUse::find_free(const AreaRequest& request, AreaLayout& layout, uint32_t& largest_run,
                           uint32_t& missing) const {
  largest_run = 0;
  missing = UINT32_MAX;
  for (const auto& [begin, end] : free_runs()) {
    largest_run = std::max<uint32_t>(largest_run, static_cast<uint32_t>(end - begin));
    uint32_t short_by = 0;
    if (auto candidate = lay_out_area(begin, end, request, short_by)) {
      layout = std::move(*candidate);
      return true;
    }
    missing = std::min(missing, short_by);
  }
  return false;
}

std::vector<AreaLayout> place_reserved_areas(const std::vector<uint32_t>& tiles, const std::vector<ElementUse>& data,
                                             const std::vector<AreaRequest>& requests,
                                             const arch::MachineDescription& machine) {
  ElementUse all(machine);
  for (const ElementUse& use : data) all.add(use);
  // Every tile's area from the lowest start where the longest of them fits.
  for (const auto& [begin, end] : all.free_runs()) {
    std::vector<AreaLayout> layouts;
    uint32_t missing = 0;
    for (const AreaRequest& request : requests) {
      auto layout = lay_out_area(begin, end, request, missing);
      if (!layout) break;
      layouts.push_back(std::move(*layout));
    }
    if (layouts.size() == requests.size()) return layouts;
  }
  std::vector<AreaLayout> layouts(requests.size());
  for (size_t i = 0; i < tiles.size(); ++i) {
    uint32_t largest = 0, missing = 0;
    if (!data[i].find_free(requests[i], layouts[i], largest, missing)) {
      uint64_t needed = requests[i].tail_bytes;
      for (const uint32_t bytes : requests[i].row_bytes) needed += bytes;
      throw InputError("tile " + std::to_string(tiles[i]) + ": exchange table and digest slots need " +
                       std::to_string(needed) + " bytes in memory elements free of transfer data below " +
                       hex(machine.row_region_end) + " and clear of the runtime's SRAM, the largest free run is " +
                       std::to_string(largest) + " bytes: " + std::to_string(missing) + " bytes missing");
    }
  }
  return layouts;
}

}  // namespace lockstep::compiler
