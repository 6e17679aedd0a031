#include "compiler/proof_plan.hpp"

#include <algorithm>

namespace lockstep::compiler {

std::vector<Span> merge_spans(std::vector<Span> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const Span& a, const Span& b) { return a.address < b.address; });
  std::vector<Span> merged;
  for (const Span& range : ranges) {
    if (range.bytes == 0) continue;
    if (!merged.empty() && uint64_t{merged.back().address} + merged.back().bytes >= range.address) {
      const uint64_t end = std::max<uint64_t>(uint64_t{merged.back().address} + merged.back().bytes,
                                              uint64_t{range.address} + range.bytes);
      merged.back().bytes = static_cast<uint32_t>(end - merged.back().address);
    } else {
      merged.push_back(range);
    }
  }
  return merged;
}

std::vector<std::vector<bool>> checksum_needed(const std::vector<const arch::CapturePhase*>& phases,
                                               const std::vector<std::vector<std::vector<Span>>>& destinations) {
  const size_t tiles = destinations.empty() ? 0 : destinations.front().size();
  std::vector<std::vector<bool>> needed(phases.size(), std::vector<bool>(tiles, false));
  // Walk backwards, keeping per tile the ranges later phases write.
  std::vector<std::vector<Span>> written_later(tiles);
  for (size_t p = phases.size(); p-- > 0;) {
    for (size_t t = 0; t < tiles; ++t) {
      const std::vector<Span>& mine = destinations[p][t];
      if (mine.empty()) continue;
      bool overwritten = phases[p]->iterations > 1;
      const std::vector<Span>& later = written_later[t];
      for (const Span& range : mine) {
        if (overwritten) break;
        auto it = std::upper_bound(later.begin(), later.end(), range.address,
                                   [](uint32_t address, const Span& s) { return address < s.address; });
        if (it != later.begin()) --it;
        for (; it != later.end() && it->address < range.address + range.bytes; ++it) {
          if (it->address + it->bytes > range.address) overwritten = true;
        }
      }
      needed[p][t] = overwritten;
      std::vector<Span> combined = later;
      combined.insert(combined.end(), mine.begin(), mine.end());
      written_later[t] = merge_spans(std::move(combined));
    }
  }
  return needed;
}

}  // namespace lockstep::compiler
