#pragma once
// Helpers for the scheduler tests: build small phases, and run scheduled rows through the
// simulator's phase executor (model::execute_phase) to see every word land.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "compiler/phase_schedule.hpp"
#include "formats/capture.hpp"
#include "model/exchange_phase.hpp"

namespace lockstep::compiler::testing {

// Rows live in element 31 (0x7c000..0x80000); tests keep data out of it.
inline constexpr uint32_t kRowAddress = 0x7c000;

inline const arch::MachineDescription& c600() {
  static const arch::MachineDescription machine = arch::load_machine("ipu21-c600");
  return machine;
}
inline const arch::Topology& c600_topology() {
  static const arch::Topology topology(c600());
  return topology;
}

inline arch::Transfer transfer(uint32_t source, uint32_t address, std::vector<arch::Destination> dests,
                               uint32_t words) {
  arch::Transfer t;
  t.source_tile = source;
  t.source_addresses = {address};
  t.destinations = std::move(dests);
  t.words = words;
  return t;
}

// Row words of one iteration: the address fields take that iteration's values.
inline std::vector<uint32_t> words_for_iteration(const TileRow& row, uint32_t iteration) {
  std::vector<uint32_t> words = row.words;
  for (const AddressField& f : row.address_fields) words[f.word_index] = f.values[iteration % f.values.size()];
  return words;
}

// Executes the phase's rows for one iteration and checks: no hazard; the simulated horizon
// equals the schedule's; every destination word of every transfer is written exactly once,
// from the right source word; nothing else is written.
// The phase's rows as the model executes them in one iteration.
inline std::vector<model::PhaseTile> phase_tiles(const ScheduledPhase& scheduled, uint32_t iteration = 0) {
  std::vector<model::PhaseTile> tiles;
  for (const TileRow& row : scheduled.rows) {
    model::PhaseTile tile;
    tile.logical = row.tile;
    tile.physical = c600_topology().physical(row.tile);
    tile.has_row = true;
    tile.row_address = kRowAddress;
    tile.row_words = words_for_iteration(row, iteration);
    tile.incoming_base = row.incoming_base;
    tiles.push_back(std::move(tile));
  }
  return tiles;
}

inline void expect_delivers(const arch::CapturePhase& phase, const ScheduledPhase& scheduled, uint32_t iteration = 0) {
  const auto& machine = c600();
  const auto& topology = c600_topology();
  const std::vector<model::PhaseTile> tiles = phase_tiles(scheduled, iteration);
  const model::PhaseOutcome outcome = model::execute_phase(machine, topology, tiles);
  std::ostringstream hazards;
  for (const auto& h : outcome.hazards)
    hazards << "hazard " << int(h.kind) << " tile " << h.tile << " event " << h.event << ": " << h.instruction << ": "
            << h.detail << "\n";
  EXPECT_TRUE(outcome.hazards.empty()) << hazards.str();
  EXPECT_EQ(outcome.horizon, int64_t{scheduled.horizon});

  // (receiver logical, byte address) -> (sender logical, source byte address)
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint32_t, uint32_t>> expected;
  for (const arch::Transfer& t : phase.transfers)
    for (const arch::Destination& d : t.destinations)
      for (uint32_t k = 0; k < t.words; ++k)
        expected[{d.tile, d.address + 4 * k}] = {t.source_tile, t.source_addresses[iteration] + 4 * k};
  std::map<std::pair<uint32_t, uint32_t>, int> written;
  for (const model::WriteRun& w : outcome.writes) {
    const uint32_t receiver = tiles[w.receiver].logical;
    const uint32_t sender = tiles[w.sender].logical;
    for (uint32_t b = 0; b < w.bytes; b += 4) {
      const std::pair<uint32_t, uint32_t> key{receiver, w.address + b};
      ++written[key];
      auto it = expected.find(key);
      if (it == expected.end()) {
        ADD_FAILURE() << "unexpected write to tile " << receiver << " address " << std::hex << key.second;
        return;
      }
      if (it->second != std::make_pair(sender, w.source_address + b)) {
        ADD_FAILURE() << "tile " << receiver << " address 0x" << std::hex << key.second << " got word 0x"
                      << w.source_address + b << " of tile " << std::dec << sender;
        return;
      }
    }
  }
  for (const auto& [key, source] : expected) {
    const auto it = written.find(key);
    if (it == written.end() || it->second != 1) {
      ADD_FAILURE() << "tile " << key.first << " address 0x" << std::hex << key.second << " written "
                    << (it == written.end() ? 0 : it->second) << " times";
      return;
    }
  }
}

// A random phase among `tile_count` logical tiles: sources in elements 19..24, destinations
// in 25..30 (so no tile sends and receives in one element), distinct per destination.
inline arch::CapturePhase random_phase(uint32_t seed, uint32_t tile_count, uint32_t transfers, uint32_t max_words,
                                       uint32_t max_receivers, uint32_t iterations = 1) {
  std::mt19937 rng(seed);
  arch::CapturePhase phase;
  phase.id = seed;
  phase.iterations = iterations;
  std::map<uint32_t, uint32_t> next_dest, next_source;
  auto pick_tile = [&] { return static_cast<uint32_t>(rng() % tile_count) * (1472 / tile_count); };
  for (uint32_t i = 0; i < transfers; ++i) {
    arch::Transfer t;
    t.source_tile = pick_tile();
    t.words = 1 + static_cast<uint32_t>(rng() % max_words);
    const uint32_t bytes = (t.words * 4 + 7) & ~7u;
    uint32_t& src = next_source.try_emplace(t.source_tile, 0x4c000).first->second;
    for (uint32_t k = 0; k < iterations; ++k) {
      t.source_addresses.push_back(src);
      src += bytes;
    }
    const uint32_t receivers = 1 + static_cast<uint32_t>(rng() % max_receivers);
    for (uint32_t r = 0; r < receivers; ++r) {
      const uint32_t d = pick_tile();
      if (d == t.source_tile) continue;
      bool repeated = false;
      for (const auto& x : t.destinations) repeated = repeated || x.tile == d;
      if (repeated) continue;
      uint32_t& dst = next_dest.try_emplace(d, 0x64000).first->second;
      t.destinations.push_back({d, dst});
      dst += bytes;
    }
    if (t.destinations.empty()) continue;
    phase.transfers.push_back(std::move(t));
  }
  return phase;
}

}  // namespace lockstep::compiler::testing
