// C600 logical/physical mapping and the per-tile terms of the route-timing formulas
// (IPU21-EXCHANGE.md sections 2 and 3).
#include "arch/topology.hpp"

#include <stdexcept>
#include <string>

namespace lockstep::arch {
namespace {

constexpr uint32_t kC600Tiles = 1472;

int folded_column(uint32_t c) { return static_cast<int>(c <= 7 ? c : 15 - c); }

}  // namespace

uint32_t Topology::c600_physical(uint32_t logical) {
  const uint32_t pair = logical / 2;
  const uint32_t lane = logical % 2;
  const uint32_t block = pair / 23;
  const uint32_t q = pair % 23;
  const uint32_t row = block % 2 == 0 ? q : 22 - q;
  const uint32_t column = 4 * (block / 2) + block % 2;
  return 64 * row + column + 2 * lane;
}

Topology::Topology(const MachineDescription& machine)
    : tiles_(machine.tiles), chip_tiles_(machine.chip_tiles), route_(machine.route) {
  // The loader guarantees this; a hand-built description might not.
  if (chip_tiles_ != kC600Tiles || tiles_ == 0 || tiles_ > chip_tiles_) {
    throw std::invalid_argument(
        "Topology: the c600 mapping needs chip_tiles 1472 and 1..1472 "
        "tiles in use, got " +
        std::to_string(chip_tiles_) + " and " + std::to_string(tiles_));
  }
  physical_of_.resize(chip_tiles_);
  logical_of_.resize(chip_tiles_);
  for (uint32_t l = 0; l < chip_tiles_; ++l) {
    physical_of_[l] = c600_physical(l);
    logical_of_[physical_of_[l]] = l;
  }
  terms_.resize(chip_tiles_);
  for (uint32_t p = 0; p < chip_tiles_; ++p) {
    const int b0 = static_cast<int>(p & 1);
    const int b1 = static_cast<int>((p >> 1) & 1);
    const int c = static_cast<int>((p >> 2) & 15);
    const int h = c >> 3;
    const int r = static_cast<int>(p >> 6);
    const int f = folded_column(static_cast<uint32_t>(c));
    const int k = b1 == 0 ? (h == b0 ? 1 : 5) : (h == b0 ? 2 : 4);
    TileTerms& t = terms_[p];
    t.displacement_as_source = static_cast<int16_t>(-6 * (f + (h ^ b0)));
    t.displacement_as_destination = static_cast<int16_t>(6 * f + k);
    t.ttm_as_source = static_cast<int16_t>(8 * h + 3 + 4 * f + 2 * r + route_.ttm_offset);
    t.ttm_as_destination = static_cast<int16_t>(-c - 4 * f - 2 * r);
    t.turn_same_half = static_cast<int16_t>(c % 8 + 1);
    t.turn_other_half = static_cast<int16_t>(16 - c % 8);
    t.half = static_cast<uint8_t>(h);
  }
}

}  // namespace lockstep::arch
