#pragma once
// One tile: its SRAM and a supervisor process that executes the tile's supervisor code (the
// steps lowered by supervisor/supervisor_code.hpp, placed in SRAM). There is no clock: the
// process counts the cycles of the instructions it issues and runs ahead of SystemC's time up
// to its next barrier (docs/timing.md "Time"). The process is an SC_METHOD that returns at
// each barrier and goes on from the tile's own state when the barrier releases: 1,472 tiles
// need no coroutine stacks and no thread switches. Only a run that may stop on request
// (RunMonitor::synchronous_steps) makes it an SC_THREAD, which waits out every step.
#include <cstdint>
#include <optional>
#include <systemc>
#include <vector>

#include "arch/instruction.hpp"
#include "arch/kernel_signatures.hpp"
#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "model/chip_interfaces.hpp"
#include "model/cycle_split.hpp"
#include "model/run_monitor.hpp"
#include "model/sram.hpp"
#include "model/step_record.hpp"
#include "supervisor/supervisor_code.hpp"

namespace lockstep::model {

struct KernelDefinition;

class Tile : public sc_core::sc_module {
 public:
  sc_core::sc_port<BarrierInterface> barrier;

  // `memory` is the tile's SRAM (a slot of the chip's SramArena); the code runs once
  // decode_code() has decoded it.
  Tile(sc_core::sc_module_name name, const arch::TileProgram& program, arch::TileCode code,
       const arch::MachineDescription& machine, uint32_t physical, RunMonitor& monitor, Sram memory);

  uint32_t logical() const { return program_.tile; }
  uint32_t physical() const { return physical_; }
  Sram& memory() { return memory_; }
  const Sram& memory() const { return memory_; }
  const arch::TileProgram& program() const { return program_; }
  const arch::TileCode& code() const { return code_; }
  // Decodes the code for the interpreter; once, before the run, on any thread (it touches only
  // this tile). Throws InputError at the first word the model cannot execute.
  void decode_code();
  // Writes the code area (instructions, tables, stack) into SRAM; after the package's segments.
  void load_code();  // and, when the run is profiled, room for its step records

  // Exchange state the fabric reads and updates at a release.
  const arch::ExchangeStep* pending_exchange() const { return pending_exchange_; }
  // The host phase the tile waits at, for the host link at its release.
  const arch::HostStep* pending_host() const { return pending_host_; }
  uint32_t mux = 0x640;         // INCOMING_MUX, carried between phases
  uint32_t paired_mux = 0x640;  // paired mux, carried between phases

  uint32_t iteration() const { return loops_.empty() ? 0 : loops_.back().iteration; }

  // Kernel numerics are deferred: a launch costs its cycles at once, but the kernel runs
  // when something can observe its memory (a barrier release, the end of the run, or this
  // tile's own patch, pointer update or indirect operand). Tiles share no memory, so the
  // queues of many tiles may run on several threads and give the bits one thread gives.
  bool has_pending_kernels() const { return queued_ > 0; }
  // Runs this tile's queue in launch order; touches only this tile. Any thread.
  void run_pending_kernels();
  // Reports what run_pending_kernels found (its own SystemC process or the release's only).
  void report_kernel_hazards();
  bool finished() const { return finished_; }
  // The tile's own cycle. Between barriers a tile runs ahead of SystemC's time without
  // yielding (temporal decoupling, docs/timing.md "Time"): it touches only its own state
  // there, so nothing else can tell. It catches up at the end, or at every step boundary
  // when RunMonitor::synchronous_steps.
  uint64_t now() const { return sc_core::sc_time_stamp().value() + ahead_; }
  // The barrier hands each participant its row's event count at the release.
  void set_release_events(int64_t events) { row_events_ = events; }
  int64_t release_events() const { return row_events_; }
  uint64_t finish_cycle() const { return finish_cycle_; }
  const std::vector<uint64_t>& invocation_ends() const { return invocation_ends_; }  // cycle per invocation
  // Byte ranges (address, bytes) copied at the end of every invocation but the last, after
  // the invocation's kernels ran: snapshots()[i] holds invocation i's ranges back to back.
  void snapshot_at_invocation_ends(std::vector<std::pair<uint32_t, uint32_t>> ranges) {
    snapshot_ranges_ = std::move(ranges);
  }
  const std::vector<std::vector<uint8_t>>& snapshots() const { return snapshots_; }
  uint32_t current_phase() const { return current_phase_; }
  // The tile's last exchange as its barrier saw it (phase, row, base, format, paired mux).
  const arch::ExchangeStep& last_exchange() const { return exchange_; }

  // Profiling (RunMonitor::profile): the fabric hands each participant the phase's
  // activities at the release; records() lists every executed step in order.
  void exchanged(std::shared_ptr<const PhaseActivities> activities, uint32_t position);
  const std::vector<StepRecord>& records() const { return records_; }

