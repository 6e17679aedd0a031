#pragma once
// The chip: one Tile per tile the package lists (idle tiles cost nothing), the exchange
// fabric and the barrier, bound together.
#include <tbb/task_group.h>

#include <functional>
#include <map>
#include <memory>
#include <systemc>
#include <vector>

#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "formats/package.hpp"
#include "model/barrier.hpp"
#include "model/exchange_fabric.hpp"
#include "model/host_link.hpp"
#include "model/run_monitor.hpp"
#include "model/tile.hpp"

namespace lockstep::model {

class Chip : public sc_core::sc_module {
 public:
  // Loads the package's memory into the arena's slots (slot i: package.tiles[i]); it may touch
  // SRAM only, never a Tile.
  using MemoryLoader = std::function<void(SramArena&)>;
  // `load_memory`, when given, runs on another core while this core builds the tiles (SystemC
  // objects, made one at a time): the two took 2-13 and 4-15 ms one after the other of a
  // replay's run (docs/performance.md, round thirty-five). Each tile's code is then decoded,
  // tiles in parallel. Errors read as before: a tile's code first, then the loader's.
  Chip(sc_core::sc_module_name name, const arch::MachineDescription& machine, const arch::Topology& topology,
       const arch::Package& package, RunMonitor& monitor, uint32_t invocations = 1,
       const MemoryLoader& load_memory = {});

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

  ~Chip() override;

  // Finishes the kernels started as their tiles began to wait at a barrier, runs every
  // other tile's deferred kernels, tiles in parallel (oneTBB), then reports their hazards
  // in tile order; the bits do not depend on the thread count or on when a tile's kernels
  // ran, as each touches only its tile's memory (docs/timing.md).
  void run_pending_kernels();

 private:
  SramArena sram_;  // before the tiles: they hold slots of it
  std::vector<std::unique_ptr<Tile>> tiles_;
  std::vector<Tile*> by_logical_;  // indexed by logical tile; nullptr where none
  std::unique_ptr<ExchangeFabric> fabric_;
  std::unique_ptr<Barrier> barrier_;
  std::unique_ptr<HostLink> host_;
  RunMonitor& monitor_;
  uint32_t host_phases_ = 0;
  // The tiles, each with its lowered code, built while `load_memory` runs beside them.
  void build_tiles(const arch::Package& package, const arch::MachineDescription& machine,
                   const arch::Topology& topology, std::vector<arch::TileCode> code, const MemoryLoader& load_memory);
  // The kernels of tiles waiting at a barrier, run by oneTBB's workers while SystemC
  // simulates the other tiles: such a tile resumes only after a release, and every release
  // waits for them first. (By pointer: a task_group may throw from its destructor.)
  std::unique_ptr<tbb::task_group> kernels_in_flight_ = std::make_unique<tbb::task_group>();
};

}  // namespace lockstep::model
