#include "replay/point_check.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "formats/package.hpp"
#include "formats/token.hpp"

namespace lockstep::replay {

PayloadChecker::PayloadChecker(const arch::CapturePhase& phase, const PointOptions& options,
                               PointResult& result)
    : phase_(phase), options_(options), result_(result) {
  if (options.samples) sample_ = sample_destination_words(phase, options.seed, options.samples);
}

void PayloadChecker::after(const sim::PhaseExecution& execution, sim::MemoryView& memory) {
  if (execution.phase != phase_.id) return;
  ++result_.executions;
  result_.horizon = std::max(result_.horizon, execution.horizon);
  if (execution.iteration >= phase_.iterations) {
    record_error("simulator reported iteration " + std::to_string(execution.iteration) +
                 " of a phase with " + std::to_string(phase_.iterations));
    return;
  }
  if (options_.samples) {
    check_sample(execution.iteration, memory);
  } else {
    check_all(execution.iteration, memory);
  }
  if (execution.iteration + 1 < phase_.iterations) refill_sources(execution.iteration + 1, memory);
  if (options_.payload_digest && execution.iteration + 1 == phase_.iterations) {
    digest(memory);
  }
}

void PayloadChecker::compare(uint32_t tile, uint32_t address, uint32_t iteration, uint32_t expected,
                             uint32_t found) {
  ++result_.words_checked;
  if (expected == found) return;
  ++result_.mismatch_count;
  if (result_.mismatches.size() < options_.max_mismatches) {
    result_.mismatches.push_back({tile, address, iteration, expected, found});
  }
}

uint32_t PayloadChecker::word_at(const uint8_t* bytes) {
  return uint32_t(bytes[0]) | uint32_t(bytes[1]) << 8 | uint32_t(bytes[2]) << 16 |
         uint32_t(bytes[3]) << 24;
}

void PayloadChecker::check_sample(uint32_t iteration, const sim::MemoryView& memory) {
  uint8_t bytes[4];
  for (const auto& w : sample_) {
    const auto& d = phase_.transfers[w.transfer].destinations[w.destination];
    const uint32_t address = d.address + 4 * w.word;
    memory.read(d.tile, address, 4, bytes);
    compare(d.tile, address, iteration, expected_token(phase_, w, iteration, options_.seed),
            word_at(bytes));
  }
}

void PayloadChecker::check_all(uint32_t iteration, const sim::MemoryView& memory) {
  for (const auto& transfer : phase_.transfers) {
    if (transfer.words == 0) continue;
    tokens(transfer.source_tile, transfer.source_addresses[iteration], transfer.words, iteration);
    for (const auto& dest : transfer.destinations) {
      if (memory.equal(dest.tile, dest.address, transfer.words * 4, token_bytes_.data())) {
        result_.words_checked += transfer.words;
        continue;
      }
      buffer_.resize(token_bytes_.size());
      memory.read(dest.tile, dest.address, transfer.words * 4, buffer_.data());
      for (uint32_t k = 0; k < transfer.words; ++k) {
        compare(dest.tile, dest.address + 4 * k, iteration, word_at(&token_bytes_[size_t(k) * 4]),
                word_at(&buffer_[size_t(k) * 4]));
      }
    }
  }
}

// The next iteration's sources get that iteration's tokens, as a host harness would write
// them between iterations (sources never share memory with destinations: the capture
// validation refuses that).
void PayloadChecker::refill_sources(uint32_t iteration, sim::MemoryView& memory) {
  for (const auto& transfer : phase_.transfers) {
    if (transfer.words == 0) continue;
    tokens(transfer.source_tile, transfer.source_addresses[iteration], transfer.words, iteration);
    memory.write(transfer.source_tile, transfer.source_addresses[iteration], transfer.words * 4,
                 token_bytes_.data());
  }
}

// token_bytes_ = the little-endian tokens of `words` source words from `address` on, in
// `iteration`.
void PayloadChecker::tokens(uint32_t tile, uint32_t address, uint32_t words, uint32_t iteration) {
  static_assert(std::endian::native == std::endian::little, "SRAM words are little-endian");
  token_words_.resize(words);
  arch::payload_tokens(options_.seed, tile, address, iteration, token_words_);
  token_bytes_.resize(size_t(words) * 4);
  std::memcpy(token_bytes_.data(), token_words_.data(), token_bytes_.size());
}

// Transfers in capture order, destinations in capture order: a fixed, canonical order.
void PayloadChecker::digest(const sim::MemoryView& memory) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const auto& transfer : phase_.transfers) {
    buffer_.resize(size_t(transfer.words) * 4);
    for (const auto& dest : transfer.destinations) {
      if (transfer.words == 0) continue;
      memory.read(dest.tile, dest.address, transfer.words * 4, buffer_.data());
      h = arch::fnv1a64(buffer_.data(), buffer_.size(), h);
    }
  }
  result_.payload_digest = h;
}

void PayloadChecker::record_error(const std::string& what) {
  if (result_.error.empty()) {
    result_.error = what;
    result_.error_exit_code = 3;
  }
}

}  // namespace lockstep::replay
