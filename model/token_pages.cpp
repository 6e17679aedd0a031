#include "model/token_pages.hpp"

#include <algorithm>
#include <optional>
#include <thread>

#include "formats/token.hpp"

namespace lockstep::model {

TokenPages::TokenPages(size_t pages, size_t pages_per_slot, uint32_t sram_base)
    : pages_(pages), pages_per_slot_(pages_per_slot), sram_base_(sram_base) {}

bool TokenPages::adopt(uint64_t seed) {
  // Every deferred write asks, from both cores during a replay's refill: once the tables are
  // made, without the lock (lock and unlock were 1.4% of a replay's samples).
  if (adopted_.load(std::memory_order_acquire)) return *seed_ == seed;
  const std::lock_guard lock(seed_mutex_);
  if (seed_) return *seed_ == seed;
  seed_ = seed;
  slot_tile_.assign(pages_per_slot_ == 0 ? 0 : pages_ / pages_per_slot_, 0);
  state_ = std::make_unique<std::atomic<uint8_t>[]>(pages_);
  // Read only where the state says deferred, so never before written: no pass to zero them.
  ranges_ = std::make_unique_for_overwrite<Ranges[]>(pages_);
  adopted_.store(true, std::memory_order_release);
  return true;
}

namespace {

// The ranges of a page's tokens once `added` is laid over `current` (one or two ranges,
// ascending, apart; none on a page untouched so far). A range of its iteration that it touches
// or overlaps joins it (a token is a function of its address); what it overlaps of another
// iteration's range goes, the rest of that range stays. More than two ranges cannot be held.
std::optional<TokenPages::Ranges> lay_over(const TokenPages::Ranges& current, TokenPages::Range added) {
  TokenPages::Range kept[4];
  size_t count = 0;
  for (const TokenPages::Range& r : current) {
    if (r.lo == r.hi) continue;
    if (r.iteration == added.iteration && r.lo <= added.hi && added.lo <= r.hi) {
      added.lo = std::min(added.lo, r.lo);
      added.hi = std::max(added.hi, r.hi);
      continue;
    }
    if (r.lo < added.lo) kept[count++] = {r.lo, std::min(r.hi, added.lo), r.iteration};
    if (r.hi > added.hi) kept[count++] = {std::max(r.lo, added.hi), r.hi, r.iteration};
  }
  if (count > 1) return std::nullopt;
  TokenPages::Ranges out{added, TokenPages::Range{}};
  if (count == 1) {
    out[1] = kept[0];
    if (out[1].lo < out[0].lo) std::swap(out[0], out[1]);
  }
  return out;
}

}  // namespace

bool TokenPages::defer(size_t page, uint32_t tile, uint32_t lo, uint32_t hi, uint32_t iteration, bool untouched) {
  const uint8_t state = state_[page].load(std::memory_order_relaxed);
  if (state != kDeferred && !(state == kPlain && untouched)) return false;
  // A plain page's record was never written: it holds no range yet.
  const auto laid = lay_over(state == kDeferred ? ranges_[page] : Ranges{},
                             {static_cast<uint16_t>(lo), static_cast<uint16_t>(hi), iteration});
  if (!laid) return false;
  ranges_[page] = *laid;
  slot_tile_[page / pages_per_slot_] = tile;
  state_[page].store(kDeferred, std::memory_order_relaxed);
  // After the tables, which readers then see. Stored once: both cores storing it for every
  // page of a refill fought over its cache line.
  if (!any_.load(std::memory_order_relaxed)) any_.store(true, std::memory_order_release);
  return true;
}

void TokenPages::words(size_t page, size_t offset, std::span<uint32_t> out) const {
  const size_t begin = offset, end = offset + out.size() * 4;
  const uint32_t tile = slot_tile_[page / pages_per_slot_];
  const auto page_address = static_cast<uint32_t>(sram_base_ + (page % pages_per_slot_) * kPageBytes);
  const auto word = [&](size_t byte) { return out.begin() + static_cast<std::ptrdiff_t>((byte - begin) / 4); };
  size_t at = begin;  // zero up to each range, its tokens, zero after the last
  for (const Range& r : ranges_[page]) {
    const size_t lo = std::clamp<size_t>(r.lo, at, end), hi = std::clamp<size_t>(r.hi, lo, end);
    if (lo == hi) continue;
    std::fill(word(at), word(lo), 0u);
    arch::payload_tokens(*seed_, tile, page_address + static_cast<uint32_t>(lo), r.iteration,
                         out.subspan((lo - begin) / 4, (hi - lo) / 4));
    at = hi;
  }
  std::fill(word(at), out.end(), 0u);
}

void TokenPages::make_ready(size_t page, uint8_t* bytes) {
  uint8_t expected = kDeferred;
  if (state_[page].compare_exchange_strong(expected, kMaking, std::memory_order_acquire)) {
    // The rest of the page reads as zero already; the page is 4 KiB-aligned, so its words are too.
    for (const Range& r : ranges_[page])
      words(page, r.lo, {reinterpret_cast<uint32_t*>(bytes + r.lo), (r.hi - r.lo) / 4u});
    state_[page].store(kMade, std::memory_order_release);
    return;
  }
  while (state_[page].load(std::memory_order_acquire) >= kDeferred) std::this_thread::yield();
}

}  // namespace lockstep::model
