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

std::vector<Tile*> Barrier::arrived_tiles(const Round& round) {
  std::vector<Tile*> tiles;
  tiles.reserve(round.arrived.size());
  for (const auto& a : round.arrived) tiles.push_back(a.tile);
  return tiles;
}

// Placed by the numbers the arrivals kept (unique, and below the chip's tile count): reading
// each tile's own, which the copies had pushed out of the caches, and sorting by it was 2% of a
// replay's main thread.
std::vector<Tile*> Barrier::tiles_in_order(const Round& round) {
  uint32_t highest = 0;
  for (const auto& a : round.arrived) highest = std::max(highest, a.logical);
  std::vector<Tile*> by_logical(size_t{highest} + 1, nullptr);
  for (const auto& a : round.arrived) by_logical[a.logical] = a.tile;
  std::erase(by_logical, nullptr);
  return by_logical;
}

Arrival Barrier::arrive(const BarrierKey& key, Tile& tile) {
  Round& round = rounds_.at(key);
  const uint64_t cycle = tile.now();
  round.arrived.push_back({&tile, tile.logical()});
  if (round.last == nullptr || cycle > round.last_cycle ||
      (cycle == round.last_cycle && tile.logical() < round.last->logical())) {
    round.last = &tile;
    round.last_cycle = cycle;
  }
  Arrival arrival{false, 0, round.generation, &round.generation, round.released.get()};
  if (round.arrived.size() < round.expected) {
    if (on_wait) on_wait(tile);
    return arrival;
  }
  arrival.last = true;
  arrival.release_cycle = round.last_cycle + machine_.barrier_latency_cycles;
  return arrival;
}

void Barrier::release(const BarrierKey& key) {
  Round& round = rounds_.at(key);
  // The last arrival in time releases everyone after the barrier latency; its path to here is
  // the critical path to the release.
  const Tile* last = round.last;
  round.last = nullptr;
  auto path = std::make_shared<ReleasePath>();
  path->last_arrival = last->logical();
  path->interval = last->since_release();
  path->interval.sync += machine_.barrier_latency_cycles;
  path->total = last->path_now();
  path->total.sync += machine_.barrier_latency_cycles;
  if (before_release) before_release();
  const std::vector<Tile*> tiles = tiles_in_order(round);
  round.arrived.clear();
  for (Tile* t : tiles) t->released(path);
  if (key.host) {
    const uint64_t cycles = host_phase(key.phase, tiles);
    for (Tile* t : tiles) t->set_release_events(static_cast<int64_t>(cycles));
  } else if (key.exchange) {
    const std::vector<int64_t> events = fabric->execute(key.phase, tiles);
    for (size_t i = 0; i < tiles.size(); ++i) tiles[i]->set_release_events(events[i]);
  } else {
    for (Tile* t : tiles) t->set_release_events(0);
  }
  ++round.generation;
  round.released->notify(sc_core::SC_ZERO_TIME);
}

std::vector<std::pair<BarrierKey, std::vector<Tile*>>> Barrier::stuck() const {
  std::vector<std::pair<BarrierKey, std::vector<Tile*>>> out;
  for (const auto& [key, round] : rounds_) {
    if (!round.arrived.empty()) out.emplace_back(key, arrived_tiles(round));
  }
  return out;
}

}  // namespace lockstep::model
