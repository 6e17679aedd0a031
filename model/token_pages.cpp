#include "model/token_pages.hpp"

#include <algorithm>
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
  lo_ = std::make_unique<uint16_t[]>(pages_);
  hi_ = std::make_unique<uint16_t[]>(pages_);
  iteration_ = std::make_unique<uint32_t[]>(pages_);
  adopted_.store(true, std::memory_order_release);
  return true;
}

bool TokenPages::defer(size_t page, uint32_t tile, uint32_t lo, uint32_t hi, uint32_t iteration, bool untouched) {
  const uint8_t state = state_[page].load(std::memory_order_relaxed);
  const bool deferred = state == kDeferred, same = deferred && iteration_[page] == iteration;
  if ((state == kPlain && untouched) || (deferred && lo <= lo_[page] && hi >= hi_[page])) {
    lo_[page] = static_cast<uint16_t>(lo);
    hi_[page] = static_cast<uint16_t>(hi);
    iteration_[page] = iteration;
  } else if (same && hi_[page] == lo) {
    hi_[page] = static_cast<uint16_t>(hi);
  } else if (same && lo_[page] == hi) {
    lo_[page] = static_cast<uint16_t>(lo);
  } else {
    return false;
  }
  slot_tile_[page / pages_per_slot_] = tile;
  state_[page].store(kDeferred, std::memory_order_relaxed);
  any_.store(true, std::memory_order_release);  // after the tables, which readers then see
  return true;
}

void TokenPages::words(size_t page, size_t offset, std::span<uint32_t> out) const {
  const size_t begin = offset, end = offset + out.size() * 4;
  const size_t lo = std::clamp<size_t>(lo_[page], begin, end), hi = std::clamp<size_t>(hi_[page], lo, end);
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>((lo - begin) / 4), 0u);
  const auto address = static_cast<uint32_t>(sram_base_ + (page % pages_per_slot_) * kPageBytes + lo);
  arch::payload_tokens(*seed_, slot_tile_[page / pages_per_slot_], address, iteration_[page],
                       out.subspan((lo - begin) / 4, (hi - lo) / 4));
  std::fill(out.begin() + static_cast<std::ptrdiff_t>((hi - begin) / 4), out.end(), 0u);
}

void TokenPages::make_ready(size_t page, uint8_t* bytes) {
  uint8_t expected = kDeferred;
  if (state_[page].compare_exchange_strong(expected, kMaking, std::memory_order_acquire)) {
    // The rest of the page reads as zero already; the page is 4 KiB-aligned, so its words are too.
    const uint32_t lo = lo_[page], hi = hi_[page];
    words(page, lo, {reinterpret_cast<uint32_t*>(bytes + lo), (hi - lo) / 4});
    state_[page].store(kMade, std::memory_order_release);
    return;
  }
  while (state_[page].load(std::memory_order_acquire) >= kDeferred) std::this_thread::yield();
}

}  // namespace lockstep::model
