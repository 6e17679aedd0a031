#pragma once
// Where a run's cycles go: the critical path of the run split by what the tile on it was
// doing (docs/timing.md, "Where the cycles go"). A tile's time only advances by its own
// steps and by waiting at barriers, and a barrier releases at its last arrival plus the
// latency, so every cycle of the run is one of: the last-arriving tile's kernels, its
// patches, its supervisor work, the barrier latency, or its own exchange row after a
// release. Following the last arrival back from the tile that finishes last gives a split
// whose parts add up to the total exactly.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace lockstep::model {

enum class CycleKind : uint8_t {
  Exchange,  // the tile's own row, from the release to its return
  Compute,   // kernel launches and their worker cycles
  Sync,      // exchange setup instructions, sync instructions, the barrier latency
  Patching,  // patch steps
  Control,   // Repeat entry and loop code
  Host,      // host phases: the host's handshake and the transfers, from the release
};

struct CycleSplit {
  uint64_t exchange = 0;
  uint64_t compute = 0;
  uint64_t sync = 0;
  uint64_t patching = 0;
  uint64_t control = 0;
  uint64_t host = 0;
  std::map<std::string, uint64_t> compute_by_kernel;  // compute, by kernel name

  uint64_t total() const { return exchange + compute + sync + patching + control + host; }
  void add(CycleKind kind, uint64_t cycles) {
    switch (kind) {
      case CycleKind::Exchange:
        exchange += cycles;
        break;
      case CycleKind::Compute:
        compute += cycles;
        break;
      case CycleKind::Sync:
        sync += cycles;
        break;
      case CycleKind::Patching:
        patching += cycles;
        break;
      case CycleKind::Control:
        control += cycles;
        break;
      case CycleKind::Host:
        host += cycles;
        break;
    }
  }
  void add_kernel(const std::string& name, uint64_t cycles) {
    compute += cycles;
    compute_by_kernel[name] += cycles;
  }
  CycleSplit& operator+=(const CycleSplit& other) {
    exchange += other.exchange;
    compute += other.compute;
    sync += other.sync;
    patching += other.patching;
    control += other.control;
    host += other.host;
    for (const auto& [name, cycles] : other.compute_by_kernel) compute_by_kernel[name] += cycles;
    return *this;
  }
};

// The critical path up to one barrier release: shared by every tile that release frees
// (one allocation per release, not per tile).
struct ReleasePath {
  CycleSplit total;           // from the start of the run to the release
  CycleSplit interval;        // the last arrival's part since its own previous release, latency included
  uint32_t last_arrival = 0;  // logical tile whose arrival released the barrier
};
using SharedReleasePath = std::shared_ptr<const ReleasePath>;

}  // namespace lockstep::model
