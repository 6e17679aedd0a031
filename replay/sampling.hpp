#pragma once
// Which destination words a replay checks: all of them, or a seeded, reproducible sample
// that visits every destination tile of the phase before it visits any tile twice.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "formats/capture.hpp"

namespace lockstep::replay {

// One destination word of a phase: word `word` of transfer `transfer` as it lands in
// destination `destination` (tile and byte address come from the capture).
struct DestinationWord {
  uint32_t transfer = 0;     // index into CapturePhase::transfers
  uint32_t destination = 0;  // index into Transfer::destinations
  uint32_t word = 0;         // 0 .. words-1
  bool operator==(const DestinationWord&) const = default;
};

uint64_t count_destination_words(const arch::CapturePhase& phase);

// `samples` words chosen by `seed` (every word when `samples` is empty or at least the
// phase's destination word count). Round-robin over the destination tiles in a seeded
// shuffled order; within a tile, a seeded word not yet taken. Same inputs, same list.
std::vector<DestinationWord> sample_destination_words(const arch::CapturePhase& phase, uint64_t seed,
                                                      std::optional<uint64_t> samples);

// The token the word must hold after iteration `iteration` of the phase (the iteration's
// salted token of its source word: formats/token.hpp).
uint32_t expected_token(const arch::CapturePhase& phase, const DestinationWord& word, uint32_t iteration,
                        uint64_t seed);

// splitmix64: a small, fully specified generator, so samples are identical on every
// platform (std:: distributions are not).
class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}
  uint64_t next();
  uint64_t below(uint64_t bound);  // uniform in [0, bound), bound > 0

 private:
  uint64_t state_;
};

}  // namespace lockstep::replay
