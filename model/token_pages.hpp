#pragma once
// The pages of a chip's SRAM that hold payload tokens (formats/token.hpp) not written yet: an
// exchange-only package fills 553 MB with tokens, 90% of which are only ever read, and a
// replay's copies move 8 M words an iteration that its check only compares (docs/performance.md,
// rounds eighteen, twenty-four and thirty-two). A read or write of such a page through Sram
// makes its tokens first. A deferred page holds runs of tokens in up to kRanges byte ranges and
// zero around them, as the untouched page it was: its loader's or refill's runs, and the runs the
// exchange fabric's copies laid over it, moved from their sources' ranges. In a replay, a page
// that only small writes touch (a tile's rows, its code and its loop counter) holds runs of
// bytes kept in a store instead, so that it never costs a fault (round thirty-three); a page holds
// runs of one kind. Never includes anything of the simulation: SramArena holds it.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>

namespace lockstep::model {

class TokenPages {
 public:
  static constexpr size_t kPageBytes = 4096;  // the arena's page (WriteEpochs::kPageBytes)
  static constexpr size_t kRanges = 8;
  // Bytes [lo, hi) of a page (none when lo == hi) hold the tokens that follow token `first`, one
  // a word (arch::tokens_following): a run of one tile's tokens of one Repeat iteration, wherever
  // it was moved to. On a page of bytes, they hold the store's bytes from `first` on instead.
  // Trivial, so that a record is not written when made (Range{} is empty).
  struct Range {
    uint16_t lo, hi;
    uint32_t first;
  };
  // A deferred page's runs, ascending and apart, the empty ones last: one record, one cache line
  // or less, so a refill's deferral or a copy meets one line a page.
  using Ranges = std::array<Range, kRanges>;

  static constexpr size_t kStoreBytes = size_t{64} << 20;  // the bytes of all runs of bytes, at most

  // `pages` of 4 KiB in slots of `pages_per_slot`, each slot a tile's SRAM from `sram_base` up.
  TokenPages(size_t pages, size_t pages_per_slot, uint32_t sram_base);

  bool any() const { return any_.load(std::memory_order_acquire); }
  // The seed of every deferred token; false for a second one (its tokens are then written at
  // once). The first makes the pages' table: a chip that defers nothing never touches it.
  bool adopt(uint64_t seed);
  const std::optional<uint64_t>& seed() const { return seed_; }
  // Bytes [lo, hi) of `page` (word-aligned) hold logical tile `tile`'s tokens of Repeat
  // iteration `iteration` from now on, unwritten: lay(page, lo, hi, that one run, untouched).
  // The tiles' loaders may call it at once, each for its own slot's pages.
  bool defer(size_t page, uint32_t tile, uint32_t lo, uint32_t hi, uint32_t iteration, bool untouched);
  // Bytes [lo, hi) of `page` (word-aligned) hold `runs` (within them, ascending, apart) and zero
  // between them from now on, unwritten; the page's runs outside [lo, hi) stay, and runs whose
  // tokens go on from one to the next join. `untouched`: nothing wrote the page so far, so it
  // reads as zero. False, with nothing changed, unless the page is untouched or deferred, and
  // when the page would hold more than kRanges runs. Only one thread at a time may lay over a
  // page, and none may read its runs meanwhile.
  bool lay(size_t page, uint32_t lo, uint32_t hi, std::span<const Range> runs, bool untouched);
  // Bytes [lo, hi) of `page` hold `data` from now on, kept in the store and laid as a run of
  // bytes: in place where a run already holds them all. False, with nothing changed, unless the
  // page is untouched or holds bytes already, and when the store or the page's record is full.
  // Only the page's owner may call it, as lay.
  bool lay_bytes(size_t page, uint32_t lo, uint32_t hi, const uint8_t* data, bool untouched);
  // The runs a copy lays over one destination page, from its one or two source pages.
  using CopiedRuns = std::array<Range, 2 * kRanges>;
  // Appends the runs of token page `page` within bytes [offset, + bytes), moved by `shift` bytes
  // (a copy to another page's offset + shift), to out[0, count): a run whose tokens go on from
  // the last one there joins it, so a copy across two source pages lays one run where the
  // tokens go on. The new count.
  size_t runs_within(size_t page, size_t offset, size_t bytes, std::ptrdiff_t shift, CopiedRuns& out,
                     size_t count) const;
  bool deferred(size_t page) const { return kind(entry_[page].load(std::memory_order_acquire)) >= kTokens; }
  // Whether memory holds the page: neither deferred nor being made by another thread.
  bool ready(size_t page) const { return kind(entry_[page].load(std::memory_order_acquire)) <= kMade; }
  // Whether deferred `page` holds runs of tokens (rather than bytes), which copies may lay.
  bool holds_token_runs(size_t page) const { return kind(entry_[page].load(std::memory_order_acquire)) == kTokens; }
  bool holds_bytes(size_t page) const { return kind(entry_[page].load(std::memory_order_acquire)) == kBytes; }
  // Writes page `page`'s runs at `bytes` (the page's place) unless they are there already;
  // of several threads, one writes them and the others wait.
  void make_ready(size_t page, uint8_t* bytes);
  // Asks for what a copy to or from `page` reads: its entry first, its record once the entry
  // is in cache (the entry says where the record is).
  void prefetch_entry(size_t page) const { __builtin_prefetch(&entry_[page]); }
  // Whether the page is deferred, as far as the caller may know before it copies.
  bool prefetch_record(size_t page) const {
    const uint32_t entry = entry_[page].load(std::memory_order_relaxed);
    if (kind(entry) < kTokens) return false;
    __builtin_prefetch(&pool_[entry >> kKindBits]);
    return true;
  }
  // What the words of deferred `page` from byte `offset` on hold, into `out`.
  void words(size_t page, size_t offset, std::span<uint32_t> out) const;
  // What the bytes of `page`, a page of bytes, from byte `offset` on hold, into `out`.
  void bytes(size_t page, size_t offset, std::span<uint8_t> out) const;
  // Whether deferred `page` holds, from byte `offset` on, `words` tokens following `first`:
  // compared run by run, no word made.
  bool holds(size_t page, size_t offset, size_t words, uint32_t first) const;

