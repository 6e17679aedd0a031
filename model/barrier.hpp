#pragma once
// The sync barrier: releases when every participating tile has arrived, at the last
// arrival + machine.barrier_latency_cycles. At an exchange release it has the fabric
// execute the phase, then each tile resumes after its own row. Tiles arrive at their own
// cycle (Tile::now), ahead of SystemC's time; the release waits until the latest of them
// (in the process of the tile that arrived last).
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <systemc>
#include <utility>
#include <vector>

#include "arch/machine.hpp"
#include "model/chip_interfaces.hpp"

namespace lockstep::model {

class Barrier : public sc_core::sc_module, public BarrierInterface {
 public:
  sc_core::sc_port<FabricInterface> fabric;
  // Called at every release before anything reads memory (the chip runs deferred kernels).
  std::function<void()> before_release;
  // Called when a tile that is not the last to arrive starts waiting for the release: the
  // chip starts its deferred kernels then, beside the simulation of the other tiles.
  std::function<void(Tile&)> on_wait;
  // Runs a host phase (its ordinal) for the arrived tiles; returns its cycles.
  std::function<uint64_t(uint32_t, std::span<Tile* const>)> host_phase;

  // `participants`: how many tiles take part in each barrier.
  Barrier(sc_core::sc_module_name name, const arch::MachineDescription& machine,
          std::map<BarrierKey, uint32_t> participants);

  Arrival arrive(const BarrierKey& key, Tile& tile) override;
  void release(const BarrierKey& key) override;

  // Tiles waiting at a barrier that never released (for the end-of-run check).
  std::vector<std::pair<BarrierKey, std::vector<Tile*>>> stuck() const;

 private:
  struct Round {
    uint32_t expected = 0;
    struct Arrived {
      Tile* tile;
      uint32_t logical;  // read as it arrives, in cache: the release orders 1,472 tiles by it
    };
    std::vector<Arrived> arrived;
    // The last arrival in time (of several, the lowest tile [decision]), kept as they come.
    Tile* last = nullptr;
    uint64_t last_cycle = 0;
    // Releases so far: a tile released early may arrive at the same barrier again before
    // the others have woken, so each waits for the count to move, not for the event alone.
    uint64_t generation = 0;
    std::unique_ptr<sc_core::sc_event> released;
  };
  static std::vector<Tile*> arrived_tiles(const Round& round);   // in arrival order
  static std::vector<Tile*> tiles_in_order(const Round& round);  // in logical order
  const arch::MachineDescription& machine_;
  std::map<BarrierKey, Round> rounds_;
};

}  // namespace lockstep::model
