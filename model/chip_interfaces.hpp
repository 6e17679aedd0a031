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

// What a tile's arrival at a barrier asks of it. Arriving never blocks (a tile's process may
// be an SC_METHOD): the last participant to arrive gets the release cycle and releases the
// barrier with release() once SystemC's time reaches it; every other waits for `released` to
// fire and the barrier's count of releases to move past `generation`. A release hands each
// participant its row's events (Tile::release_events).
struct Arrival {
  bool last = false;
  uint64_t release_cycle = 0;          // the last arrival's
  uint64_t generation = 0;             // the releases before this one
  const uint64_t* releases = nullptr;  // the barrier's count of them, which this release moves on
  const sc_core::sc_event* released = nullptr;
  bool released_since() const { return *releases != generation; }
};

class BarrierInterface : public virtual sc_core::sc_interface {
 public:
  virtual Arrival arrive(const BarrierKey& key, Tile& tile) = 0;
  // By the last arrival, at its release cycle: executes the phase (or host phase) and wakes the others.
  virtual void release(const BarrierKey& key) = 0;
};

class FabricInterface : public virtual sc_core::sc_interface {
 public:
  // Executes a phase at the current time (its release) for the arrived tiles; returns
  // each tile's row horizon in the same order.
  virtual std::vector<int64_t> execute(uint32_t phase, std::span<Tile* const> tiles) = 0;
};

}  // namespace lockstep::model
