#pragma once
// One tile's SRAM: one contiguous anonymous mapping (its own, or its slot of the chip's
// SramArena) that the operating system fills with zero pages on first touch, so idle memory
// costs nothing and every range is one span in place.
// Little-endian; untouched memory reads as zero; addresses outside SRAM are refused (callers
// report hazard 4 first).
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "arch/machine.hpp"
#include "model/token_pages.hpp"

namespace lockstep::model {

// Words are read and written in the host's order, which must be the tile's.
static_assert(std::endian::native == std::endian::little, "Lockstep needs a little-endian host");

// The write epoch that last wrote each 4 KiB page of a chip's SRAM (an SramArena's). The
// exchange fabric advances the epoch after every execution, so a page whose epoch is at most
// that of a phase's last execution was written by nothing since: a phase that repeats with the
// same inputs then lands the bytes its pages already hold (model/exchange_fabric.hpp).
class WriteEpochs {
 public:
  // 64 bits, so a run never wraps it: after a wrap, a write would read as older than an execution
  // before it, and the fabric would skip a copy it must make (a silent wrong answer).
  using Epoch = uint64_t;
  static constexpr unsigned kPageShift = 12;
  static constexpr size_t kPageBytes = size_t{1} << kPageShift;
  static_assert(kPageBytes == TokenPages::kPageBytes, "one page for the write epochs and the tokens");
  explicit WriteEpochs(size_t pages) : last_write_(pages, 0) {}
  Epoch now() const { return now_.load(std::memory_order_relaxed); }
  // Only between executions, with no kernel in flight (the barrier runs them all first).
  void advance() { now_.fetch_add(1, std::memory_order_relaxed); }
  // Pages first..last (inclusive) written now. Tiles' pages are apart, so the kernels' worker
  // threads, each on its own tile, never mark one page together.
  void mark(size_t first, size_t last) {
    const Epoch epoch = now();
    for (size_t p = first; p <= last; ++p) last_write_[p] = epoch;
  }
  Epoch last_write(size_t page) const { return last_write_[page]; }
  void prefetch(size_t page) const { __builtin_prefetch(&last_write_[page], 1); }
  size_t pages() const { return last_write_.size(); }

 private:
  std::atomic<Epoch> now_{1};
  std::vector<Epoch> last_write_;
};

class SramArena;

class Sram {
 public:
  // Its own mapping, unmapped with it.
  explicit Sram(const arch::MachineDescription& machine);
  // Tile `slot`'s storage in `arena`, whose write epochs every write through this SRAM marks
  // (a slot without them would let the exchange fabric skip copies that a write made stale).
  Sram(const arch::MachineDescription& machine, SramArena& arena, size_t slot);
  ~Sram();
  Sram(Sram&& other) noexcept;
  Sram& operator=(Sram&&) = delete;
  Sram(const Sram&) = delete;
  Sram& operator=(const Sram&) = delete;

