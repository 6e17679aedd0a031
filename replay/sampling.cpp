#include "replay/sampling.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "formats/token.hpp"

namespace lockstep::replay {

uint64_t SeededRandom::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t SeededRandom::below(uint64_t bound) {
  // Rejection keeps the draw exactly uniform.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x = next();
  while (x >= limit) x = next();
  return x % bound;
}

uint64_t count_destination_words(const arch::CapturePhase& phase) {
  uint64_t total = 0;
  for (const auto& t : phase.transfers) total += uint64_t(t.words) * t.destinations.size();
  return total;
}

namespace {

// A tile's destination words as runs (one per transfer destination), so a sample never
// has to list every word of a large phase.
struct TileWords {
  std::vector<std::pair<uint64_t, DestinationWord>> runs;  // (first flat index, run start)
  uint64_t count = 0;
  std::map<uint64_t, uint64_t> swapped;  // sparse Fisher-Yates: position -> flat index
  uint64_t taken = 0;

  DestinationWord at(uint64_t flat) const {
    auto it =
        std::upper_bound(runs.begin(), runs.end(), flat, [](uint64_t f, const auto& run) { return f < run.first; });
    --it;
    DestinationWord w = it->second;
    w.word += static_cast<uint32_t>(flat - it->first);
    return w;
  }
  uint64_t value(uint64_t position) const {
    auto it = swapped.find(position);
    return it == swapped.end() ? position : it->second;
  }
  // The next word of this tile's seeded permutation (without replacement).
  DestinationWord take(SeededRandom& random) {
    const uint64_t j = taken + random.below(count - taken);
    const uint64_t chosen = value(j);
    swapped[j] = value(taken);
    ++taken;
    return at(chosen);
  }
};

}  // namespace

std::vector<DestinationWord> sample_destination_words(const arch::CapturePhase& phase, uint64_t seed,
                                                      std::optional<uint64_t> samples) {
  const uint64_t total = count_destination_words(phase);
  std::vector<DestinationWord> out;
  if (!samples || *samples >= total) {
    out.reserve(total);
    for (uint32_t t = 0; t < phase.transfers.size(); ++t) {
      const auto& transfer = phase.transfers[t];
      for (uint32_t d = 0; d < transfer.destinations.size(); ++d) {
        for (uint32_t k = 0; k < transfer.words; ++k) out.push_back({t, d, k});
      }
    }
    return out;
  }
  std::map<uint32_t, TileWords> by_tile;
  for (uint32_t t = 0; t < phase.transfers.size(); ++t) {
    const auto& transfer = phase.transfers[t];
    if (transfer.words == 0) continue;
    for (uint32_t d = 0; d < transfer.destinations.size(); ++d) {
      auto& tile = by_tile[transfer.destinations[d].tile];
      tile.runs.push_back({tile.count, {t, d, 0}});
      tile.count += transfer.words;
    }
  }
  std::vector<TileWords*> order;
  for (auto& [tile, words] : by_tile) order.push_back(&words);
  SeededRandom random(seed);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[random.below(i)]);
  out.reserve(*samples);
  while (out.size() < *samples) {
    for (auto* tile : order) {
      if (out.size() == *samples) break;
      if (tile->taken < tile->count) out.push_back(tile->take(random));
    }
  }
  return out;
}

uint32_t expected_token(const arch::CapturePhase& phase, const DestinationWord& word, uint32_t iteration,
                        uint64_t seed) {
  const auto& transfer = phase.transfers[word.transfer];
  return arch::payload_token(seed, transfer.source_tile, transfer.source_addresses[iteration] + 4 * word.word,
                             iteration);
}

}  // namespace lockstep::replay
