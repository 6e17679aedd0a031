#include "model/barrier.hpp"

#include <algorithm>

#include "model/tile.hpp"

namespace lockstep::model {

Barrier::Barrier(sc_core::sc_module_name name, const arch::MachineDescription& machine,
                 std::map<BarrierKey, uint32_t> participants)
    : sc_core::sc_module(name), fabric("fabric"), machine_(machine) {
  for (const auto& [key, count] : participants) {
    Round& r = rounds_[key];
    r.expected = count;
    r.released = std::make_unique<sc_core::sc_event>();
  }
}

int64_t Barrier::arrive(const BarrierKey& key, Tile& tile) {
  Round& round = rounds_.at(key);
  round.arrived.push_back(&tile);
  if (round.arrived.size() < round.expected) {
    if (on_wait) on_wait(tile);
    sc_core::wait(*round.released);
    return round.events.at(&tile);
  }
  // The last arrival releases everyone after the barrier latency; its path to here is the
  // critical path to the release.
  auto path = std::make_shared<ReleasePath>();
  path->last_arrival = tile.logical();
  path->interval = tile.since_release();
  path->interval.sync += machine_.barrier_latency_cycles;
  path->total = tile.path_now();
  path->total.sync += machine_.barrier_latency_cycles;
  if (machine_.barrier_latency_cycles > 0) {
    sc_core::wait(sc_core::sc_time::from_value(machine_.barrier_latency_cycles));
  }
  if (before_release) before_release();
  std::vector<Tile*> tiles = std::move(round.arrived);
  round.arrived.clear();
  for (Tile* t : tiles) t->released(path);
  std::sort(tiles.begin(), tiles.end(),
            [](const Tile* a, const Tile* b) { return a->logical() < b->logical(); });
  round.events.clear();
  if (key.host) {
    const uint64_t cycles = host_phase(key.phase, tiles);
    for (Tile* t : tiles) round.events[t] = static_cast<int64_t>(cycles);
  } else if (key.exchange) {
    const std::vector<int64_t> events = fabric->execute(key.phase, tiles);
    for (size_t i = 0; i < tiles.size(); ++i) round.events[tiles[i]] = events[i];
  } else {
    for (Tile* t : tiles) round.events[t] = 0;
  }
  round.released->notify(sc_core::SC_ZERO_TIME);
  return round.events.at(&tile);
}

std::vector<std::pair<BarrierKey, std::vector<Tile*>>> Barrier::stuck() const {
  std::vector<std::pair<BarrierKey, std::vector<Tile*>>> out;
  for (const auto& [key, round] : rounds_) {
    if (!round.arrived.empty()) out.emplace_back(key, round.arrived);
  }
  return out;
}

}  // namespace lockstep::model
