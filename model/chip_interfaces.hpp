#pragma once
// The channels between the SystemC modules: a tile arrives at the barrier; the barrier has
// the fabric execute a phase at the release.
#include <compare>
#include <cstdint>
#include <span>
#include <systemc>
#include <vector>

namespace lockstep::model {

class Tile;

// A barrier is a phase's exchange sync, a plain sync step (all tiles) or a host phase (all
// tiles and the host; `phase` is then its ordinal in program order).
struct BarrierKey {
  bool exchange = false;
  uint32_t phase = 0;
  bool host = false;
  auto operator<=>(const BarrierKey&) const = default;
};

class BarrierInterface : public virtual sc_core::sc_interface {
 public:
  // Blocks the calling tile's thread until the release; returns the events of the tile's
  // own row in the phase (0 for a plain sync): the tile resumes after them.
  virtual int64_t arrive(const BarrierKey& key, Tile& tile) = 0;
};

class FabricInterface : public virtual sc_core::sc_interface {
 public:
  // Executes a phase at the current time (its release) for the arrived tiles; returns
  // each tile's row horizon in the same order.
  virtual std::vector<int64_t> execute(uint32_t phase, std::span<Tile* const> tiles) = 0;
};

}  // namespace lockstep::model
