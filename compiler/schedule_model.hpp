#pragma once
// The scheduler's view of one phase: transfers resolved to physical tiles and route timing,
// the messages (chunks of transfers) an order lists, and a placement of those messages on
// the tiles' event clocks. Shared by orders, physical scheduling, encoding and the checks.
#include <cstdint>
#include <vector>

#include "arch/capture.hpp"
#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "compiler/compile.hpp"

namespace lockstep::compiler {

// One receiver of a transfer.
struct ReceiverInfo {
  uint32_t tile = 0;       // physical
  int32_t ttm = 0;         // ttm(s, d)
  int32_t write_delay = 0; // W(d)
  uint64_t write_mask = 0; // memory elements of the destination span
  uint32_t address = 0;    // destination byte address
};

struct TransferInfo {
  uint32_t source = 0;  // physical
  uint32_t words = 0;   // 32-bit words
  uint32_t sctl = 0;    // union of dir(s, d) over the receivers (+4 when paired)
  uint64_t read_mask = 0;  // memory elements of every iteration's source span
  std::vector<ReceiverInfo> receivers;
};

struct PhaseProblem {
  const arch::CapturePhase* phase = nullptr;
  const arch::MachineDescription* machine = nullptr;
  const arch::Topology* topology = nullptr;
  Width width = Width::Word32;
  uint32_t tiles = 0;  // physical id space (chip tiles)
  std::vector<TransferInfo> transfers;
  std::vector<uint64_t> send_load;  // items per physical tile
  std::vector<uint64_t> recv_load;
  uint64_t total_items = 0;
};

// A chunk of a transfer: words [offset, offset + words) to every receiver of the transfer.
struct Message {
  uint32_t transfer = 0;
  uint32_t offset = 0;  // in words
  uint32_t words = 0;
  bool operator==(const Message&) const = default;
};
using Order = std::vector<Message>;

// Issue event of every message of an order (same indexing), and the resulting horizon.
struct Placement {
  std::vector<int32_t> issue;
  int32_t horizon = 0;
  uint32_t critical_tile = 0;  // physical tile whose row ends at the horizon
};

// Word32 only for now: one item per word.
inline uint32_t items_of(const Message& message) { return message.words; }

// Bit of a memory element in the 64-bit masks above (section 1: 16 KiB elements below the
// interleaved base, 32 KiB logical elements above it; folded modulo 64, which can only make
// the contention check stricter).
uint64_t element_mask(const arch::MachineDescription& machine, uint64_t address, uint64_t bytes);

PhaseProblem make_problem(const arch::CapturePhase& phase, const arch::MachineDescription& machine,
                          const arch::Topology& topology, Width width);

}  // namespace lockstep::compiler
