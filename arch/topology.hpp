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
  uint32_t physical(uint32_t logical) const { return physical_of_[logical]; }
  uint32_t logical(uint32_t physical) const { return logical_of_[physical]; }
  static uint32_t partner(uint32_t physical) { return physical ^ 2u; }
  static uint32_t row(uint32_t physical) { return physical >> 6; }

  // All of these take physical ids.
  int displacement(uint32_t s, uint32_t d) const;
  int direction(uint32_t s, uint32_t d) const;   // 1 or 2: the sctl bit a send to d needs
  int time_to_mux(uint32_t s, uint32_t d) const; // ttm(s,d), events
  int paired_time_to_mux(uint32_t s, uint32_t d) const;  // max(ttm(s,d), ttm(s,d^2))
  int write_delay(uint32_t d) const;             // W(d): mux -> SRAM, events
  int paired_write_delay(uint32_t d) const;      // paired item mux -> SRAM, events

 private:
  uint32_t tiles_;
  uint32_t chip_tiles_;
  RouteTiming route_;
  std::vector<uint32_t> physical_of_;
  std::vector<uint32_t> logical_of_;
};

}  // namespace lockstep::arch