  bool contains(uint64_t address, uint64_t bytes) const { return address >= base_ && address + bytes <= end_; }
  // [address, + bytes) lies in the interleaved region (machine.interleaved_base up).
  bool interleaved(uint64_t address, uint64_t bytes) const {
    return address >= interleaved_base_ && contains(address, bytes);
  }
  // All of these throw std::out_of_range outside SRAM. Zero bytes are checked and copy nothing
  // (the caller's pointer may then be null, which memcpy may not be given).
  inline void read(uint32_t address, uint32_t bytes, uint8_t* out) const;
  inline void write(uint32_t address, uint32_t bytes, const uint8_t* data);
  // The loader's write: mapped ahead in one call first (populate), unless it is laid as bytes.
  void load(uint32_t address, uint32_t bytes, const uint8_t* data);
  // Copies [source_address, + bytes) of `source` to `address` here, as if through a buffer:
  // when `source` is this SRAM the ranges may overlap (memmove).
  void copy_from(const Sram& source, uint32_t source_address, uint32_t address, uint32_t bytes) {
    std::memmove(mutable_span(address, bytes).data(), source.span(source_address, bytes, "read").data(), bytes);
  }
  inline bool equal(uint32_t address, uint32_t bytes, const uint8_t* expected) const;
  // Whether [address, + 4 * words) holds the payload tokens that follow token `first`
  // (arch::tokens_following): compared run by run where they are deferred, none made.
  bool holds_tokens(uint32_t address, uint32_t words, uint32_t first) const;
  // Maps the pages of [address, + bytes) ahead of a write that fills them, in one call instead
  // of a fault per page (arch::populate_for_write, io/mapped_file.hpp).
  void populate(uint32_t address, uint32_t bytes);
  // [address, + bytes) in place: valid while this SRAM lives; writes through the mutable span
  // are the tile's memory.
  inline std::span<const uint8_t> span(uint32_t address, uint32_t bytes, const char* what = "read") const;
  // Every write goes through here (a span is written at once, within the epoch it was taken
  // in), so the write epochs see it; only the exchange fabric keeps spans across epochs, and it
  // marks the pages it copies to itself.
  std::span<uint8_t> mutable_span(uint32_t address, uint32_t bytes);
  // [address, + bytes) as the words SRAM holds: little-endian, as the host's. The address and
  // size must be multiples of 4 (std::invalid_argument otherwise). write_tokens makes tokens
  // there in place, without a buffer to fill and copy.
  std::span<uint32_t> mutable_words(uint32_t address, uint32_t bytes);
  void zero(uint32_t address, uint32_t bytes) {
    const auto to = mutable_span(address, bytes);
    if (bytes != 0) std::memset(to.data(), 0, bytes);
  }
  uint32_t read_word(uint32_t address) const {
    uint32_t value;
    read(address, 4, reinterpret_cast<uint8_t*>(&value));
    return value;
  }
  void write_word(uint32_t address, uint32_t value) { write(address, 4, reinterpret_cast<const uint8_t*>(&value)); }

  // The payload tokens (formats/token.hpp) of `seed`, logical tile `tile` and Repeat iteration
  // `iteration` at [address, + bytes), as the loader's token segment (iteration 0) or a replay's
  // refill writes them: made when first touched (SramArena, model/token_pages.hpp), or now on a
  // page that cannot defer them. False, with nothing written, when this SRAM cannot defer them
  // (its own mapping, unaligned words, a second seed).
  bool defer_tokens(uint64_t seed, uint32_t tile, uint32_t address, uint32_t bytes, uint32_t iteration = 0);
  // The same tokens, deferred where defer_tokens can, written now (in place) where it cannot;
  // whole words only (std::invalid_argument otherwise, as mutable_words).
  void write_tokens(uint64_t seed, uint32_t tile, uint32_t address, uint32_t bytes, uint32_t iteration = 0);
  // Where [address, + bytes) lies, for the exchange fabric alone: no deferred token is made
  // (its copies move them, SramArena::copy_out), and no page is marked written: the copies mark
  // theirs as they land, and a page nothing wrote may take the runs of tokens copied to it.
  const uint8_t* place(uint32_t address, uint32_t bytes) const {
    check(address, bytes, "read");
    return data_ + (address - base_);
  }
  uint8_t* mutable_place(uint32_t address, uint32_t bytes) {
    check(address, bytes, "write");
    return data_ + (address - base_);
  }