  // The critical path (model/cycle_split.hpp): this tile's path up to now, as the last
  // arrival at a barrier hands it on; released() starts it afresh from a release's path.
  CycleSplit path_now() const;
  void released(SharedReleasePath path);
  const SharedReleasePath& release_path() const { return release_path_; }
  // Asks for the lines this tile reads when it runs next (its own members, the code about its
  // PC, its sites and loops), without waiting for them.
  void prefetch_state() const;
  const CycleSplit& since_release() const { return since_release_; }
  // The path at the end of the run (its parts add up to finish_cycle()).
  const CycleSplit& finish_path() const { return finish_path_; }

 private:
  // The process (model/tile.cpp), made at the end of elaboration, when the monitor is set.
  void before_end_of_elaboration() override;
  void run_method();
  void run_thread();
  void activate();     // one activation: goes on from what it waited for, to the next wait
  bool resume();       // false: it still waits, or the program ended
  void end_program();  // catches up with its own time (a wait), then finish()
  void finish();
  // The interpreter (model/supervisor_execution.cpp): runs until the tile waits or ends.
  void interpret();
  bool enter_sites(uint32_t index);  // site markers at a code word; true at the halt
  // A code word decoded as the interpreter reads it: the fields supervisor instructions have
  // (decode gives registers, zone and CSR in 4 to 8 bits) and the word's first site, 24 bytes
  // where arch::Instruction has 92. Each tile's code missed in cache whenever SystemC switched
  // to its thread, and the decoded copies were about 100 MB of an exchange-only run's first
  // touches of fresh pages.
  struct CodeWord {
    arch::Opcode op = arch::Opcode::Delay;
    uint8_t reg = 0, dest = 0, source = 0, base = 0, index = 0, zone = 0, csr = 0;
    int32_t immediate = 0;
    uint32_t offset = 0;
    uint32_t target = 0;
    int32_t first_site = -1;  // index into code_.sites, or -1
  };
  static_assert(sizeof(CodeWord) == 24);
  static CodeWord code_word(const arch::Instruction& in);
  std::string describe_word(uint32_t index) const;   // the whole instruction, decoded again
  bool execute(const CodeWord& in, uint32_t index);  // false: stop
  bool execute_host_body(const CodeWord& in, uint32_t index);
  // A barrier's sync: the tile arrives and waits (waiting_), or releases the barrier at once and
  // goes on; false: the run stops at that release.
  bool barrier_sync(const CodeWord& in, uint32_t index);
  bool arrive_at(const BarrierKey& key);
  bool after_barrier();                // the sync's end, at the release; false: the run stops here
  void call_intrinsic(size_t symbol);  // an index into code_.symbols
  void launch_kernel(size_t symbol);
  void bulk_patch();
  bool memory_word(uint32_t address, const char* what);  // in SRAM, kernels flushed
  void put_csr(uint32_t csr, uint32_t value);
  void watched_store(uint32_t address, const std::string& writer);  // a store into watched words?
  bool stops_here(const arch::CodeSite& site);                      // --stop-at tile:T,step:S
  void halt();
  void code_hazard(HazardClass kind, const std::string& detail);

  // Issued instruction cycles are counted at step boundaries and barriers.
  void issue(uint64_t cycles) { issued_ += cycles; }
  void flush_issued();
  void advance(uint64_t cycles);  // the tile's time moves on by `cycles`
  void catch_up();                // SystemC's time reaches the tile's
  void wait_cycles(uint64_t cycles, CycleKind kind);
  void step_hazard(HazardClass kind, const std::string& what, const std::string& detail);
  RecordedHazard step_hazard_at(HazardClass kind, std::string what, std::string detail, uint32_t phase,
                                uint32_t iteration, uint64_t cycle) const;
  void flush_kernels();  // run and report, in this tile's process
  void reserve_records();
  void open_record(StepRole role, const void* step);
  void close_record();
  bool pending_kernel_touches(uint32_t address) const;

  struct PendingKernel {
    const KernelDefinition* kernel = nullptr;
    const std::string* name = nullptr;
    std::vector<uint32_t> operands;  // resolved byte addresses
    std::vector<int64_t> scalars;
    std::vector<uint64_t> spans;  // bytes each operand spans (its signature's, at launch)
    uint64_t cycle = 0;           // of the launch, with its phase and iteration
    uint32_t phase = 0;
    uint32_t iteration = 0;
  };
  // A hazard of a queued kernel, at its launch (built only when there is one: a launch keeps
  // no strings).
  RecordedHazard kernel_hazard(const PendingKernel& k, HazardClass kind, std::string detail) const;
  // The queue is pending_[0, queued_); slots past it keep their vectors' capacity, so a
  // launch allocates only its operands' spans (the proof's runs launch a kernel per received
  // range).
  std::vector<PendingKernel> pending_;
  size_t queued_ = 0;
  std::vector<RecordedHazard> kernel_hazards_;

