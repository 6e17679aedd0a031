// make_problem: a capture phase resolved against the topology, checked on the way.
#include <algorithm>
#include <string>

#include "compiler/schedule_model.hpp"
#include "io/errors.hpp"

namespace lockstep::compiler {
namespace {

[[noreturn]] void bad(const arch::CapturePhase& phase, size_t transfer, const std::string& what) {
  throw InputError("phase " + std::to_string(phase.id) + ": transfer " + std::to_string(transfer) + ": " + what);
}

uint32_t element_index(const arch::MachineDescription& machine, uint64_t address) {
  if (address < machine.interleaved_base) return static_cast<uint32_t>(address / machine.element_bytes);
  // Keep interleaved elements apart from the low ones: offset past every low element.
  const uint32_t low_count = machine.interleaved_base / machine.element_bytes;
  return low_count + static_cast<uint32_t>((address - machine.interleaved_base) / machine.interleaved_element_bytes);
}

constexpr uint32_t kMinPairedWords = 128;
constexpr uint32_t kMaxPairedItems = 4148;

}  // namespace

std::vector<bool> paired_eligible(const arch::CapturePhase& phase, const arch::Topology& topology) {
  const uint32_t tiles = topology.tiles();
  std::vector<bool> eligible(phase.transfers.size(), false);
  std::vector<uint8_t> takes_part(tiles, 0);  // by logical id
  for (const arch::Transfer& t : phase.transfers) {
    if (t.source_tile < tiles) takes_part[t.source_tile] = 1;
    for (const arch::Destination& d : t.destinations)
      if (d.tile < tiles) takes_part[d.tile] = 1;
  }
  // Section 2: the logical partner of L is L XOR 1 (physical XOR 2).
  auto partner = [](uint32_t logical) { return logical ^ 1u; };
  for (size_t i = 0; i < phase.transfers.size(); ++i) {
    const arch::Transfer& t = phase.transfers[i];
    if (!t.allow_paired || t.words % 2 != 0 || t.words < kMinPairedWords || t.words / 2 > kMaxPairedItems) continue;
    if (t.source_tile >= tiles || partner(t.source_tile) >= tiles || takes_part[partner(t.source_tile)]) continue;
    if (std::any_of(t.source_addresses.begin(), t.source_addresses.end(), [](uint32_t a) { return a % 8 != 0; }))
      continue;
    bool pairs = !t.destinations.empty();
    for (const arch::Destination& d : t.destinations) {
      if (!pairs) break;
      pairs = d.tile < tiles && d.address % 8 == 0 &&
              std::any_of(t.destinations.begin(), t.destinations.end(), [&](const arch::Destination& other) {
                return other.tile == partner(d.tile) && other.address == d.address;
              });
    }
    eligible[i] = pairs;
  }
  return eligible;
}

uint64_t element_mask(const arch::MachineDescription& machine, uint64_t address, uint64_t bytes) {
  if (bytes == 0) return 0;
  const uint32_t first = element_index(machine, address);
  const uint32_t last = element_index(machine, address + bytes - 1);
  uint64_t mask = 0;
  for (uint32_t e = first; e <= last; ++e) {
    mask |= uint64_t{1} << (e % 64);
    if (mask == ~uint64_t{0}) break;
  }
  return mask;
}

PhaseProblem make_problem(const arch::CapturePhase& phase, const arch::MachineDescription& machine,
                          const arch::Topology& topology, Width width) {
  PhaseProblem problem;
  problem.phase = &phase;
  problem.machine = &machine;
  problem.topology = &topology;
  problem.width = width;
  problem.tiles = topology.physical_tiles();  // physical id space (schedule_model.hpp)
  problem.send_load.assign(problem.tiles, 0);
  problem.recv_load.assign(problem.tiles, 0);
  problem.transfers.reserve(phase.transfers.size());
  const uint32_t iterations = std::max<uint32_t>(phase.iterations, 1);
  std::vector<bool> paired(phase.transfers.size(), false);
  if (width == Width::Paired64) paired = paired_eligible(phase, topology);
  for (size_t i = 0; i < phase.transfers.size(); ++i) {
    const arch::Transfer& transfer = phase.transfers[i];
    if (transfer.words == 0) bad(phase, i, "words: must be at least 1");
    if (transfer.source_tile >= machine.tiles)
      bad(phase, i, "source_tile: no tile " + std::to_string(transfer.source_tile));
    if (transfer.source_addresses.size() != iterations)
      bad(phase, i,
          "source_addresses: " + std::to_string(transfer.source_addresses.size()) + " given, phase has " +
              std::to_string(iterations) + " iterations");
    if (transfer.destinations.empty()) bad(phase, i, "destinations: none");
    const uint64_t bytes = uint64_t{transfer.words} * 4;
    TransferInfo info;
    info.source = topology.physical(transfer.source_tile);
    info.words = transfer.words;
    info.paired = paired[i];
    info.items = info.paired ? transfer.words / 2 : transfer.words;
    for (uint32_t address : transfer.source_addresses) {
      if (address % 4 != 0 || !machine.in_sram(address, bytes))
        bad(phase, i, "source_addresses: span at " + std::to_string(address) + " not 4-aligned inside SRAM");
      info.read_mask |= element_mask(machine, address, bytes);
    }
    info.receivers.reserve(transfer.destinations.size());
    for (size_t k = 0; k < transfer.destinations.size(); ++k) {
      const arch::Destination& dest = transfer.destinations[k];
      if (dest.tile >= machine.tiles) bad(phase, i, "destinations." + std::to_string(k) + ".tile: no such tile");
      if (dest.tile == transfer.source_tile)
        bad(phase, i, "destinations." + std::to_string(k) + ".tile: is the source");
      if (dest.address % 4 != 0 || !machine.in_sram(dest.address, bytes))
        bad(phase, i, "destinations." + std::to_string(k) + ".address: span not 4-aligned inside SRAM");
      for (size_t j = 0; j < k; ++j)
        if (transfer.destinations[j].tile == dest.tile)
          bad(phase, i, "destinations." + std::to_string(k) + ".tile: repeated");
      ReceiverInfo receiver;
      receiver.tile = topology.physical(dest.tile);
      receiver.ttm = topology.time_to_mux(info.source, receiver.tile);
      receiver.write_delay = topology.write_delay(receiver.tile);
      receiver.write_mask = element_mask(machine, dest.address, bytes);
      receiver.address = dest.address;
      if (info.paired) {
        // Section 6: the member with the smaller ttm (ties: the pair's primary) is early.
        const uint32_t other = arch::Topology::partner(receiver.tile);
        const int32_t other_ttm = topology.time_to_mux(info.source, other);
        receiver.early = receiver.ttm < other_ttm || (receiver.ttm == other_ttm && receiver.tile < other);
        receiver.ttm = topology.paired_leave_to_mux(info.source, receiver.tile);
        receiver.write_delay = topology.paired_write_delay(receiver.tile);
        receiver.format = static_cast<uint32_t>(topology.direction(info.source, receiver.tile));
      }
      info.sctl |= static_cast<uint32_t>(topology.direction(info.source, receiver.tile));
      info.receivers.push_back(receiver);
      problem.recv_load[receiver.tile] += info.items;
    }
    if (info.paired) {
      info.sctl |= 4u;
      ++problem.paired_transfers;
      const uint32_t partner = arch::Topology::partner(info.source);
      if (std::find(problem.busy_partners.begin(), problem.busy_partners.end(), partner) == problem.busy_partners.end())
        problem.busy_partners.push_back(partner);
    }
    problem.send_load[info.source] += info.items;
    problem.total_items += info.items;
    problem.transfers.push_back(std::move(info));
  }
  return problem;
}

}  // namespace lockstep::compiler