 private:
  void check(uint32_t address, uint32_t bytes, const char* what) const {
    if (!contains(address, bytes)) [[unlikely]]
      refuse(address, what);
  }
  [[noreturn]] static void refuse(uint32_t address, const char* what);
  uint32_t base_;
  uint32_t end_;
  uint32_t interleaved_base_;
  uint8_t* data_;
  SramArena* arena_ = nullptr;  // the arena that holds data_ (a slot of it); null: data_ is this SRAM's own mapping
};

// Every tile's SRAM of a chip in one mapping, a page-aligned slot each: one mmap to build the
// chip, not one a tile. 1,472 unmaps took 26 ms of a 0.4 s replay, mostly the other core's TLB
// shootdown after each (docs/performance.md, round eleven). The slots are still 4 KiB pages
// touched on demand: huge pages were slower (round ten). While a KeptSramMappings lives, the
// mapping of a chip taken down is kept for the next arena of the same size.
class SramArena {
 public:
  SramArena(const arch::MachineDescription& machine, size_t tiles);
  ~SramArena();
  SramArena(const SramArena&) = delete;
  SramArena& operator=(const SramArena&) = delete;
  // Tile i's storage, for Sram(machine, arena, i).
  uint8_t* slot(size_t i) const { return data_ + i * slot_bytes_; }
  WriteEpochs& epochs() { return epochs_; }
  // The page of the arena that holds `byte` (a byte of a slot).
  size_t page_of(const uint8_t* byte) const { return static_cast<size_t>(byte - data_) >> WriteEpochs::kPageShift; }
  // [bytes, + count) of a slot written now, through a pointer held across epochs.
  void mark_written(const uint8_t* bytes, size_t count) {
    if (count != 0) epochs_.mark(page_of(bytes), page_of(bytes + count - 1));
  }

  // Payload tokens made when first touched (model/token_pages.hpp): Sram::defer_tokens defers
  // them; make_ready writes those of [bytes, + count) before anything reads or writes there.
  TokenPages& token_pages() { return tokens_; }
  void make_ready(const uint8_t* bytes, size_t count) {
    if (tokens_.any()) [[unlikely]]
      make_ready_pages(bytes, count);
  }
  // Whether a page of [bytes, + count) (count > 0) still waits for its tokens.
  bool waits_for_tokens(const uint8_t* bytes, size_t count) {
    if (!tokens_.any()) return false;
    for (size_t p = page_of(bytes), last = page_of(bytes + count - 1); p <= last; ++p) {
      if (tokens_.deferred(p)) return true;
    }
    return false;
  }
  // Tokens of `iteration` at [at, + bytes), SRAM address `address` on, of a slot whose tile is
  // `tile` (Sram::defer_tokens, once the seed is adopted).
  void defer_tokens(uint32_t tile, uint8_t* at, uint32_t address, uint32_t bytes, uint32_t iteration);
  // A direct copy of the exchange fabric: [from, + count) to `to`, where the destination's
  // deferred tokens are made first and a source page's are made at `to` instead of read.
  void copy_out(const uint8_t* from, uint8_t* to, size_t count) { copy_pieces(from, to, count, false, {}); }
  // The same copy, but a source page's deferred tokens are laid over the destination's page as
  // runs where it is deferred or untouched and can hold them (RunMonitor::lay_copied_tokens).
  // `read_pages`: a bit for each page of the arena that some copy running meanwhile reads (empty:
  // none but this one's sources); a page another thread may read runs from is never laid over.
  void lay_out(const uint8_t* from, uint8_t* to, size_t count, std::span<const uint64_t> read_pages = {}) {
    copy_pieces(from, to, count, true, read_pages);
  }
  // What a later copy from `from` to `to` reads of the token pages, asked for in two steps: the
  // entries of its first pages and the write epoch of `to`'s page, then (once the entries are in
  // cache) the records they point at; false when the source's first page holds no deferred
  // token, so the copy reads memory.
  void prefetch_token_entries(const uint8_t* from, const uint8_t* to) const {
    tokens_.prefetch_entry(page_of(from));
    tokens_.prefetch_entry(page_of(to));
    epochs_.prefetch(page_of(to));
  }
  bool prefetch_token_records(const uint8_t* from, const uint8_t* to) const {
    tokens_.prefetch_record(page_of(to));
    return tokens_.prefetch_record(page_of(from));
  }
  // Sram::holds_tokens of [at, + 4 * words) of a slot.
  bool holds_tokens(const uint8_t* at, size_t words, uint32_t first) const;

  // Writes smaller than a page are laid as runs of bytes (TokenPages::lay_bytes) on pages that
  // nothing else wrote, so that those pages are never touched: for a replay, where only a tile's
  // rows, code and loop counter land on them (RunMonitor::lay_small_writes). Off by default.
  void lay_small_writes(bool on) { lays_small_writes_ = on; }
  bool small_write(size_t bytes) const { return lays_small_writes_ && bytes < WriteEpochs::kPageBytes; }
  // Sram::write of [at, + count) of a slot from `data`, laid as bytes where the page can take them.
  void write_small(uint8_t* at, size_t count, const uint8_t* data);
  // Sram::read and Sram::equal of [at, + count) of a slot: runs of bytes read where they are laid,
  // deferred tokens made first, as every other read does.
  void read_out(const uint8_t* at, size_t count, uint8_t* out);
  bool equal_out(const uint8_t* at, size_t count, const uint8_t* expected);

