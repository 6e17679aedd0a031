#pragma once
// Builds one synthetic phase: places every transfer's source and destination spans so the
// capture keeps the producers' conventions (docs/formats.md, Captures): 4-aligned spans in
// SRAM, nothing in the exchange-table range, and no two destination spans of a phase
// overlapping on a tile (each word lands once) nor overlapping that tile's sources.
#include <cstdint>
#include <span>
#include <vector>

#include "arch/machine.hpp"
#include "formats/capture.hpp"
#include "workload/synth_random.hpp"

namespace lockstep::workload {

// Per tile: sources in the lower half of the data area, receives in the upper half.
struct SynthRegions {
  uint32_t source_begin = 0;
  uint32_t source_end = 0;
  uint32_t receive_begin = 0;
  uint32_t receive_end = 0;
  static SynthRegions of(const arch::MachineDescription& machine);
};

class SynthPhaseBuilder {
 public:
  SynthPhaseBuilder(const SynthRegions& regions, uint32_t tiles, SynthRandom& random, arch::CapturePhase& phase);

  // Adds a transfer of up to `words` words from `source` to `destinations` (distinct, none
  // the source). Words shrink to what every receiver still has room for; receivers with
  // no room at all are dropped. With iterations > 1 the source advances by `stride` bytes
  // per iteration (stride >= the span). Returns false if nothing could be added.
  bool add(uint32_t source, std::span<const uint32_t> destinations, uint32_t words, uint32_t stride = 0);

  uint32_t room(uint32_t tile) const { return regions_.receive_end - next_receive_[tile]; }

 private:
  const SynthRegions& regions_;
  SynthRandom& random_;
  arch::CapturePhase& phase_;
  std::vector<uint32_t> next_receive_;  // bump pointer per tile
};

}  // namespace lockstep::workload
