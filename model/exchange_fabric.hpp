#pragma once
// The exchange fabric: at a phase's release it reads every participating tile's row from
// that tile's SRAM (so patches count), executes the phase (model/exchange_phase.hpp),
// copies the landed words between SRAMs and reports hazards.
#include <systemc>

#include <span>
#include <vector>

#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "model/chip_interfaces.hpp"
#include "model/run_monitor.hpp"

namespace lockstep::model {

class ExchangeFabric : public sc_core::sc_module, public FabricInterface {
 public:
  ExchangeFabric(sc_core::sc_module_name name, const arch::MachineDescription& machine,
                 const arch::Topology& topology, RunMonitor& monitor);

  std::vector<int64_t> execute(uint32_t phase, std::span<Tile* const> tiles) override;

 private:
  std::vector<uint32_t> read_row(const Tile& tile, uint32_t address) const;

  const arch::MachineDescription& machine_;
  const arch::Topology& topology_;
  RunMonitor& monitor_;
};

}  // namespace lockstep::model
