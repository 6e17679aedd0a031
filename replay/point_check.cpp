#include "replay/point_check.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "formats/package.hpp"
#include "formats/token.hpp"
#include "io/parallel.hpp"

namespace lockstep::replay {

PayloadChecker::PayloadChecker(const arch::CapturePhase& phase, const PointOptions& options,
                               PointResult& result)
    : phase_(phase), options_(options), result_(result) {
  plan_refills();
  if (options.samples) {
    sample_ = sample_destination_words(phase, options.seed, options.samples);
  } else {
    plan_checks();
  }
}

void PayloadChecker::plan_checks() {
  uint32_t order = 0;
  for (size_t t = 0; t < phase_.transfers.size(); ++t) {
    const auto& transfer = phase_.transfers[t];
    for (const auto& dest : transfer.destinations) {
      if (transfer.words != 0) {
        ranges_.push_back({dest.tile, dest.address, transfer.words, order, transfer_offset_[t]});
        destination_words_ += transfer.words;
      }
      ++order;
    }
  }
  std::sort(ranges_.begin(), ranges_.end(), [](const DestinationRange& a, const DestinationRange& b) {
    return a.tile != b.tile ? a.tile < b.tile : a.address < b.address;
  });
}

void PayloadChecker::plan_refills() {
  transfer_offset_.resize(phase_.transfers.size());
  for (size_t t = 0; t < phase_.transfers.size(); ++t) {
    transfer_offset_[t] = words_per_iteration_;
    words_per_iteration_ += phase_.transfers[t].words;
  }
  // Transfers grouped by source tile, capture order within a tile.
  by_source_ = arch::group_by(phase_.transfers.size(), [&](size_t t) { return phase_.transfers[t].source_tile; });
}

// Transfer t's source tokens in `iteration`, written into its place in expected_.
std::span<const uint32_t> PayloadChecker::generate(uint32_t t, uint32_t iteration) {
  const auto& transfer = phase_.transfers[t];
  const std::span<uint32_t> tokens(expected_.data() + transfer_offset_[t], transfer.words);
  arch::payload_tokens(options_.seed, transfer.source_tile, transfer.source_addresses[iteration], iteration, tokens);
  return tokens;
}

// expected_ = every transfer's source tokens in `iteration` (computed once for the refill
// before the iteration and the check after it).
void PayloadChecker::expect(uint32_t iteration) {
  if (expected_iteration_ == int64_t(iteration)) return;
  expected_.resize(words_per_iteration_);
  tbb::parallel_for(uint32_t{0}, static_cast<uint32_t>(phase_.transfers.size()), [&](uint32_t t) { generate(t, iteration); });
  expected_iteration_ = iteration;
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
  static_assert(std::endian::native == std::endian::little, "SRAM words are little-endian");
  expect(iteration);
  const auto* expected = reinterpret_cast<const uint8_t*>(expected_.data());
  // The ranges compare in parallel; the failing ones are then walked word by word in capture
  // order, so the counts and the mismatches listed do not depend on the threads.
  tbb::enumerable_thread_specific<std::vector<uint32_t>> failing;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, ranges_.size(), 4096),
                    [&](const tbb::blocked_range<size_t>& block) {
                      for (size_t i = block.begin(); i != block.end(); ++i) {
                        const auto& r = ranges_[i];
                        if (!memory.equal(r.tile, r.address, r.words * 4, expected + r.offset * 4)) {
                          failing.local().push_back(uint32_t(i));
                        }
                      }
                    });
  std::vector<uint32_t> failed;
  for (auto& list : failing) failed.insert(failed.end(), list.begin(), list.end());
  std::sort(failed.begin(), failed.end(),
            [&](uint32_t a, uint32_t b) { return ranges_[a].order < ranges_[b].order; });
  uint64_t failed_words = 0;
  for (uint32_t i : failed) {
    const auto& r = ranges_[i];
    failed_words += r.words;
    buffer_.resize(size_t(r.words) * 4);
    memory.read(r.tile, r.address, r.words * 4, buffer_.data());
    for (uint32_t k = 0; k < r.words; ++k) {
      compare(r.tile, r.address + 4 * k, iteration, expected_[r.offset + k],
              word_at(&buffer_[size_t(k) * 4]));
    }
  }
  result_.words_checked += destination_words_ - failed_words;
}

// The next iteration's sources get that iteration's tokens, as a host harness would write
// them between iterations (sources never share memory with destinations: the capture
// validation refuses that).
void PayloadChecker::refill_sources(uint32_t iteration, sim::MemoryView& memory) {
  // Source tiles in parallel, each tile's transfers in capture order (one writer per tile).
  // Each transfer's tokens go into expected_ (for the check after the iteration) and, while
  // still in cache, into its source words.
  expected_.resize(words_per_iteration_);
  tbb::parallel_for(size_t{0}, by_source_.size(), [&](size_t g) {
    for (const uint32_t t : by_source_.of(g)) {
      const auto& transfer = phase_.transfers[t];
      if (transfer.words == 0) continue;
      const std::span<const uint32_t> tokens = generate(t, iteration);
      memory.write(transfer.source_tile, transfer.source_addresses[iteration], transfer.words * 4,
                   reinterpret_cast<const uint8_t*>(tokens.data()));
    }
  });
  expected_iteration_ = iteration;
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
