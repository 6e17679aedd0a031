#pragma once
// The payload check of a replay: after every execution of the phase, the destination
// words (all, or a seeded sample) must hold the tokens of that iteration's source words.
#include <cstdint>
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
  void after(const sim::PhaseExecution& execution, sim::MemoryView& memory);

 private:
  void compare(uint32_t tile, uint32_t address, uint32_t iteration, uint32_t expected,
               uint32_t found);
  static uint32_t word_at(const uint8_t* bytes);
  void check_sample(uint32_t iteration, const sim::MemoryView& memory);
  void check_all(uint32_t iteration, const sim::MemoryView& memory);
  void refill_sources(uint32_t iteration, sim::MemoryView& memory);
  void plan_checks();
  void plan_refills();
  void expect(uint32_t iteration);
  std::span<const uint32_t> generate(uint32_t transfer, uint32_t iteration);
  // Transfers in capture order, destinations in capture order: a fixed, canonical order.
  void digest(const sim::MemoryView& memory);
  void record_error(const std::string& what);

  const arch::CapturePhase& phase_;
  const PointOptions& options_;
  PointResult& result_;
  std::vector<DestinationWord> sample_;
  std::vector<uint8_t> buffer_;

  // Checking every word: each destination range, sorted by tile and address so the compares
  // stream through each tile's SRAM, with where its tokens sit in expected_ and its place in
  // capture order (mismatches are reported in capture order, as one pass would find them).
  struct DestinationRange {
    uint32_t tile = 0, address = 0, words = 0, order = 0;
    uint64_t offset = 0;  // in words, into expected_
  };
  std::vector<DestinationRange> ranges_;
  std::vector<uint64_t> transfer_offset_;  // each transfer's first word in expected_
  arch::Groups by_source_;                 // transfers by source tile
  std::vector<uint32_t> expected_;          // every transfer's tokens in expected_iteration_
  int64_t expected_iteration_ = -1;
  uint64_t words_per_iteration_ = 0;
  uint64_t destination_words_ = 0;  // words checked per iteration
};

}  // namespace lockstep::replay