 private:
  void make_ready_pages(const uint8_t* bytes, size_t count);
  template <class Piece>
  void each_page_piece(const uint8_t* at, size_t count, Piece piece) const;
  void copy_pieces(const uint8_t* from, uint8_t* to, size_t count, bool lay, std::span<const uint64_t> read_pages);
  // The arena's bytes [at, + bytes) laid over `to_page` from `to_offset` on, as runs, from the
  // one or two source pages they lie on.
  bool lay_copy(size_t at, size_t to_page, size_t to_offset, size_t bytes, std::span<const uint64_t> read_pages);
  // The same bytes copied to `to`, a source page at a time: made, read or moved as each holds them.
  void copy_part(size_t at, uint8_t* to, size_t bytes, bool words);
  size_t slot_bytes_;
  size_t bytes_;
  uint8_t* data_ = nullptr;
  WriteEpochs epochs_;
  TokenPages tokens_;
  bool lays_small_writes_ = false;
};

// While one lives (a sweep's or replay's loop over points; they nest), a chip taken down keeps
// its arena's mapping for the next arena of the same size in this process (and in processes
// forked meanwhile), which zeroes the pages written and takes it: a fresh mapping's pages each
// cost a fault when first touched, 5-15 us on the virtual machines measured here, about 9,500
// a point of the attention output's reduce (docs/performance.md, round thirty). The last one
// to go unmaps what is kept. Without one, an arena unmaps its mapping as it goes: a whole-model
// run keeps no SRAM resident while it computes its reference.
class KeptSramMappings {
 public:
  KeptSramMappings();
  ~KeptSramMappings();
  KeptSramMappings(const KeptSramMappings&) = delete;
  KeptSramMappings& operator=(const KeptSramMappings&) = delete;
};

inline std::span<const uint8_t> Sram::span(uint32_t address, uint32_t bytes, const char* what) const {
  check(address, bytes, what);
  const uint8_t* at = data_ + (address - base_);
  if (arena_ != nullptr) arena_->make_ready(at, bytes);
  return {at, bytes};
}

inline void Sram::read(uint32_t address, uint32_t bytes, uint8_t* out) const {
  if (arena_ != nullptr && arena_->token_pages().any()) {
    check(address, bytes, "read");
    arena_->read_out(data_ + (address - base_), bytes, out);
    return;
  }
  const auto from = span(address, bytes, "read");
  if (bytes != 0) std::memcpy(out, from.data(), bytes);
}

inline void Sram::write(uint32_t address, uint32_t bytes, const uint8_t* data) {
  if (arena_ != nullptr && arena_->small_write(bytes)) {
    check(address, bytes, "write");
    arena_->write_small(data_ + (address - base_), bytes, data);
    return;
  }
  const auto to = mutable_span(address, bytes);
  if (bytes != 0) std::memcpy(to.data(), data, bytes);
}

inline bool Sram::equal(uint32_t address, uint32_t bytes, const uint8_t* expected) const {
  if (arena_ != nullptr && arena_->token_pages().any()) {
    check(address, bytes, "compare");
    return arena_->equal_out(data_ + (address - base_), bytes, expected);
  }
  const auto here = span(address, bytes, "compare");
  return bytes == 0 || std::memcmp(here.data(), expected, bytes) == 0;
}

inline std::span<uint8_t> Sram::mutable_span(uint32_t address, uint32_t bytes) {
  check(address, bytes, "write");
  uint8_t* at = data_ + (address - base_);
  if (arena_ != nullptr) {
    arena_->make_ready(at, bytes);
    arena_->mark_written(at, bytes);
  }
  return {at, bytes};
}

}  // namespace lockstep::model