  const arch::TileProgram& program_;
  const arch::MachineDescription& machine_;
  uint32_t physical_;
  RunMonitor& monitor_;
  Sram memory_;
  const arch::ExchangeStep* pending_exchange_ = nullptr;
  const arch::HostStep* pending_host_ = nullptr;
  uint32_t host_phases_ = 0;  // host phases passed

  // Supervisor state.
  arch::TileCode code_;
  std::vector<CodeWord> decoded_;  // per code word (a two-word instruction's second: unused)
  // Per site, the step kind its role acts on (a barrier's: its host step, or null) and a Repeat's
  // count, resolved once when the code is decoded: the package's steps are cold by the time a
  // tile runs, and reading them at every site was 4% of an exchange-only run's samples, on the
  // main thread.
  struct SiteTarget {
    const void* kind = nullptr;
    uint32_t repeat_count = 0;
  };
  std::vector<SiteTarget> site_targets_;
  std::vector<int32_t> intrinsic_at_;  // per code word: the intrinsic symbol there, or -1
  struct Intrinsic {                   // per code symbol, resolved once
    bool bulk_patch = false;
    const KernelDefinition* kernel = nullptr;  // null: no such kernel in the model
    const arch::KernelSignature* signature = nullptr;
  };
  std::vector<Intrinsic> intrinsics_;
  uint32_t pc_ = 0;
  uint32_t reg_[16] = {};
  uint32_t incoming_base_ = 0;
  uint32_t incoming_format_ = 0;
  std::optional<uint32_t> incoming_muxpair_;
  uint32_t incoming_dcount_ = 0;
  arch::ExchangeStep exchange_;              // what the fabric reads at a release
  const arch::CodeSite* barrier_ = nullptr;  // the barrier marker at the current sync
  bool row_call_ = false;                    // the next call is the exchange row's
  bool host_body_ = false;                   // inside a host program's body (until its sync 7)
  int64_t row_events_ = 0;                   // what the last release handed: the row's event count (host: cycles)
  uint64_t issued_ = 0;
  uint64_t ahead_ = 0;  // cycles the tile has run past SystemC's time
  // What the process waits for between activations.
  enum class Waiting : uint8_t {
    Nothing,
    Release,    // another tile's release of the barrier (its event)
    Releasing,  // SystemC's time to reach this tile's release of the barrier (wake_after_)
    Finishing,  // SystemC's time to reach the tile's own at its end (wake_after_)
  };
  Waiting waiting_ = Waiting::Nothing;
  struct BarrierWait {
    BarrierKey key;
    Arrival arrival;
    uint32_t resume_pc = 0;  // after the sync
    bool host = false;       // a host phase's barrier
    bool host_body = false;  // its body follows (`sync`, not `sans 1; sync 1`)
    bool exchange = false;   // a phase's barrier
    bool with_row = false;   // its row's events come at the row call
  };
  BarrierWait barrier_wait_;
  uint64_t wake_after_ = 0;  // cycles, for Releasing and Finishing
  const arch::RepeatStep* entering_ = nullptr;
  struct Loop {
    const arch::RepeatStep* step;
    uint32_t iteration;
    uint64_t outer_epoch;
  };
  std::vector<Loop> loops_;
  struct OpenRecord {
    bool open = false;
    StepRole role = StepRole::Sync;
    const void* step = nullptr;
    uint64_t start = 0;
    uint32_t epoch = 0;
    uint32_t invocation = 0;
    const std::string* kernel = nullptr;  // Kernel: the cycles' kernel name
    uint64_t kernel_cycles = 0;           // Kernel: what the kernel models charged
  };
  OpenRecord open_;
  uint32_t current_phase_ = 0;
  bool finished_ = false;
  uint64_t finish_cycle_ = 0;
  uint32_t invocation_ = 0;  // the one running
  uint64_t epoch_ = 0;       // linear index of the Repeat iteration path
  std::vector<StepRecord> records_;
  std::shared_ptr<const PhaseActivities> exchange_activities_;  // of the last release
  uint32_t exchange_position_ = 0;
  std::vector<uint64_t> invocation_ends_;
  std::vector<std::pair<uint32_t, uint32_t>> snapshot_ranges_;
  std::vector<std::vector<uint8_t>> snapshots_;
  void take_snapshot();
  SharedReleasePath release_path_;  // the path to the last release this tile took part in
  CycleSplit since_release_;        // what this tile did since then
  CycleSplit finish_path_;
};

}  // namespace lockstep::model
