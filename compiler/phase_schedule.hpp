#pragma once
// What scheduling and encoding hand to packaging: one phase's rows, per tile, with the
// address-bearing words marked so packaging can share rows and build Repeat patch lists.
#include <cstdint>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "compiler/compile.hpp"
#include "formats/capture.hpp"

namespace lockstep::compiler {

// A row word whose value depends on an address: the initial `send` of a message, a
// transmitting `sendpicp` (its first word), or a PIC pointer value (delaypic, sendpic or a
// sendpicp payload word). `values` holds the whole encoded word for every Repeat iteration
// (size 1 when the word does not change between iterations).
struct AddressField {
  enum class Kind : uint8_t { SendAddress, PicPointer };
  uint32_t word_index = 0;
  Kind kind = Kind::SendAddress;
  std::vector<uint32_t> values;
};

struct TileRow {
  uint32_t tile = 0;                         // logical
  std::vector<uint32_t> words;               // the encoded row for iteration 0, ending in the return
  std::vector<AddressField> address_fields;  // sorted by word_index
  uint32_t incoming_base = 0;                // INCOMING_BASE for this row (0: PIC values are absolute)
  uint32_t end_event = 0;                    // the tile's final event counter
};

struct ScheduledPhase {
  uint32_t phase = 0;
  Width width = Width::Word32;
  std::vector<TileRow> rows;  // sorted by tile; only tiles that send, receive or idle-busy
  uint32_t horizon = 0;       // max end_event
  uint32_t lower_bound = 0;   // see docs/scheduling.md for the proof
  uint32_t orders_considered = 0;
  uint32_t orders_deduplicated = 0;
};

// Orders, physical scheduling and encoding of one phase under one configuration. Every row
// is decoded again and checked against its schedule before it is returned; a mismatch
// throws CompilerError naming the phase, tile and event. With WidthPolicy::LatencyOriented
// or StorageFirst both widths are tried and the policy picks.
ScheduledPhase schedule_phase(const arch::CapturePhase& phase, const arch::MachineDescription& machine,
                              const arch::Topology& topology, const ScheduleConfig& config);

// The width policies' choice between the Word32 and Paired64 schedules of one phase: true
// when `paired` wins. LatencyOriented: a shorter horizon. StorageFirst: smaller max row
// bytes, then smaller total row bytes, then a shorter horizon. Ties keep Word32.
bool prefer_paired(WidthPolicy policy, const ScheduledPhase& word, const ScheduledPhase& paired);

// The lower bound alone (cheap): used by reports and tests.
uint32_t phase_lower_bound(const arch::CapturePhase& phase, const arch::Topology& topology, Width width);

}  // namespace lockstep::compiler
