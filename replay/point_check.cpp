#include "replay/point_check.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include "formats/package.hpp"
#include "formats/token.hpp"
#include "io/parallel.hpp"

namespace lockstep::replay {

PayloadChecker::PayloadChecker(const arch::CapturePhase& phase, const PointOptions& options, PointResult& result)
    : phase_(phase), options_(options), result_(result) {
  // Transfers grouped by source tile, capture order within a tile.
  by_source_ = arch::group_by(phase_.transfers.size(), [&](size_t t) { return phase_.transfers[t].source_tile; });
  // What a transfer's tokens need, in dense arrays: the checks visit transfers in destination
  // order, and each look-up into a transfer's own vectors missed in cache.
  const size_t transfers = phase_.transfers.size();
  sources_.resize(transfers);
  source_addresses_.resize(transfers * phase_.iterations);
  for (size_t t = 0; t < transfers; ++t) {
    const auto& transfer = phase_.transfers[t];
    sources_[t] = {transfer.source_tile, transfer.words};
    for (uint32_t i = 0; i < phase_.iterations; ++i)
      source_addresses_[i * transfers + t] = transfer.source_addresses[i];
  }
  same_sources_.assign(phase_.iterations, 0);
  for (uint32_t i = 1; i < phase_.iterations; ++i) {
    same_sources_[i] = std::equal(source_addresses_.begin() + (i - 1) * transfers,
                                  source_addresses_.begin() + i * transfers, source_addresses_.begin() + i * transfers);
  }
  refill_runs_.resize(by_source_.size());
  if (options.samples) {
    sample_ = sample_destination_words(phase, options.seed, options.samples);
  } else {
    plan_checks();
    make_first_tokens(0);
  }
}

void PayloadChecker::make_first_tokens(uint32_t iteration) {
  first_tokens_.resize(sources_.size());
  for (uint32_t t = 0; t < sources_.size(); ++t) first_tokens_[t] = first_token(t, iteration);
  first_tokens_iteration_ = iteration;
}

void PayloadChecker::plan_checks() {
  for (uint32_t t = 0; t < phase_.transfers.size(); ++t) {
    const auto& transfer = phase_.transfers[t];
    if (transfer.words == 0) continue;
    for (uint32_t d = 0; d < transfer.destinations.size(); ++d) {
      ranges_.push_back({transfer.destinations[d].tile, transfer.destinations[d].address, t, d});
      destination_words_ += transfer.words;
    }
  }
  std::sort(ranges_.begin(), ranges_.end(), [](const DestinationRange& a, const DestinationRange& b) {
    return a.tile != b.tile ? a.tile < b.tile : a.address < b.address;
  });
  const uint32_t tiles = ranges_.empty() ? 0 : ranges_.back().tile + 1;
  tile_ranges_.assign(tiles + 1, 0);
  for (const auto& r : ranges_) ++tile_ranges_[r.tile + 1];
  for (uint32_t t = 0; t < tiles; ++t) tile_ranges_[t + 1] += tile_ranges_[t];
  checked_in_.assign(tiles, 0);
}

// Transfer t's tokens in `iteration`, made in `out`.
void PayloadChecker::make_tokens(uint32_t t, uint32_t iteration, std::span<uint32_t> out) const {
  arch::tokens_following(first_token(t, iteration), out);
}

// The first of them: the rest follow it (arch::tokens_following), so a check compares runs.
uint32_t PayloadChecker::first_token(uint32_t t, uint32_t iteration) const {
  return arch::payload_token(options_.seed, sources_[t].tile, source_address(t, iteration), iteration);
}

// A tile's ranges checked in its copying task: the words, or the runs of tokens the copies laid
// there, are in cache, where after() would read them from memory once every receiver is done
// (docs/performance.md, rounds twenty-eight and thirty-two).
void PayloadChecker::landed(uint32_t phase, uint32_t iteration, uint32_t tile, const sim::MemoryView& memory) {
  if (phase != phase_.id || options_.samples || iteration >= phase_.iterations || tile >= checked_in_.size()) return;
  for (uint32_t i = tile_ranges_[tile]; i < tile_ranges_[tile + 1]; ++i) check_range(i, iteration, memory);
  checked_in_[tile] = execution_mark_;
}

void PayloadChecker::after(const sim::PhaseExecution& execution, sim::MemoryView& memory) {
  if (execution.phase != phase_.id) return;
  ++result_.executions;
  result_.horizon = std::max(result_.horizon, execution.horizon);
  if (execution.iteration >= phase_.iterations) {
    record_error("simulator reported iteration " + std::to_string(execution.iteration) + " of a phase with " +
                 std::to_string(phase_.iterations));
    return;
  }
  if (options_.samples) {
    check_sample(execution.iteration, memory);
  } else {
    check_all(execution.iteration, memory);
  }
  const bool last = execution.iteration + 1 == phase_.iterations;
  if (!last) refill_sources(execution.iteration + 1, memory);
  if (!last && !options_.samples) make_first_tokens(execution.iteration + 1);
  if (options_.payload_digest && last) digest(memory);
  ++execution_mark_;
}

void PayloadChecker::compare(uint32_t tile, uint32_t address, uint32_t iteration, uint32_t expected, uint32_t found) {
  ++result_.words_checked;
  if (expected == found) return;
  ++result_.mismatch_count;
  if (result_.mismatches.size() < options_.max_mismatches) {
    result_.mismatches.push_back({tile, address, iteration, expected, found});
  }
}

uint32_t PayloadChecker::word_at(const uint8_t* bytes) {
  return uint32_t(bytes[0]) | uint32_t(bytes[1]) << 8 | uint32_t(bytes[2]) << 16 | uint32_t(bytes[3]) << 24;
}

void PayloadChecker::check_sample(uint32_t iteration, const sim::MemoryView& memory) {
  uint8_t bytes[4];
  for (const auto& w : sample_) {
    const auto& d = phase_.transfers[w.transfer].destinations[w.destination];
    const uint32_t address = d.address + 4 * w.word;
    memory.read(d.tile, address, 4, bytes);
    compare(d.tile, address, iteration, expected_token(phase_, w, iteration, options_.seed), word_at(bytes));
  }
}

// Every destination range not checked as it landed, compared with its transfer's tokens of
// `iteration`. The ranges are sorted by tile and address, so the compares stream through each
// tile's SRAM.
void PayloadChecker::check_all(uint32_t iteration, const sim::MemoryView& memory) {
  tbb::parallel_for(tbb::blocked_range<size_t>(0, ranges_.size(), 1024), [&](const tbb::blocked_range<size_t>& block) {
    for (size_t i = block.begin(); i != block.end(); ++i) {
      if (checked_in_[ranges_[i].tile] != execution_mark_) check_range(i, iteration, memory);
    }
  });
  report_failures(iteration, memory);
}

// Range i compared with its transfer's tokens of `iteration` (a run that follows the first one's,
// so no token is made here); a range that differs is listed for report_failures.
void PayloadChecker::check_range(size_t i, uint32_t iteration, const sim::MemoryView& memory) {
  const auto& r = ranges_[i];
  const uint32_t first =
      iteration == first_tokens_iteration_ ? first_tokens_[r.transfer] : first_token(r.transfer, iteration);
  if (!memory.holds_tokens(r.tile, r.address, sources_[r.transfer].words, first)) {
    failing_.local().push_back({r.transfer, r.destination});
  }
}

// The next iteration's sources get that iteration's tokens, as a host harness would write
// them between iterations (sources never share memory with destinations: the capture
// validation refuses that). Source tiles in parallel (one writer per tile), each tile's
// sources in address order with touching ones as one run, so that the simulator can make
// whole pages of them only when read (sim::MemoryView::write_tokens).
void PayloadChecker::refill_sources(uint32_t iteration, sim::MemoryView& memory) {
  const bool merged = refill_runs_iteration_ == iteration - 1 && same_sources_[iteration];
  refill_runs_iteration_ = iteration;
  tbb::parallel_for(size_t{0}, by_source_.size(), [&](size_t g) {
    if (!merged) merge_source_runs(g, iteration);
    if (refill_runs_[g].empty()) return;
    const uint32_t tile = sources_[by_source_.of(g).front()].tile;
    for (const auto& [begin, end] : refill_runs_[g]) {
      memory.write_tokens(tile, begin, static_cast<uint32_t>(end - begin), options_.seed, iteration);
    }
  });
}

// Source tile `group`'s ranges of `iteration` in address order, touching or overlapping ones as
// one run (the same tokens), into refill_runs_[group].
void PayloadChecker::merge_source_runs(size_t group, uint32_t iteration) {
  auto& runs = refill_runs_[group];
  runs.clear();
  for (const uint32_t t : by_source_.of(group)) {
    if (sources_[t].words == 0) continue;
    runs.emplace_back(source_address(t, iteration), uint64_t{source_address(t, iteration)} + 4 * sources_[t].words);
  }
  std::sort(runs.begin(), runs.end());
  size_t kept = 0;
  for (size_t k = 0; k < runs.size(); ++k) {
    if (kept > 0 && runs[k].first <= runs[kept - 1].second) {
      runs[kept - 1].second = std::max(runs[kept - 1].second, runs[k].second);
    } else {
      runs[kept++] = runs[k];
    }
  }
  runs.resize(kept);
}

// The destinations that differ are walked word by word in capture order, so the counts and
// the mismatches listed do not depend on the threads.
void PayloadChecker::report_failures(uint32_t iteration, const sim::MemoryView& memory) {
  std::vector<FailedDestination> failed;
  for (auto& list : failing_) {
    failed.insert(failed.end(), list.begin(), list.end());
    list.clear();
  }
  std::sort(failed.begin(), failed.end());
  uint64_t failed_words = 0;
  std::vector<uint32_t> expected;
  for (const auto& [t, d] : failed) {
    const auto& dest = phase_.transfers[t].destinations[d];
    expected.resize(sources_[t].words);
    make_tokens(t, iteration, expected);
    failed_words += expected.size();
    bytes_.resize(expected.size() * 4);
    memory.read(dest.tile, dest.address, uint32_t(expected.size() * 4), bytes_.data());
    for (uint32_t k = 0; k < expected.size(); ++k) {
      compare(dest.tile, dest.address + 4 * k, iteration, expected[k], word_at(&bytes_[size_t(k) * 4]));
    }
  }
  result_.words_checked += destination_words_ - failed_words;
}

// Transfers in capture order, destinations in capture order: a fixed, canonical order.
void PayloadChecker::digest(const sim::MemoryView& memory) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const auto& transfer : phase_.transfers) {
    bytes_.resize(size_t(transfer.words) * 4);
    for (const auto& dest : transfer.destinations) {
      if (transfer.words == 0) continue;
      memory.read(dest.tile, dest.address, transfer.words * 4, bytes_.data());
      h = arch::fnv1a64(bytes_.data(), bytes_.size(), h);
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
