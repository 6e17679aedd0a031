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
#include "model/host_link.hpp"
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

  // Host phases every tile's program runs (validate_package: the same on every tile).
  uint32_t host_phases() const { return host_phases_; }
  // The host end for a package with host phases, once memory is loaded; throws InputError
  // when the calls do not fit (model/host_link.hpp).
  void attach_host(const arch::HostSession& session, std::vector<HostCallRun> calls);
  HostLink* host() { return host_.get(); }

  // Runs every tile's deferred kernels, tiles in parallel (oneTBB), then reports their
  // hazards in tile order; the bits do not depend on the thread count (docs/timing.md).
  void run_pending_kernels();

 private:
  std::vector<std::unique_ptr<Tile>> tiles_;
  std::vector<Tile*> by_logical_;  // indexed by logical tile; nullptr where none
  std::unique_ptr<ExchangeFabric> fabric_;
  std::unique_ptr<Barrier> barrier_;
  std::unique_ptr<HostLink> host_;
  RunMonitor& monitor_;
  uint32_t host_phases_ = 0;
};

}  // namespace lockstep::model