 private:
  // An entry is a page's kind (low three bits) and its record's place in pool_ (the rest).
  // Plain: memory holds the page (zero if nothing wrote it); made: memory holds the runs made;
  // tokens, bytes: the record holds the page's runs of that kind.
  static constexpr unsigned kKindBits = 3;
  static constexpr uint32_t kPlain = 0, kMade = 1, kMaking = 2, kTokens = 3, kBytes = 4;
  static uint32_t kind(uint32_t entry) { return entry & ((1u << kKindBits) - 1); }
  const Ranges& runs_of(size_t page) const {
    return pool_[entry_[page].load(std::memory_order_acquire) >> kKindBits].runs;
  }
  // The tables, made once by whichever comes first: the seed's adoption or a run of bytes.
  void make_tables();
  // Sets a deferred or plain page's runs to `runs` of `kind_of_runs`.
  void set_runs(size_t page, uint32_t entry, uint32_t kind_of_runs, const Ranges& runs);
  size_t pages_;
  size_t pages_per_slot_;
  uint32_t sram_base_;
  std::atomic<bool> any_ = false;
  std::mutex seed_mutex_;
  std::optional<uint64_t> seed_;  // set once, under seed_mutex_, with the tables below
  std::unique_ptr<std::atomic<uint32_t>[]> entry_;
  // Records, handed out in the order pages are first deferred: only those used are touched. A
  // page keeps its record while deferred and is never deferred again once made, so one each.
  struct alignas(64) Record {  // a cache line
    Ranges runs;
  };
  std::unique_ptr<Record[]> pool_;
  std::atomic<uint32_t> pool_used_ = 0;
  // The bytes of runs of bytes, handed out in order, each run's its own (so written in place);
  // made at the first run of bytes.
  std::once_flag store_made_;
  std::unique_ptr<uint8_t[]> store_;
  std::atomic<uint64_t> store_used_ = 0;
  std::atomic<bool> tables_ = false;   // set after the tables: read without the lock
  std::atomic<bool> adopted_ = false;  // set after seed_ and the tables: read without the lock
};

}  // namespace lockstep::model
