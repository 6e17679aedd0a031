#pragma once
// One tile: its SRAM and a supervisor thread that executes the tile's step list. There is
// no clock: the thread waits exactly as long as each step lasts (docs/timing.md).
#include <systemc>

#include <cstdint>
#include <vector>

#include "arch/machine.hpp"
#include "arch/package.hpp"
#include "model/chip_interfaces.hpp"
#include "model/run_monitor.hpp"
#include "model/sram.hpp"

namespace lockstep::model {

class Tile : public sc_core::sc_module {
 public:
  sc_core::sc_port<BarrierInterface> barrier;

  Tile(sc_core::sc_module_name name, const arch::TileProgram& program,
       const arch::MachineDescription& machine, uint32_t physical, RunMonitor& monitor);

  uint32_t logical() const { return program_.tile; }
  uint32_t physical() const { return physical_; }
  Sram& memory() { return memory_; }
  const Sram& memory() const { return memory_; }
  const arch::TileProgram& program() const { return program_; }

  // Exchange state the fabric reads and updates at a release.
  const arch::ExchangeStep* pending_exchange() const { return pending_exchange_; }
  uint32_t mux = 0x640;         // INCOMING_MUX, carried between phases
  uint32_t paired_mux = 0x640;  // paired mux, carried between phases

  uint32_t iteration() const { return iterations_.empty() ? 0 : iterations_.back(); }
  bool finished() const { return finished_; }
  uint64_t finish_cycle() const { return finish_cycle_; }
  uint32_t current_phase() const { return current_phase_; }

 private:
  void run();
  void execute(const std::vector<arch::Step>& steps);
  void do_sync(const arch::SyncStep& step);
  void do_exchange(const arch::ExchangeStep& step);
  void do_kernel(const arch::KernelStep& step);
  void do_repeat(const arch::RepeatStep& step);
  void do_patch(const arch::PatchStep& step);
  void wait_cycles(uint64_t cycles);
  void step_hazard(HazardClass kind, const std::string& what, const std::string& detail);

  const arch::TileProgram& program_;
  const arch::MachineDescription& machine_;
  uint32_t physical_;
  RunMonitor& monitor_;
  Sram memory_;
  const arch::ExchangeStep* pending_exchange_ = nullptr;
  std::vector<uint32_t> iterations_;
  uint32_t current_phase_ = 0;
  bool finished_ = false;
  uint64_t finish_cycle_ = 0;
};

}  // namespace lockstep::model
