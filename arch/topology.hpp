#pragma once
// C600 tile topology and route timing (IPU21-EXCHANGE.md sections 2 and 3).
// Tiles are named by physical id inside the fabric; packages and captures use logical ids.
#include <cstdint>
#include <vector>

#include "arch/machine.hpp"

namespace lockstep::arch {

class Topology {
 public:
  explicit Topology(const MachineDescription& machine);

  uint32_t tiles() const { return tiles_; }
  // Physical ids range over the whole chip even when only the first `tiles` logical tiles
  // are in use: size per-physical-tile arrays by this.
  uint32_t physical_tiles() const { return chip_tiles_; }
  uint32_t physical(uint32_t logical) const { return physical_of_[logical]; }
  uint32_t logical(uint32_t physical) const { return logical_of_[physical]; }
  static uint32_t partner(uint32_t physical) { return physical ^ 2u; }
  static uint32_t row(uint32_t physical) { return physical >> 6; }

  // All of these take physical ids.
  int displacement(uint32_t s, uint32_t d) const;
  int direction(uint32_t s, uint32_t d) const;           // 1 or 2: the sctl bit a send to d needs
  int time_to_mux(uint32_t s, uint32_t d) const;         // ttm(s,d), events
  int paired_time_to_mux(uint32_t s, uint32_t d) const;  // max(ttm(s,d), ttm(s,d^2))
  // Events from a paired item's leave event to the early member e's paired mux. The SDK's
  // schedule (spec section 6: window at pttm + shift, shift = the send's issue event) has
  // item k of a send issued at `issue` there at issue + pttm(s,e) + k: one event before
  // leave + pttm, where leave = issue + 1 + k.
  int paired_leave_to_mux(uint32_t s, uint32_t e) const { return paired_time_to_mux(s, e) - 1; }
  int write_delay(uint32_t d) const;         // W(d): mux -> SRAM, events
  int paired_write_delay(uint32_t d) const;  // paired item mux -> SRAM, events

  // The C600 mapping of section 2, without a machine: logical 0..1471 -> physical.
  static uint32_t c600_physical(uint32_t logical);

 private:
  // Every term of D and ttm that depends on one end only, so that a pair costs a few adds.
  struct TileTerms {
    int16_t displacement_as_source;       // -6 (f(c) + (h XOR b0))
    int16_t displacement_as_destination;  // 6 f(c) + k
    int16_t ttm_as_source;                // 8h + 3 + 4 f(c) + 2r + ttm_offset
    int16_t ttm_as_destination;           // -c - 4 f(c) - 2r
    int16_t turn_same_half;               // (c mod 8) + 1
    int16_t turn_other_half;              // 16 - (c mod 8)
    uint8_t half;                         // h
  };

  uint32_t tiles_;
  uint32_t chip_tiles_;
  RouteTiming route_;
  std::vector<uint32_t> physical_of_;
  std::vector<uint32_t> logical_of_;
  std::vector<TileTerms> terms_;  // by physical id
};

inline int Topology::displacement(uint32_t s, uint32_t d) const {
  return terms_[s].displacement_as_source + terms_[d].displacement_as_destination;
}

inline int Topology::direction(uint32_t s, uint32_t d) const { return displacement(s, d) >= 1 ? 1 : 2; }

inline int Topology::time_to_mux(uint32_t s, uint32_t d) const {
  const TileTerms& src = terms_[s];
  const TileTerms& dst = terms_[d];
  const int D = src.displacement_as_source + dst.displacement_as_destination;
  const int turn = src.half == dst.half ? src.turn_same_half : src.turn_other_half;
  return src.ttm_as_source + dst.ttm_as_destination + turn + (D < 0 ? -D : D);
}

inline int Topology::paired_time_to_mux(uint32_t s, uint32_t d) const {
  const int a = time_to_mux(s, d);
  const int b = time_to_mux(s, d ^ 2u);
  return a > b ? a : b;
}

inline int Topology::write_delay(uint32_t d) const {
  return route_.write_delay_base + route_.write_delay_per_row * static_cast<int>(row(d));
}

inline int Topology::paired_write_delay(uint32_t d) const {
  return route_.paired_write_delay_base + route_.write_delay_per_row * static_cast<int>(row(d));
}

}  // namespace lockstep::arch
