#pragma once
// The host end of host phases (IPU21-DEVICE.md 13 and 14): the host's address space (the
// session's pages back to back in attach order), the calls in the order they are invoked with
// their files, the streaming batches, and what a phase costs. At each host phase's release the
// barrier hands the arrived tiles here: the host does its side of the handshake, then every
// tile's transfers move. docs/timing.md, "Host phases", gives the cost and its grounds.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "formats/package.hpp"
#include "model/watch.hpp"

namespace lockstep::model {

class Tile;

// One invocation of a host call: its input file (exactly the call's size) and, once the call's
// phases have run, its output file.
struct HostCallRun {
  const arch::HostCallSpec* call = nullptr;
  std::vector<uint8_t> input;
  std::vector<uint8_t> output;
  bool streams = false;  // host_call_streams(*call), set once by HostLink
};

// A host call's file sizes: max(file_offset + bytes) over its slices (section 17.1).
uint64_t host_input_bytes(const arch::HostCallSpec& call);
uint64_t host_output_bytes(const arch::HostCallSpec& call);
// Whether the call streams: two of its slices share host bytes, so a page slot is reused
// batch after batch (section 13's streaming variant).
bool host_call_streams(const arch::HostCallSpec& call);

// A host phase's cycles [decided where section 11 is silent]: the global sync's 600 plus the
// longer of the busiest tile's packets (73 route cycles per host-to-tile request, one event
// per word, at least 18 events per tile-to-host payload) and the link's share at
// kHostLinkBytesPerCycle.
inline constexpr uint64_t kHostPhaseFixedCycles = 600;
inline constexpr uint64_t kHostRouteCycles = 73;
inline constexpr uint64_t kHostMinimumPayloadEvents = 18;
inline constexpr uint64_t kHostLinkBytesPerCycle = 16;
uint64_t host_phase_cycles(const std::vector<const arch::HostStep*>& steps);

class HostLink {
 public:
  // Throws InputError when the calls do not fit the session (an input of the wrong size,
  // phases that do not add up to `program_phases`).
  HostLink(const arch::HostSession& session, std::vector<HostCallRun> calls, uint32_t program_phases);

  // Host phase `ordinal` (chip-wide, in program order) for the arrived tiles, sorted by
  // logical id; returns its cycles, the same for every tile.
  uint64_t execute(uint32_t ordinal, std::span<Tile* const> tiles);
  // After the run: captures what the calls left in the host's pages.
  void finish();

  const std::vector<HostCallRun>& calls() const { return calls_; }
  Watcher* watcher = nullptr;                  // watched words the host writes are reported to it
  uint64_t cycles() const { return cycles_; }  // every host phase's, added

 private:
  void begin_call(HostCallRun& run);
  void host_side(HostCallRun& run, uint32_t phase);  // before the tiles' transfers
  void end_call(HostCallRun& run);
  void copy_in(const HostCallRun& run, const std::vector<arch::HostFileSlice>& slices, size_t first, size_t end);
  void copy_out(HostCallRun& run, size_t first, size_t end);

  const arch::HostSession& session_;
  std::vector<HostCallRun> calls_;
  std::vector<uint8_t> arena_;
  size_t call_ = 0;      // the call whose phases run now
  uint32_t phase_ = 0;   // its next phase
  size_t captured_ = 0;  // output batches of the call already captured
  uint64_t cycles_ = 0;
};

}  // namespace lockstep::model
