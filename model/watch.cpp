#include "model/watch.hpp"

#include <algorithm>
#include <tuple>

#include "model/sram.hpp"

namespace lockstep::model {

Watcher::Watcher(const std::vector<WatchRange>& ranges) {
  for (const WatchRange& r : ranges) {
    TileWatch& t = tiles_[r.tile];
    t.ranges.push_back(r);
    for (uint32_t a = r.address; a < r.address + r.bytes; a += 4) t.words.emplace(a, 0);  // SRAM starts zero
  }
}

void Watcher::report(TileWatch& t, uint32_t tile, uint32_t address, uint32_t value, const std::string& writer,
                     const WriteContext& when, const std::vector<std::pair<uint32_t, uint64_t>>& operands) {
  uint32_t& old = t.words.at(address);
  t.records.push_back({tile, address, when.cycle, when.phase, when.iteration, writer, old, value, operands});
  old = value;
}

void Watcher::written(uint32_t tile, uint32_t address, uint32_t bytes, const Sram& memory, const std::string& writer,
                      const WriteContext& when) {
  const auto found = tiles_.find(tile);
  if (found == tiles_.end()) return;
  TileWatch& t = found->second;
  const uint64_t end = uint64_t{address} + bytes;
  for (auto it = t.words.lower_bound(address & ~3u); it != t.words.end() && it->first < end; ++it) {
    report(t, tile, it->first, memory.read_word(it->first), writer, when);
  }
}

void Watcher::changed(uint32_t tile, const Sram& memory, const std::string& writer, const WriteContext& when,
                      const std::vector<std::pair<uint32_t, uint64_t>>& operands) {
  const auto found = tiles_.find(tile);
  if (found == tiles_.end()) return;
  TileWatch& t = found->second;
  for (auto& [address, old] : t.words) {
    const uint32_t now = memory.read_word(address);
    if (now != old) report(t, tile, address, now, writer, when, operands);
  }
}

std::vector<WatchWrite> Watcher::records() const {
  std::vector<WatchWrite> out;
  for (const auto& [tile, t] : tiles_) out.insert(out.end(), t.records.begin(), t.records.end());
  std::stable_sort(out.begin(), out.end(), [](const WatchWrite& a, const WatchWrite& b) {
    return std::tie(a.cycle, a.tile, a.address) < std::tie(b.cycle, b.tile, b.address);
  });
  return out;
}

}  // namespace lockstep::model
