#pragma once
// Executes one exchange phase (IPU21-EXCHANGE.md sections 5-7) over the rows of every
// participating tile: send runs meet mux windows, selected words get write events and
// addresses, and every hazard is reported. Plain C++ (no SystemC): the fabric module calls
// it at the barrier release, with the rows read from SRAM at that moment.
// Cost is proportional to instructions, runs and windows, never to words x tiles.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "io/parallel.hpp"
#include "model/hazard.hpp"
#include "model/row_schedule.hpp"

namespace lockstep::model {

struct PhaseTile {
  uint32_t logical = 0;
  uint32_t physical = 0;
  bool has_row = false;                      // false: `sans 0; sync 1` and a row of just the return
  uint32_t row_address = 0;                  // byte address of the row
  std::vector<uint32_t> row_words;           // from row_address on, as SRAM holds them now
  uint32_t incoming_base = 0;                // INCOMING_BASE
  uint32_t incoming_format = 0;              // INCOMING_FORMAT at event 0 (CSR form: 1 early, 2 waiting half)
  uint32_t incoming_mux = 0x640;             // INCOMING_MUX at event 0 (set, or carried over)
  uint32_t paired_mux = 0x640;               // paired mux at event 0, as a row control writes it (carried over)
  std::optional<uint32_t> incoming_muxpair;  // INCOMING_MUXPAIR written before the row: overrides paired_mux

  bool operator==(const PhaseTile&) const = default;
  // Every field but row_words (the exchange fabric compares those in place in SRAM).
  bool same_but_row(const PhaseTile& o) const {
    return logical == o.logical && physical == o.physical && has_row == o.has_row && row_address == o.row_address &&
           incoming_base == o.incoming_base && incoming_format == o.incoming_format && incoming_mux == o.incoming_mux &&
           paired_mux == o.paired_mux && incoming_muxpair == o.incoming_muxpair;
  }
};

// Words that land: `bytes` copied from the sender's SRAM at `source_address` to the
// receiver's at `address`, the first at `first_write_event`, then one item per event.
struct WriteRun {
  uint32_t receiver = 0;  // index into the phase's tiles
  uint32_t sender = 0;    // index into the phase's tiles
  uint32_t address = 0;
  uint32_t source_address = 0;
  uint32_t bytes = 0;
  uint32_t item_bytes = 4;  // 4, or 8 for paired items
  int64_t first_write_event = 0;
  int64_t first_mux_event = 0;
  uint32_t run = 0;            // the send run in the sender's RowSchedule::runs
  uint32_t source_offset = 0;  // bytes from that run's first item to source_address
  // The last send run the write reaches: a message's runs split by the sender's controls
  // (sendpic, sendpicp) that land back to back through one mux window are one write.
  uint32_t last_run = 0;
};

struct TraceLine {
  int64_t event = 0;
  std::string text;
};

// A relocated tile's sends: its runs at their new addresses, the row word that opened each
// message (send or transmitting sendpicp), and the row's executed bytes. A later relocation of
// the same tile moves these runs instead of scheduling its row again.
struct MovedSends {
  std::vector<SendRun> runs;
  std::vector<uint32_t> opener_word;  // per message
  uint32_t row_bytes = 0;
  // The runs this relocation moved (a moved message moves all its runs), or all of them when
  // the row was scheduled again.
  std::vector<uint32_t> moved_runs;
  bool every_run_moved = false;
  // The memory elements that the tile's receives write and its row fetch reads, sorted: they
  // do not move, so the next relocation's hazard check reuses them (empty until known).
  std::vector<uint32_t> fixed_elements;
};

struct PhaseOutcome {
  std::vector<RowSchedule> schedules;  // per tile
  std::vector<int64_t> tile_horizon;   // per tile: its row's final event counter
  int64_t horizon = 0;                 // max over tiles
  std::vector<uint32_t> final_mux;     // per tile, to carry into the next phase
  std::vector<uint32_t> final_paired_mux;
  // Apply in this order: (receiver, first_write_event, address). Made by parallel tasks into a
  // resized list that they fill whole (arch::UninitializedVector).
  arch::UninitializedVector<WriteRun> writes;
  std::vector<ModelHazard> hazards;              // sorted by (event, tile, kind)
  std::vector<TraceLine> trace;                  // events of the traced tile, by event
  std::vector<std::optional<MovedSends>> moved;  // per tile, set by relocate_phase for moved tiles
  // The writes' indices by sender, each sender's by first run, made by the first relocation
  // and kept by the later ones (they keep the writes); empty until then.
  arch::Groups writes_by_sender;
  std::vector<uint32_t> moved_writes;  // the writes whose source the last relocation changed
};

PhaseOutcome execute_phase(const arch::MachineDescription& machine, const arch::Topology& topology,
                           std::span<const PhaseTile> tiles, std::optional<uint32_t> trace_logical = std::nullopt);

// The outcome of `tiles` derived in place from `outcome`, an earlier hazard-free execution of
// `earlier_tiles`, when the rows differ only in the address fields of send and sendpicp words
// (what a Repeat patch list rewrites between iterations) or after their returns: timing,
// selections and write addresses depend on no source address, so only the moved messages'
// writes change their sources (listed in moved_writes); the writes keep their order,
// receivers and destinations. False, with `outcome` unspecified, when that does not hold, or
// when a moved source leaves SRAM or shares a memory element with the tile's receives or row
// fetch (hazards 1, 2, 4): execute_phase then runs and reports it. Cost is proportional to
// the changed rows and the moved writes, not to the phase's selections. Outcomes carry no
// schedules or trace lines, but the moved tiles' sends, which the next relocation shifts
// instead of scheduling those rows again.
bool relocate_phase(const arch::MachineDescription& machine, std::span<const PhaseTile> earlier_tiles,
                    PhaseOutcome& outcome, std::span<const PhaseTile> tiles);

}  // namespace lockstep::model
