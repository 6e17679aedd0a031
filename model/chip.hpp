#pragma once
// The chip: one Tile per tile the package lists (idle tiles cost nothing), the exchange
// fabric and the barrier, bound together.
#include <systemc>

#include <map>
#include <memory>
#include <vector>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "arch/topology.hpp"
#include "model/barrier.hpp"
#include "model/exchange_fabric.hpp"
#include "model/run_monitor.hpp"
#include "model/tile.hpp"

namespace lockstep::model {

class Chip : public sc_core::sc_module {
 public:
  Chip(sc_core::sc_module_name name, const arch::MachineDescription& machine,
       const arch::Topology& topology, const arch::Package& package, RunMonitor& monitor,
       uint32_t invocations = 1);

  // nullptr for a tile the package does not list.
  Tile* tile(uint32_t logical);
  const Tile* tile(uint32_t logical) const;
  const std::vector<std::unique_ptr<Tile>>& tiles() const { return tiles_; }
  const Barrier& barrier() const { return *barrier_; }

  // Runs every tile's deferred kernels, tiles in parallel (oneTBB), then reports their
  // hazards in tile order; the bits do not depend on the thread count (docs/timing.md).
  void run_pending_kernels();

 private:
  std::vector<std::unique_ptr<Tile>> tiles_;
  std::vector<Tile*> by_logical_;  // indexed by logical tile; nullptr where none
  std::unique_ptr<ExchangeFabric> fabric_;
  std::unique_ptr<Barrier> barrier_;
};

}  // namespace lockstep::model
