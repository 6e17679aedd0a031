#pragma once
// The payload check of a replay: after every execution of the phase, the destination
// words (all, or a seeded sample) must hold the tokens of that iteration's source words.
#include <cstdint>
#include <vector>

#include "arch/capture.hpp"
#include "replay/point.hpp"
#include "replay/sampling.hpp"
#include "sim/backend.hpp"

namespace lockstep::replay {

// Records into `result`: executions, horizon (max), words checked, mismatches, and the
// payload digest after the last iteration when options.payload_digest.
// After every iteration but the last, each checked word is overwritten with the complement
// of the token the next iteration must deliver there: a Repeat whose iterations read the
// same source addresses (same tokens) then cannot pass on a word an earlier one left.
class PayloadChecker {
 public:
  PayloadChecker(const arch::CapturePhase& phase, const PointOptions& options, PointResult& result);
  void after(const sim::PhaseExecution& execution, sim::MemoryView& memory);

 private:
  void compare(uint32_t tile, uint32_t address, uint32_t iteration, uint32_t expected,
               uint32_t found);
  static uint32_t word_at(const uint8_t* bytes);
  static void put_word(uint8_t* bytes, uint32_t value);
  void fill_tokens(uint32_t tile, uint32_t address, std::vector<uint32_t>& out, bool complement) const;
  void check_sample(uint32_t iteration, sim::MemoryView& memory, bool poison);
  void check_all(uint32_t iteration, sim::MemoryView& memory, bool poison);
  // Transfers in capture order, destinations in capture order: a fixed, canonical order.
  void digest(const sim::MemoryView& memory);
  void record_error(const std::string& what);

  const arch::CapturePhase& phase_;
  const PointOptions& options_;
  PointResult& result_;
  std::vector<DestinationWord> sample_;
  std::vector<uint8_t> buffer_, poison_, expected_bytes_;
  std::vector<uint32_t> expected_, poison_words_;
};

}  // namespace lockstep::replay
