#pragma once
// One tile: its SRAM and a supervisor thread that executes the tile's step list. There is
// no clock: the thread waits exactly as long as each step lasts (docs/timing.md).
#include <systemc>

#include <cstdint>
#include <map>
#include <vector>

#include "arch/machine.hpp"
#include "arch/package.hpp"
#include "model/chip_interfaces.hpp"
#include "model/cycle_split.hpp"
#include "model/run_monitor.hpp"
#include "model/sram.hpp"
#include "model/step_record.hpp"

namespace lockstep::model {

struct KernelDefinition;

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

  // Kernel numerics are deferred: a launch costs its cycles at once, but the kernel runs
  // when something can observe its memory (a barrier release, the end of the run, or this
  // tile's own patch, pointer update or indirect operand). Tiles share no memory, so the
  // queues of many tiles may run on several threads and give the bits one thread gives.
  bool has_pending_kernels() const { return !pending_.empty(); }
  // Runs this tile's queue in launch order; touches only this tile. Any thread.
  void run_pending_kernels();
  // Reports what run_pending_kernels found (its SystemC thread or the release's only).
  void report_kernel_hazards();
  bool finished() const { return finished_; }
  uint64_t finish_cycle() const { return finish_cycle_; }
  // The resident program runs this many times back to back (the seed's invocations).
  void set_invocations(uint32_t n) { invocations_ = n; }
  const std::vector<uint64_t>& invocation_ends() const { return invocation_ends_; }  // cycle per invocation
  uint32_t current_phase() const { return current_phase_; }

  // Profiling (RunMonitor::profile): the fabric hands each participant the phase's
  // activities at the release; records() lists every executed step in order.
  void exchanged(std::shared_ptr<const PhaseActivities> activities, uint32_t position);
  const std::vector<StepRecord>& records() const { return records_; }

  // The critical path (model/cycle_split.hpp): this tile's path up to now, as the last
  // arrival at a barrier hands it on; released() starts it afresh from a release's path.
  CycleSplit path_now() const;
  void released(SharedReleasePath path);
  const SharedReleasePath& release_path() const { return release_path_; }
  const CycleSplit& since_release() const { return since_release_; }
  // The path at the end of the run (its parts add up to finish_cycle()).
  const CycleSplit& finish_path() const { return finish_path_; }

 private:
  void run();
  void execute(const std::vector<arch::Step>& steps);
  void do_sync(const arch::SyncStep& step);
  void do_exchange(const arch::ExchangeStep& step);
  void do_kernel(const arch::KernelStep& step);
  void do_repeat(const arch::RepeatStep& step);
  void do_patch(const arch::PatchStep& step);
  void wait_cycles(uint64_t cycles, CycleKind kind);
  void step_hazard(HazardClass kind, const std::string& what, const std::string& detail);
  RecordedHazard make_step_hazard(HazardClass kind, const std::string& what, const std::string& detail) const;
  void flush_kernels();  // run and report, in this tile's thread
  void record(StepRole role, const void* step, uint64_t start);
  bool pending_kernel_touches(uint32_t address) const;

  struct PendingKernel {
    const KernelDefinition* kernel;
    const arch::KernelStep* step;
    std::vector<uint32_t> operands;  // resolved byte addresses
    RecordedHazard context;          // phase, iteration and cycle of the launch
  };
  std::vector<PendingKernel> pending_;
  std::vector<RecordedHazard> kernel_hazards_;

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
  uint32_t invocations_ = 1;
  uint32_t invocation_ = 0;  // the one running
  uint64_t epoch_ = 0;       // linear index of the Repeat iteration path
  std::vector<StepRecord> records_;
  std::shared_ptr<const PhaseActivities> exchange_activities_;  // of the last release
  uint32_t exchange_position_ = 0;
  // Per Repeat step: its pointer slots' values at its first entry (written at every entry).
  std::map<const arch::RepeatStep*, std::vector<std::pair<uint32_t, uint32_t>>> repeat_initial_pointers_;
  std::vector<uint64_t> invocation_ends_;
  SharedReleasePath release_path_;  // the path to the last release this tile took part in
  CycleSplit since_release_;        // what this tile did since then
  CycleSplit finish_path_;
};

}  // namespace lockstep::model
