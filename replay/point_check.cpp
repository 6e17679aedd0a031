#include "replay/point_check.hpp"

#include <algorithm>

#include "arch/package.hpp"

namespace lockstep::replay {

PayloadChecker::PayloadChecker(const arch::CapturePhase& phase, const PointOptions& options,
                               PointResult& result)
    : phase_(phase), options_(options), result_(result) {
  if (options.samples) sample_ = sample_destination_words(phase, options.seed, options.samples);
}

void PayloadChecker::after(const sim::PhaseExecution& execution, const sim::MemoryView& memory) {
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
  for (uint32_t t = 0; t < phase_.transfers.size(); ++t) {
    const auto& transfer = phase_.transfers[t];
    buffer_.resize(size_t(transfer.words) * 4);
    for (uint32_t d = 0; d < transfer.destinations.size(); ++d) {
      const auto& dest = transfer.destinations[d];
      if (transfer.words == 0) continue;
      memory.read(dest.tile, dest.address, transfer.words * 4, buffer_.data());
      for (uint32_t k = 0; k < transfer.words; ++k) {
        compare(dest.tile, dest.address + 4 * k, iteration,
                expected_token(phase_, {t, d, k}, iteration, options_.seed),
                word_at(&buffer_[size_t(k) * 4]));
      }
    }
  }
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
