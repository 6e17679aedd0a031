#include "model/token_pages.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include "formats/token.hpp"

namespace lockstep::model {

TokenPages::TokenPages(size_t pages, size_t pages_per_slot, uint32_t sram_base)
    : pages_(pages), pages_per_slot_(pages_per_slot), sram_base_(sram_base) {}

bool TokenPages::adopt(uint64_t seed) {
  // Every deferred write asks, from both cores during a replay's refill: once the tables are
  // made, without the lock (lock and unlock were 1.4% of a replay's samples).
  if (adopted_.load(std::memory_order_acquire)) return *seed_ == seed;
  make_tables();
  const std::lock_guard lock(seed_mutex_);
  if (seed_) return *seed_ == seed;
  seed_ = seed;
  adopted_.store(true, std::memory_order_release);
  return true;
}

void TokenPages::make_tables() {
  if (tables_.load(std::memory_order_acquire)) return;
  const std::lock_guard lock(seed_mutex_);
  if (tables_.load(std::memory_order_relaxed)) return;
  entry_ = std::make_unique<std::atomic<uint32_t>[]>(pages_);
  // Read only where an entry points, so never before written: no pass to zero them.
  pool_ = std::make_unique_for_overwrite<Record[]>(pages_);
  tables_.store(true, std::memory_order_release);
}

namespace {

using Range = TokenPages::Range;

uint32_t words_between(uint32_t lo, uint32_t hi) { return (hi - lo) / 4; }

// What run `r` holds at byte `to` of its page: its token so many words on, or (a run of bytes)
// where in the store its byte so many bytes on lies.
uint32_t first_at(const Range& r, uint32_t to, bool bytes) {
  return bytes ? r.first + (to - r.lo) : arch::token_after(r.first, words_between(r.lo, to));
}

// Whether run `next` goes on where run `r` ends: it starts at r's end with what r would hold
// there, so the two read as one run.
bool goes_on(const Range& r, const Range& next, bool bytes) {
  return r.hi == next.lo && first_at(r, next.lo, bytes) == next.first;
}

// The ranges of a page once bytes [lo, hi) hold `runs` and zero between them: what `current`
// holds outside [lo, hi) stays, and a run that the next one's tokens (or store bytes, on a page
// of `bytes`) go on from joins it. None when more than kRanges would be left. Both lists are
// ascending, so this is one merge: the current ranges' parts below lo, the runs, the current
// ranges' parts above hi.
std::optional<TokenPages::Ranges> lay_over(const TokenPages::Ranges& current, uint32_t lo, uint32_t hi,
                                           std::span<const Range> runs, bool bytes = false) {
  TokenPages::Ranges out{};
  size_t kept = 0;
  const auto add = [&](Range r) {
    if (kept > 0 && goes_on(out[kept - 1], r, bytes)) {
      out[kept - 1].hi = r.hi;  // the tokens go on: one run
      return true;
    }
    if (kept == TokenPages::kRanges) return false;
    out[kept++] = r;
    return true;
  };
  size_t i = 0;
  for (; i < current.size() && current[i].lo != current[i].hi && current[i].lo < lo; ++i) {
    if (!add({current[i].lo, static_cast<uint16_t>(std::min<uint32_t>(current[i].hi, lo)), current[i].first}))
      return std::nullopt;
  }
  if (i > 0 && current[i - 1].hi > hi) --i;  // a range around [lo, hi) keeps its part above hi too
  for (const Range& r : runs) {
    if (r.lo != r.hi && !add(r)) return std::nullopt;
  }
  for (; i < current.size() && current[i].lo != current[i].hi; ++i) {
    const Range& r = current[i];
    if (r.hi <= hi) continue;
    const auto from = static_cast<uint16_t>(std::max<uint32_t>(r.lo, hi));
    if (!add({from, r.hi, first_at(r, from, bytes)})) return std::nullopt;
  }
  return out;
}

// A run laid exactly over one of `current`'s, whose tokens go on from neither neighbour's nor into
// the next one's, takes its place: what a replay's refill and copies do in every iteration after
// the first (the same places, other tokens), without merging the whole record again.
bool replace_run(TokenPages::Ranges& current, uint32_t lo, uint32_t hi, const Range& run) {
  if (run.lo != lo || run.hi != hi) return false;
  for (size_t i = 0; i < current.size() && current[i].lo != current[i].hi && current[i].lo <= lo; ++i) {
    if (current[i].lo != lo || current[i].hi != hi) continue;
    const Range* before = i > 0 ? &current[i - 1] : nullptr;
    const Range* after = i + 1 < current.size() && current[i + 1].lo != current[i + 1].hi ? &current[i + 1] : nullptr;
    if ((before != nullptr && goes_on(*before, run, false)) || (after != nullptr && goes_on(run, *after, false)))
      return false;
    current[i].first = run.first;
    return true;
  }
  return false;
}

}  // namespace

bool TokenPages::lay(size_t page, uint32_t lo, uint32_t hi, std::span<const Range> runs, bool untouched) {
  const uint32_t entry = entry_[page].load(std::memory_order_relaxed);
  if (kind(entry) != kTokens && !(kind(entry) == kPlain && untouched)) return false;
  if (kind(entry) == kTokens && runs.size() == 1 && replace_run(pool_[entry >> kKindBits].runs, lo, hi, runs.front()))
    return true;
  // A plain page has no record yet: it holds no run.
  const auto laid = lay_over(kind(entry) == kTokens ? pool_[entry >> kKindBits].runs : Ranges{}, lo, hi, runs);
  if (!laid) return false;
  set_runs(page, entry, kTokens, *laid);
  return true;
}

bool TokenPages::lay_bytes(size_t page, uint32_t lo, uint32_t hi, const uint8_t* data, bool untouched) {
  make_tables();
  // Touched only as far as it is handed out.
  std::call_once(store_made_, [this] { store_ = std::make_unique_for_overwrite<uint8_t[]>(kStoreBytes); });
  const uint32_t entry = entry_[page].load(std::memory_order_relaxed);
  if (kind(entry) != kBytes && !(kind(entry) == kPlain && untouched)) return false;
  if (kind(entry) == kBytes) {
    for (const Range& r : pool_[entry >> kKindBits].runs) {
      if (r.lo == r.hi || r.lo > lo) break;
      if (hi <= r.hi) {  // a run holds them all: their bytes are its own, so written in place
        std::memcpy(&store_[r.first + (lo - r.lo)], data, hi - lo);
        return true;
      }
    }
  }
  // Counted even when it does not fit, so the store is never handed out past its end.
  const uint64_t at = store_used_.fetch_add(hi - lo, std::memory_order_relaxed);
  if (at + (hi - lo) > kStoreBytes) return false;
  const Range run{static_cast<uint16_t>(lo), static_cast<uint16_t>(hi), static_cast<uint32_t>(at)};
  const auto laid =
      lay_over(kind(entry) == kBytes ? pool_[entry >> kKindBits].runs : Ranges{}, lo, hi, {&run, 1}, true);
  if (!laid) return false;
  std::memcpy(&store_[at], data, hi - lo);
  set_runs(page, entry, kBytes, *laid);
  return true;
}

void TokenPages::set_runs(size_t page, uint32_t entry, uint32_t kind_of_runs, const Ranges& runs) {
  if (kind(entry) == kind_of_runs) {
    pool_[entry >> kKindBits].runs = runs;
  } else {
    const uint32_t record = pool_used_.fetch_add(1, std::memory_order_relaxed);
    pool_[record].runs = runs;
    entry_[page].store(record << kKindBits | kind_of_runs, std::memory_order_release);
  }
  // After the tables, which readers then see. Stored once: both cores storing it for every
  // page of a refill fought over its cache line.
  if (!any_.load(std::memory_order_relaxed)) any_.store(true, std::memory_order_release);
}

bool TokenPages::defer(size_t page, uint32_t tile, uint32_t lo, uint32_t hi, uint32_t iteration, bool untouched) {
  const auto address = static_cast<uint32_t>(sram_base_ + (page % pages_per_slot_) * kPageBytes + lo);
  const Range run{static_cast<uint16_t>(lo), static_cast<uint16_t>(hi),
                  arch::payload_token(*seed_, tile, address, iteration)};
  return lay(page, lo, hi, {&run, 1}, untouched);
}

size_t TokenPages::runs_within(size_t page, size_t offset, size_t bytes, std::ptrdiff_t shift, CopiedRuns& out,
                               size_t count) const {
  for (const Range& r : runs_of(page)) {
    if (r.lo == r.hi) break;
    const size_t lo = std::max<size_t>(r.lo, offset), hi = std::min<size_t>(r.hi, offset + bytes);
    if (lo >= hi) continue;
    const Range moved{static_cast<uint16_t>(std::ptrdiff_t(lo) + shift),
                      static_cast<uint16_t>(std::ptrdiff_t(hi) + shift),
                      arch::token_after(r.first, words_between(r.lo, static_cast<uint32_t>(lo)))};
    if (count > 0 && goes_on(out[count - 1], moved, false)) {
      out[count - 1].hi = moved.hi;
    } else {
      out[count++] = moved;
    }
  }
  return count;
}

void TokenPages::bytes(size_t page, size_t offset, std::span<uint8_t> out) const {
  const size_t end = offset + out.size();
  std::fill(out.begin(), out.end(), uint8_t{0});
  for (const Range& r : runs_of(page)) {
    if (r.lo == r.hi) break;
    const size_t lo = std::max<size_t>(r.lo, offset), hi = std::min<size_t>(r.hi, end);
    if (lo < hi) std::memcpy(out.data() + (lo - offset), &store_[r.first + (lo - r.lo)], hi - lo);
  }
}

void TokenPages::words(size_t page, size_t offset, std::span<uint32_t> out) const {
  if (holds_bytes(page)) {
    bytes(page, offset, {reinterpret_cast<uint8_t*>(out.data()), out.size() * 4});
    return;
  }
  const size_t begin = offset, end = offset + out.size() * 4;
  const auto word = [&](size_t byte) { return out.begin() + static_cast<std::ptrdiff_t>((byte - begin) / 4); };
  size_t at = begin;  // zero up to each range, its tokens, zero after the last
  for (const Range& r : runs_of(page)) {
    if (r.lo == r.hi) break;
    const size_t lo = std::clamp<size_t>(r.lo, at, end), hi = std::clamp<size_t>(r.hi, lo, end);
    if (lo == hi) continue;
    std::fill(word(at), word(lo), 0u);
    arch::tokens_following(arch::token_after(r.first, words_between(r.lo, static_cast<uint32_t>(lo))),
                           out.subspan((lo - begin) / 4, (hi - lo) / 4));
    at = hi;
  }
  std::fill(word(at), out.end(), 0u);
}

bool TokenPages::holds(size_t page, size_t offset, size_t words, uint32_t first) const {
  if (words == 0) return true;
  const size_t end = offset + 4 * words;
  const bool tokens = holds_token_runs(page);  // runs of bytes are compared word by word, below
  for (const Range& r : runs_of(page)) {
    if (!tokens || r.lo == r.hi || r.lo > offset) break;
    // Runs lie apart, so only one can hold the whole span: any word outside a run reads zero,
    // which a token may be, so that case is compared word by word.
    if (r.hi >= end) return arch::token_after(r.first, words_between(r.lo, static_cast<uint32_t>(offset))) == first;
  }
  std::array<uint32_t, 256> made;  // the page's words, a block at a time
  for (size_t done = 0; done < words; done += made.size()) {
    const size_t n = std::min(made.size(), words - done);
    this->words(page, offset + 4 * done, {made.data(), n});
    const auto* bytes = reinterpret_cast<const uint8_t*>(made.data());
    if (!arch::holds_tokens_following(bytes, n, arch::token_after(first, static_cast<uint32_t>(done)))) return false;
  }
  return true;
}

void TokenPages::make_ready(size_t page, uint8_t* bytes) {
  uint32_t entry = entry_[page].load(std::memory_order_acquire);
  const uint32_t was = kind(entry), record = entry >> kKindBits << kKindBits;
  if (was >= kTokens && entry_[page].compare_exchange_strong(entry, record | kMaking, std::memory_order_acquire)) {
    // The rest of the page reads as zero already; the page is 4 KiB-aligned, so its words are too.
    for (const Range& r : pool_[entry >> kKindBits].runs) {
      if (r.lo == r.hi) break;
      if (was == kBytes) {
        std::memcpy(bytes + r.lo, &store_[r.first], r.hi - r.lo);
      } else {
        arch::tokens_following(r.first, {reinterpret_cast<uint32_t*>(bytes + r.lo), words_between(r.lo, r.hi)});
      }
    }
    entry_[page].store(record | kMade, std::memory_order_release);
    return;
  }
  while (!ready(page)) std::this_thread::yield();
}

}  // namespace lockstep::model
