#include "workload/synth_builder.hpp"

#include <algorithm>

namespace lockstep::workload {

SynthRegions SynthRegions::of(const arch::MachineDescription& machine) {
  SynthRegions r;
  r.source_begin = std::max(machine.sram_base, arch::kTableReservedEnd);
  r.receive_end = machine.sram_end & ~7u;
  // The split falls on a memory-element boundary (the larger, interleaved element size), so
  // no tile ever sends from and receives into one element in a phase (hazard 2).
  const uint32_t element = std::max(machine.element_bytes, machine.interleaved_element_bytes);
  r.source_end = (r.source_begin + (r.receive_end - r.source_begin) / 2) / element * element;
  r.receive_begin = r.source_end;
  return r;
}

SynthPhaseBuilder::SynthPhaseBuilder(const SynthRegions& regions, uint32_t tiles, SynthRandom& random,
                                     arch::CapturePhase& phase)
    : regions_(regions), random_(random), phase_(phase), next_receive_(tiles, regions.receive_begin) {}

bool SynthPhaseBuilder::add(uint32_t source, std::span<const uint32_t> destinations, uint32_t words, uint32_t stride) {
  const uint32_t iterations = phase_.iterations;
  const uint32_t source_bytes = regions_.source_end - regions_.source_begin;
  // The iterated source walk must fit the source area.
  const uint32_t walk = iterations > 1 ? (iterations - 1) * stride : 0;
  if (walk >= source_bytes) return false;
  words = std::min(words, (source_bytes - walk) / 4);
  if (iterations > 1) words = std::min(words, std::max(stride, 4u) / 4);
  std::vector<uint32_t> kept;
  kept.reserve(destinations.size());
  for (uint32_t d : destinations) {
    if (room(d) >= 8) kept.push_back(d);
  }
  if (kept.empty()) return false;
  // Destinations that come as complete logical pairs (L, L XOR 1) get one shared address and
  // an even word count, so the transfer may go as 64-bit paired items (docs/scheduling.md).
  const bool complete_pairs = std::all_of(
      kept.begin(), kept.end(), [&](uint32_t d) { return std::find(kept.begin(), kept.end(), d ^ 1u) != kept.end(); });
  uint32_t shared = 0;
  for (uint32_t d : kept) shared = std::max(shared, next_receive_[d]);
  for (uint32_t d : kept) words = std::min(words, (complete_pairs ? regions_.receive_end - shared : room(d)) / 4);
  words = std::min(words, arch::kMaxTransferWords);
  if (complete_pairs && words > 1) words &= ~1u;
  if (words == 0) return false;

  arch::Transfer t;
  t.source_tile = source;
  t.words = words;
  t.allow_paired = complete_pairs || random_.chance(1, 2);
  const uint32_t bytes = words * 4;
  // 8-aligned base; a quarter of the transfers that may not pair start on an odd word.
  const uint32_t slots = (source_bytes - walk - bytes) / 8;
  uint32_t base = regions_.source_begin + 8 * random_.below(slots + 1);
  if (!t.allow_paired && base + walk + bytes + 4 <= regions_.source_end && random_.chance(1, 4)) {
    base += 4;
  }
  t.source_addresses.resize(iterations);
  for (uint32_t i = 0; i < iterations; ++i) t.source_addresses[i] = base + i * stride;
  t.destinations.reserve(kept.size());
  const uint32_t reserved = (bytes + 7) & ~7u;
  for (uint32_t d : kept) {
    if (complete_pairs) next_receive_[d] = shared;
    t.destinations.push_back(arch::Destination{d, next_receive_[d]});
    next_receive_[d] += reserved;
  }
  phase_.transfers.push_back(std::move(t));
  return true;
}

}  // namespace lockstep::workload
