#pragma once
// The pages of a chip's SRAM whose payload tokens (formats/token.hpp, iteration 0) the loader
// left to be made when first touched: an exchange-only package fills 553 MB with tokens, 90% of
// which are only ever read (docs/performance.md, rounds eighteen and twenty-four). A read or
// write of such a page through Sram makes its tokens first; the exchange fabric's copies make
// the tokens they move at their destination instead, and the page is never touched. A deferred
// page holds tokens in one or two byte ranges and zero around them, as the untouched page it
// was: two, because a tile's sources often share a page with a gap between them (822 pages of a
// replay of phase 10, docs/performance.md, round thirty-one). Never includes anything of the
// simulation: SramArena holds it.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace lockstep::model {

class TokenPages {
 public:
  static constexpr size_t kPageBytes = 4096;  // the arena's page (WriteEpochs::kPageBytes)
  // Token bytes [lo, hi) of a page (none when lo == hi) and their Repeat iteration. A page holds
  // two, ascending and apart, in one record: a refill's deferral meets one cache line a page.
  // Trivial, so that the table is not written when made (Range{} is empty).
  struct Range {
    uint16_t lo, hi;
    uint32_t iteration;
  };
  using Ranges = std::array<Range, 2>;

  // `pages` of 4 KiB in slots of `pages_per_slot`, each slot a tile's SRAM from `sram_base` up.
  TokenPages(size_t pages, size_t pages_per_slot, uint32_t sram_base);

  bool any() const { return any_.load(std::memory_order_acquire); }
  // The seed of every deferred token; false for a second one (its tokens are then written at
  // once). The first makes the pages' tables: a chip that defers nothing never touches them.
  bool adopt(uint64_t seed);
  const std::optional<uint64_t>& seed() const { return seed_; }
  // Bytes [lo, hi) of `page` (word-aligned) hold logical tile `tile`'s tokens of Repeat
  // iteration `iteration` from now on, unwritten. `untouched`: nothing wrote the page so far, so
  // it reads as zero. False, with nothing deferred, unless the page is untouched or deferred; on
  // a deferred page, this range takes the bytes it overlaps from the ranges there (a replay's
  // refill of the next iteration's sources), joins one of its iteration that it touches, and may
  // sit apart from one other, but may not make a third. The tiles' loaders may call it at once,
  // each for its own slot's pages.
  bool defer(size_t page, uint32_t tile, uint32_t lo, uint32_t hi, uint32_t iteration, bool untouched);
  bool deferred(size_t page) const { return state_[page].load(std::memory_order_acquire) >= kDeferred; }
  // Writes page `page`'s tokens at `bytes` (the page's place) unless they are there already;
  // of several threads, one writes them and the others wait.
  void make_ready(size_t page, uint8_t* bytes);
  // What the words of deferred `page` from byte `offset` on hold, into `out`.
  void words(size_t page, size_t offset, std::span<uint32_t> out) const;

 private:
  // Plain: memory holds the page (zero if nothing wrote it); made: memory holds the tokens made.
  static constexpr uint8_t kPlain = 0, kMade = 1, kDeferred = 2, kMaking = 3;
  size_t pages_;
  size_t pages_per_slot_;
  uint32_t sram_base_;
  std::atomic<bool> any_ = false;
  std::mutex seed_mutex_;
  std::optional<uint64_t> seed_;     // set once, under seed_mutex_, with the tables below
  std::vector<uint32_t> slot_tile_;  // the logical tile whose SRAM each slot is
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
  std::unique_ptr<Ranges[]> ranges_;   // a deferred page's
  std::atomic<bool> adopted_ = false;  // set after seed_ and the tables: read without the lock
};

}  // namespace lockstep::model
