#pragma once
// The scheduler's view of one phase: transfers resolved to physical tiles and route timing,
// the messages (chunks of transfers) an order lists, and a placement of those messages on
// the tiles' event clocks. Shared by orders, physical scheduling, encoding and the checks.
#include <cstdint>
#include <vector>

#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "compiler/compile.hpp"
#include "formats/capture.hpp"

namespace lockstep::compiler {

// One receiver of a transfer. For a paired transfer both members of every receiving
// physical pair are receivers, `ttm` is pttm(s, d) - 1 (the same for both members: item k
// of a send issued at t reaches the early member's paired mux at t + pttm + k, spec
// section 6) and `write_delay` the paired write delay. Either way the first item is at the
// mux at t + 1 + ttm.
struct ReceiverInfo {
  uint32_t tile = 0;        // physical
  int32_t ttm = 0;          // ttm(s, d), or pttm(s, d) - 1 when paired
  int32_t write_delay = 0;  // W(d), or the paired write delay 53 + 2r when paired
  uint64_t write_mask = 0;  // memory elements of the destination span
  uint32_t address = 0;     // destination byte address
  bool early = false;       // paired: the member that issues the paired XPIC controls
  uint32_t format = 0;      // paired: PIC format value dir(s, d)
};

struct TransferInfo {
  uint32_t source = 0;     // physical
  uint32_t words = 0;      // 32-bit words
  uint32_t items = 0;      // words, or words / 2 when paired
  bool paired = false;     // sent as 64-bit items (docs/scheduling.md, "Paired64")
  uint32_t sctl = 0;       // union of dir(s, d) over the receivers (+4 when paired)
  uint64_t read_mask = 0;  // memory elements of every iteration's source span
  std::vector<ReceiverInfo> receivers;
  uint32_t item_words() const { return paired ? 2 : 1; }
};

struct PhaseProblem {
  const arch::CapturePhase* phase = nullptr;
  const arch::MachineDescription* machine = nullptr;
  const arch::Topology* topology = nullptr;
  Width width = Width::Word32;
  uint32_t tiles = 0;  // physical id space (chip tiles)
  std::vector<TransferInfo> transfers;
  std::vector<uint64_t> send_load;  // items per physical tile
  std::vector<uint64_t> recv_load;  // items per physical tile (both members of a pair)
  uint64_t total_items = 0;
  uint32_t paired_transfers = 0;
  // Partners of paired senders (physical): they take no part in the phase and get a
  // delay-only row that ends with their partner's row.
  std::vector<uint32_t> busy_partners;
};

// A chunk of a transfer: items [offset, offset + items) to every receiver of the transfer
// (an item is one 32-bit word, or two for a paired transfer).
struct Message {
  uint32_t transfer = 0;
  uint32_t offset = 0;  // in items
  uint32_t items = 0;
  bool operator==(const Message&) const = default;
};
using Order = std::vector<Message>;

// Issue event of every message of an order (same indexing), and the resulting horizon.
struct Placement {
  std::vector<int32_t> issue;
  int32_t horizon = 0;
  uint32_t critical_tile = 0;  // physical tile whose row ends at the horizon
};

inline uint32_t items_of(const Message& message) { return message.items; }

// Which transfers of a phase may go as Paired64 items (docs/scheduling.md, "Paired64"):
// allow_paired, an even number of words >= 128 and <= 2 * 4148, every source iteration and
// every destination 8-aligned, destinations complete physical pairs sharing one address,
// and the sender's partner taking no part in the phase. Transfers with bad fields are
// never eligible (make_problem reports them).
std::vector<bool> paired_eligible(const arch::CapturePhase& phase, const arch::Topology& topology);

// Bit of a memory element in the 64-bit masks above (section 1: 16 KiB elements below the
// interleaved base, 32 KiB logical elements above it; folded modulo 64, which can only make
// the contention check stricter).
uint64_t element_mask(const arch::MachineDescription& machine, uint64_t address, uint64_t bytes);

PhaseProblem make_problem(const arch::CapturePhase& phase, const arch::MachineDescription& machine,
                          const arch::Topology& topology, Width width);

}  // namespace lockstep::compiler
