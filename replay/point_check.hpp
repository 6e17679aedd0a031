#pragma once
// The payload check of a replay: after every execution of the phase, the destination
// words (all, or a seeded sample) must hold the tokens of that iteration's source words.
#include <tbb/enumerable_thread_specific.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "formats/capture.hpp"
#include "io/parallel.hpp"
#include "replay/point.hpp"
#include "replay/sampling.hpp"
#include "sim/backend.hpp"

namespace lockstep::replay {

// Records into `result`: executions, horizon (max), words checked, mismatches, and the
// payload digest after the last iteration when options.payload_digest.
// After every iteration but the last, it writes the next iteration's tokens (formats/token.hpp:
// salted by the iteration) into that iteration's source words, so every source word of every
// iteration holds a unique token, and a word an iteration fails to write cannot pass on
// what the previous one left, even when every iteration reads the same addresses.
class PayloadChecker {
 public:
  PayloadChecker(const arch::CapturePhase& phase, const PointOptions& options, PointResult& result);
  // Checks a receiver's destinations as its words land (sim::RunOptions::after_landing), while
  // they are in cache; after() checks the rest. Called from several threads, one tile each.
  void landed(uint32_t phase, uint32_t iteration, uint32_t tile, const sim::MemoryView& memory);
  void after(const sim::PhaseExecution& execution, sim::MemoryView& memory);

 private:
  void compare(uint32_t tile, uint32_t address, uint32_t iteration, uint32_t expected, uint32_t found);
  static uint32_t word_at(const uint8_t* bytes);
  void plan_checks();
  void check_sample(uint32_t iteration, const sim::MemoryView& memory);
  void check_all(uint32_t iteration, const sim::MemoryView& memory);
  void check_range(size_t range, uint32_t iteration, const sim::MemoryView& memory);
  void report_failures(uint32_t iteration, const sim::MemoryView& memory);
  void refill_sources(uint32_t iteration, sim::MemoryView& memory);
  void make_tokens(uint32_t transfer, uint32_t iteration, std::span<uint32_t> out) const;
  uint32_t first_token(uint32_t transfer, uint32_t iteration) const;  // of make_tokens' run
  // Transfers in capture order, destinations in capture order: a fixed, canonical order.
  void digest(const sim::MemoryView& memory);
  void record_error(const std::string& what);

  const arch::CapturePhase& phase_;
  const PointOptions& options_;
  PointResult& result_;
  std::vector<DestinationWord> sample_;
  std::vector<uint8_t> bytes_;

  // Checking every word: each destination range, sorted by tile and address so the compares
  // stream through each tile's SRAM.
  struct DestinationRange {
    uint32_t tile = 0, address = 0, transfer = 0, destination = 0;
  };
  std::vector<DestinationRange> ranges_;
  uint64_t destination_words_ = 0;  // words checked per iteration
  // Each tile's ranges: [tile_ranges_[tile], tile_ranges_[tile + 1]) of ranges_.
  std::vector<uint32_t> tile_ranges_;
  // The tiles whose ranges landed() checked in the current execution: marked with
  // execution_mark_, which after() advances, so no list is cleared between executions.
  std::vector<uint64_t> checked_in_;
  uint64_t execution_mark_ = 1;
  // A destination whose words differ: capture order is (transfer, destination).
  struct FailedDestination {
    uint32_t transfer = 0, destination = 0;
    auto operator<=>(const FailedDestination&) const = default;
  };
  tbb::enumerable_thread_specific<std::vector<FailedDestination>> failing_;

  // What each transfer's tokens need.
  struct TransferSource {
    uint32_t tile = 0, words = 0;
  };
  std::vector<TransferSource> sources_;     // per transfer
  std::vector<uint32_t> source_addresses_;  // [iteration * transfers + transfer]
  uint32_t source_address(uint32_t transfer, uint32_t iteration) const {
    return source_addresses_[size_t(iteration) * sources_.size() + transfer];
  }
  arch::Groups by_source_;  // transfers by source tile, capture order within a tile
  // Each transfer's first token of iteration first_tokens_iteration_, made in transfer order
  // before its words land: the checks, in destination order, then read one small array
  // instead of each transfer's source address and tile (docs/performance.md, round thirty-four).
  std::vector<uint32_t> first_tokens_;
  std::optional<uint32_t> first_tokens_iteration_;  // none: not made (sampled checks make none)
  void make_first_tokens(uint32_t iteration);
  // Each source tile's runs [begin, end) of the last refill, in address order, touching ones
  // joined; kept for the next refill when the iteration's source addresses are the last one's
  // (same_sources_), as a Repeat's usually are.
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> refill_runs_;
  std::optional<uint32_t> refill_runs_iteration_;  // whose addresses refill_runs_ holds
  std::vector<uint8_t> same_sources_;              // [i]: iteration i's source addresses are i - 1's
  void merge_source_runs(size_t group, uint32_t iteration);
};

}  // namespace lockstep::replay
