#pragma once
// The payload check of a replay: after every execution of the phase, the destination
// words (all, or a seeded sample) must hold the tokens of that iteration's source words.
#include <cstdint>
#include <vector>

#include "formats/capture.hpp"
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
  void tokens(uint32_t tile, uint32_t address, uint32_t words, uint32_t iteration);
  // Transfers in capture order, destinations in capture order: a fixed, canonical order.
  void digest(const sim::MemoryView& memory);
  void record_error(const std::string& what);

  const arch::CapturePhase& phase_;
  const PointOptions& options_;
  PointResult& result_;
  std::vector<DestinationWord> sample_;
  std::vector<uint8_t> buffer_, token_bytes_;
  std::vector<uint32_t> token_words_;
};

}  // namespace lockstep::replay
