#include "compiler/multicast_split.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "compiler/schedule_model.hpp"

namespace lockstep::compiler {

arch::CapturePhase split_multicast(const arch::CapturePhase& phase, const arch::Topology& topology, uint32_t group,
                                   bool keep_paired) {
  if (group == 0) return phase;
  const uint32_t tiles = topology.tiles();
  std::vector<uint64_t> send(tiles, 0), receive(tiles, 0);
  for (const arch::Transfer& t : phase.transfers) {
    if (t.source_tile >= tiles) return phase;  // validation reports it; nothing to improve
    send[t.source_tile] += t.words;
    for (const arch::Destination& d : t.destinations) {
      if (d.tile >= tiles) return phase;
      receive[d.tile] += t.words;
    }
  }
  // Within the largest per-tile load the phase already has, extra sends cost no more than
  // the busiest tile; allowing less (0.6, 0.75 of it) or more (1.5) gave longer horizons
  // on the multicast family (bench_multicast_split).
  const uint64_t budget =
      std::max(*std::max_element(receive.begin(), receive.end()), *std::max_element(send.begin(), send.end()));

  // Largest fan-out first (ties: larger transfer, then capture order): those are the
  // messages hardest to fit.
  std::vector<size_t> order(phase.transfers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto& x = phase.transfers[a];
    const auto& y = phase.transfers[b];
    if (x.destinations.size() != y.destinations.size()) return x.destinations.size() > y.destinations.size();
    return x.words > y.words;
  });
  std::vector<bool> kept(phase.transfers.size(), false);
  if (keep_paired) kept = paired_eligible(phase, topology);
  std::vector<uint32_t> groups(phase.transfers.size(), 1);
  for (size_t i : order) {
    const arch::Transfer& t = phase.transfers[i];
    if (t.destinations.size() <= group || kept[i]) continue;
    const uint32_t want = static_cast<uint32_t>((t.destinations.size() + group - 1) / group);
    const uint64_t extra = uint64_t(t.words) * (want - 1);
    if (send[t.source_tile] + extra > budget) continue;
    send[t.source_tile] += extra;
    groups[i] = want;
  }

  arch::CapturePhase out = phase;
  out.transfers.clear();
  for (size_t i = 0; i < phase.transfers.size(); ++i) {
    const arch::Transfer& t = phase.transfers[i];
    if (groups[i] == 1) {
      out.transfers.push_back(t);
      continue;
    }
    std::vector<arch::Destination> dests = t.destinations;
    std::stable_sort(dests.begin(), dests.end(), [&](const arch::Destination& a, const arch::Destination& b) {
      return topology.physical(a.tile) < topology.physical(b.tile);
    });
    // Even groups: sizes differ by at most one.
    const size_t n = dests.size();
    size_t at = 0;
    for (uint32_t g = 0; g < groups[i]; ++g) {
      const size_t size = n / groups[i] + (g < n % groups[i] ? 1 : 0);
      arch::Transfer part = t;
      part.allow_paired = false;  // a group is never paired (see the header)
      part.destinations.assign(dests.begin() + static_cast<std::ptrdiff_t>(at),
                               dests.begin() + static_cast<std::ptrdiff_t>(at + size));
      out.transfers.push_back(std::move(part));
      at += size;
    }
  }
  return out;
}

}  // namespace lockstep::compiler
