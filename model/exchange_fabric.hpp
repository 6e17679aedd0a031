#pragma once
// The exchange fabric: at a phase's release it reads every participating tile's row from
// that tile's SRAM (so patches count), executes the phase (model/exchange_phase.hpp),
// copies the landed words between SRAMs and reports hazards.
#include <map>
#include <span>
#include <systemc>
#include <vector>

#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "model/chip_interfaces.hpp"
#include "model/exchange_activities.hpp"
#include "model/exchange_phase.hpp"
#include "model/run_monitor.hpp"
#include "model/sram.hpp"

namespace lockstep::model {

class ExchangeFabric : public sc_core::sc_module, public FabricInterface {
 public:
  // `sram`: the arena that holds every tile's SRAM, whose write epochs the fabric advances.
  ExchangeFabric(sc_core::sc_module_name name, const arch::MachineDescription& machine, const arch::Topology& topology,
                 RunMonitor& monitor, SramArena& sram);

  std::vector<int64_t> execute(uint32_t phase, std::span<Tile* const> tiles) override;

 private:
  std::vector<uint32_t> read_row(const Tile& tile, uint32_t address) const;
  // Whether nothing wrote [address, + bytes) of `tile` since epoch `read` began (0: unknown).
  bool unwritten_since(const Tile& tile, uint32_t address, uint32_t bytes, WriteEpochs::Epoch read) const;

  // The phase's outcome, computed again only when its inputs (rows as SRAM holds them,
  // CSR state) differ from the last execution of that phase: a Repeat whose rows are not
  // patched between iterations then costs one execution plus the word copies, and one whose
  // patch list moves only send addresses costs a relocation (relocate_phase) plus the copies.
  // A copy from a sender's SRAM to a receiver's, resolved to the two places when planned: the
  // phase's tiles and their SRAM stay put for the chip's life, and looking both memories up
  // through their Tile objects at every execution missed in cache once a copy.
  struct Copy {
    const uint8_t* from = nullptr;
    uint8_t* to = nullptr;
    uint32_t bytes = 0;
  };
  struct Executed {
    std::vector<PhaseTile> inputs;
    PhaseOutcome outcome;
    std::vector<uint32_t> receiver_begin;  // each receiver's first write, then the end
    bool direct = false;                   // copies SRAM to SRAM (see plan_copies)
    // Filled whole by parallel tasks after an unwritten resize (arch::UninitializedVector).
    arch::UninitializedVector<Copy> copies;             // by receiver; merged writes
    std::vector<uint32_t> copy_begin;                   // each receiver's first copy, then the end
    arch::UninitializedVector<uint32_t> copy_writes;    // the writes in copy order (indices)
    arch::UninitializedVector<uint32_t> copy_first;     // each copy's first place in copy_writes, then the end
    arch::UninitializedVector<uint32_t> copy_of_write;  // by write: its copy
    std::shared_ptr<const PhaseActivities> activities;  // only when the run is profiled
    // The writes (indices) that land in their receiver's supervisor code area, found once per
    // outcome: code areas do not change during a run, and a phase that repeats unchanged
    // reuses this Executed.
    std::vector<uint32_t> code_writes;
    uint64_t write_bytes = 0;  // every write's bytes: a relocation moves sources only
    // The write epoch of the copies' last execution (0: none yet), and the pages of the arena
    // they read or write, sorted (made when first needed; empty after a new plan or a move).
    WriteEpochs::Epoch epoch = 0;
    // The write epoch in which the inputs' rows were last read or compared (0: never).
    WriteEpochs::Epoch rows_read = 0;
    std::vector<uint32_t> pages;
    // A bit for each page of the arena that a copy reads (made when first needed while tokens
    // are deferred; empty after a new plan or a move): such a page takes no copied runs.
    std::vector<uint64_t> read_pages;
  };
  // `unchanged`: the inputs equal the phase's last execution's (rows unwritten since or compared in place).
  Executed& executed(uint32_t phase, std::vector<PhaseTile> inputs, bool unchanged, std::span<Tile* const> tiles);
  void plan_copies(Executed& e, std::span<Tile* const> tiles);
  // After a relocation, which moves only sources: each copy that holds a moved write keeps its
  // writes and moves with them while they still follow each other in the sender's memory.
  // False when they do not.
  static bool move_copies(Executed& e, std::span<Tile* const> tiles);
  // Whether SRAM already holds what the copies of `e`, executed again with the same inputs,
  // would land: they are direct (their sources and destinations apart) and no page they read
  // or write was written since their last execution.
  bool landed_already(Executed& e);
  // `tiles` serve a phase with hazards, whose writes go through a buffer in write order. Each
  // receiver of a direct execution is reported to RunMonitor::after_landing as it is done.
  void copy_words(Executed& e, std::span<Tile* const> tiles, uint32_t phase, uint32_t iteration);
  // Sets the bit of each page of the arena that [bytes, + count) lies on.
  void mark_pages(std::vector<uint64_t>& bits, const uint8_t* bytes, uint32_t count) const;
  // Executed::read_pages of `e`'s copies.
  void mark_read_pages(Executed& e) const;
  void report_code_writes(const Executed& e, std::span<Tile* const> tiles, uint64_t release);

  const arch::MachineDescription& machine_;
  const arch::Topology& topology_;
  RunMonitor& monitor_;
  SramArena& sram_;
  std::map<uint32_t, Executed> last_execution_;  // by phase id
  std::vector<uint8_t> copy_buffer_;
};

}  // namespace lockstep::model
