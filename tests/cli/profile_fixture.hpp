#pragma once
// A synthetic cycle profile for the profile command tests: `tiles` tiles, `phases` global
// exchanges. Per tile and phase: one or two kernel calls of a deterministic, tile-dependent
// length, then either the exchange (send and receive activities within its horizon) or,
// on every seventh tile, only its synchronization step. Inactive tiles are not modelled.
#include <cstdint>
#include <string>

#include "profile/profile.hpp"

namespace lockstep::testing {

inline arch::Profile synthetic_profile(uint32_t tiles, uint32_t phases) {
  arch::Profile profile;
  profile.clock_hz = 1'850'000'000;
  profile.source = "synthetic";
  profile.machine_name = "ipu21-c600";
  profile.producer = "lockstep tests";
  arch::ProfileStepTable table(profile.steps);
  const auto hash = [](uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
  };
  // Every phase starts when the slowest tile arrives: compute lengths are known up front.
  std::vector<uint64_t> phase_start(phases + 1, 100);
  const uint32_t horizon = 400;
  for (uint32_t p = 0; p < phases; ++p) {
    uint64_t latest = 0;
    for (uint32_t t = 0; t < tiles; ++t) latest = std::max<uint64_t>(latest, 200 + hash(t * 1000 + p) % 1500);
    phase_start[p + 1] = phase_start[p] + latest + horizon + 20;
  }
  for (uint32_t t = 0; t < tiles; ++t) {
    arch::TileProfile tile;
    tile.physical_tile = t;
    tile.logical_tile = t;
    for (uint32_t p = 0; p < phases; ++p) {
      const uint64_t work = 200 + hash(t * 1000 + p) % 1500;
      uint64_t at = phase_start[p] + t % 5;  // tiles start a few cycles apart
      arch::ProfileStep kernel;
      kernel.kind = arch::ProfileStepKind::Compute;
      kernel.kernel = p % 3 == 0 ? "gemm_f16" : (p % 3 == 1 ? "softmax_f16" : "layernorm_f16");
      kernel.operation = "operation." + std::to_string(p);
      kernel.local_index = 2 * p;
      kernel.phase = 2 * p;
      kernel.metadata = {{"reason", "Kernel"}, {"invocations", "1"}};
      kernel.phase_label = "layer" + std::to_string(p / 4) + "/phase" + std::to_string(p);
      const uint64_t end = phase_start[p] + work;
      tile.samples.push_back({at, end, table.add(kernel), 0, 0});
      at = end;
      arch::ProfileStep exchange;
      exchange.local_index = 2 * p + 1;
      exchange.phase = arch::kExchangePhaseBit | p;
      exchange.phase_label = kernel.phase_label;
      if (t % 7 == 3) {
        exchange.kind = arch::ProfileStepKind::Synchronization;
        exchange.kernel = "sync";
        exchange.metadata = {{"reason", "ExchangeBarrier"}};
      } else {
        exchange.kind = arch::ProfileStepKind::Exchange;
        exchange.kernel = "exchange";
        exchange.event_cycles = horizon;
        const uint32_t send = 20 + 10 * (t % 8), receive = 60 + 15 * (t % 6);
        exchange.activities = {{arch::ActivityKind::Send, send, send + 120},
                               {arch::ActivityKind::Receive, receive, receive + 150},
                               {arch::ActivityKind::PartnerBusy, 300, 340}};
      }
      const uint64_t exchange_end = phase_start[p + 1] - 20 + t % 3;
      tile.samples.push_back({at, exchange_end, table.add(exchange), 0, 0});
    }
    profile.tiles.push_back(std::move(tile));
  }
  profile.total_cycles = phase_start[phases];
  return profile;
}

}  // namespace lockstep::testing
