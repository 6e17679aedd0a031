#include "model/sram.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "formats/token.hpp"
#include "io/mapped_file.hpp"

namespace lockstep::model {
namespace {

// Private anonymous pages read as zero and take memory only once written; NORESERVE keeps
// 1,472 untouched tiles from counting against the commit limit.
uint8_t* map_zeroed(size_t bytes) {
  void* mapped = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  return static_cast<uint8_t*>(mapped);
}

// The mapping a taken-down chip left for the next arena (KeptSramMappings), and how many
// KeptSramMappings live.
struct KeptMapping {
  std::mutex mutex;
  int keepers = 0;
  uint8_t* data = nullptr;
  size_t bytes = 0;
};
KeptMapping& kept_mapping() {
  static KeptMapping kept;
  return kept;
}

// Makes every byte of [data, + bytes) read zero again, as a fresh mapping does: only pages in
// memory or in swap can hold anything else, and of those only the ones that do are written.
// False, with nothing written, when the kernel does not say which pages are in use.
bool zero_again(uint8_t* data, size_t bytes) {
  constexpr size_t kPage = WriteEpochs::kPageBytes;
  const std::vector<uint8_t> in_use = arch::pages_in_use(data, bytes);
  if (in_use.size() != (bytes + kPage - 1) / kPage) return false;
  static const std::array<uint8_t, kPage> zeros{};
  for (size_t p = 0; p < in_use.size(); ++p) {
    uint8_t* page = data + p * kPage;
    if (in_use[p] != 0 && std::memcmp(page, zeros.data(), kPage) != 0) std::memset(page, 0, kPage);
  }
  return true;
}

// A zeroed mapping of `bytes`: the kept one where it has that size, a fresh one otherwise.
uint8_t* take_mapping(size_t bytes) {
  KeptMapping& kept = kept_mapping();
  uint8_t* data = nullptr;
  {
    const std::lock_guard lock(kept.mutex);
    if (kept.data != nullptr && kept.bytes == bytes) data = std::exchange(kept.data, nullptr);
  }
  if (data == nullptr) return map_zeroed(bytes);
  if (zero_again(data, bytes)) return data;
  ::munmap(data, bytes);
  return map_zeroed(bytes);
}

// Keeps the mapping for the next arena while a KeptSramMappings lives and none is kept
// already; unmaps it otherwise.
void release_mapping(uint8_t* data, size_t bytes) {
  KeptMapping& kept = kept_mapping();
  {
    const std::lock_guard lock(kept.mutex);
    if (kept.keepers > 0 && kept.data == nullptr) {
      kept.data = data;
      kept.bytes = bytes;
      return;
    }
  }
  ::munmap(data, bytes);
}

}  // namespace

Sram::Sram(const arch::MachineDescription& machine)
    : base_(machine.sram_base),
      end_(machine.sram_end),
      interleaved_base_(machine.interleaved_base),
      data_(map_zeroed(end_ - base_)) {}

Sram::Sram(const arch::MachineDescription& machine, SramArena& arena, size_t slot)
    : base_(machine.sram_base),
      end_(machine.sram_end),
      interleaved_base_(machine.interleaved_base),
      data_(arena.slot(slot)),
      arena_(&arena) {}

Sram::~Sram() {
  if (arena_ == nullptr && data_ != nullptr) ::munmap(data_, end_ - base_);
}

Sram::Sram(Sram&& other) noexcept
    : base_(other.base_),
      end_(other.end_),
      interleaved_base_(other.interleaved_base_),
      data_(other.data_),
      arena_(other.arena_) {
  other.data_ = nullptr;
}

// Slots rounded up to whole pages (the write epochs' pages too), so that no two tiles share one.
SramArena::SramArena(const arch::MachineDescription& machine, size_t tiles)
    : slot_bytes_((size_t{machine.sram_end - machine.sram_base} + WriteEpochs::kPageBytes - 1) /
                  WriteEpochs::kPageBytes * WriteEpochs::kPageBytes),
      bytes_(slot_bytes_ * tiles),
      epochs_(bytes_ >> WriteEpochs::kPageShift),
      tokens_(bytes_ >> WriteEpochs::kPageShift, slot_bytes_ >> WriteEpochs::kPageShift, machine.sram_base) {
  if (bytes_ != 0) data_ = take_mapping(bytes_);
}

SramArena::~SramArena() {
  if (data_ != nullptr) release_mapping(data_, bytes_);
}

KeptSramMappings::KeptSramMappings() {
  KeptMapping& kept = kept_mapping();
  const std::lock_guard lock(kept.mutex);
  ++kept.keepers;
}

KeptSramMappings::~KeptSramMappings() {
  KeptMapping& kept = kept_mapping();
  uint8_t* data = nullptr;
  size_t bytes = 0;
  {
    const std::lock_guard lock(kept.mutex);
    if (--kept.keepers == 0) {
      data = std::exchange(kept.data, nullptr);
      bytes = kept.bytes;
    }
  }
  if (data != nullptr) ::munmap(data, bytes);
}

// Pages the loader fills are mapped in bulk first (Sram::populate); so are the runs of deferred
// pages made here, which a first touch one page at a time would fault in at twice the cost.
void SramArena::make_ready_pages(const uint8_t* bytes, size_t count) {
  if (count == 0) return;
  const size_t first = page_of(bytes), last = page_of(bytes + count - 1);
  for (size_t p = first; p <= last; ++p) {
    // A page another thread is making is waited for (TokenPages::make_ready), never read half made.
    if (tokens_.ready(p)) continue;
    size_t end = p + 1;
    while (end <= last && !tokens_.ready(end)) ++end;
    uint8_t* at = data_ + (p << WriteEpochs::kPageShift);
    if (end - p > 1) arch::populate_for_write(at, (end - p) << WriteEpochs::kPageShift);
    for (size_t q = p; q < end; ++q) tokens_.make_ready(q, data_ + (q << WriteEpochs::kPageShift));
    p = end - 1;
  }
}

// Calls piece(page, offset, done, n) for each page's part [done, + n) of a slot's [at, + count).
template <class Piece>
void SramArena::each_page_piece(const uint8_t* at, size_t count, Piece piece) const {
  constexpr size_t kPage = WriteEpochs::kPageBytes;
  for (size_t done = 0; done < count;) {
    const size_t offset = static_cast<size_t>(at + done - data_) & (kPage - 1);
    const size_t n = std::min(count - done, kPage - offset);
    piece(page_of(at + done), offset, done, n);
    done += n;
  }
}

// A copy goes a destination page's part at a time: laid whole as runs, or copied. Each piece
// that writes memory marks its page written as it lands, so that no later lay takes a page it
// wrote for untouched (a copy from a made page on into a page of tokens, both to one page, once
// lost the first piece's words to the second's laid run).
void SramArena::copy_pieces(const uint8_t* from, uint8_t* to, size_t count, bool lay,
                            std::span<const uint64_t> read_pages) {
  if (!tokens_.any()) {
    std::memcpy(to, from, count);
    mark_written(to, count);
    return;
  }
  constexpr size_t kPage = WriteEpochs::kPageBytes;
  const auto start = static_cast<size_t>(from - data_), to_start = static_cast<size_t>(to - data_);
  const bool words = start % 4 == 0 && count % 4 == 0 && to_start % 4 == 0;
  for (size_t done = 0; done < count;) {
    const size_t to_at = to_start + done, to_page = to_at >> WriteEpochs::kPageShift, to_offset = to_at & (kPage - 1);
    const size_t part = std::min(count - done, kPage - to_offset);
    if (!(lay && words && lay_copy(start + done, to_page, to_offset, part, read_pages)))
      copy_part(start + done, to + done, part, words);
    done += part;
  }
}

void SramArena::copy_part(size_t at, uint8_t* to, size_t bytes, bool words) {
  each_page_piece(data_ + at, bytes, [&](size_t page, size_t offset, size_t done, size_t n) {
    make_ready(to + done, n);
    if (!tokens_.deferred(page)) {
      std::memcpy(to + done, data_ + at + done, n);
    } else if (words) {
      tokens_.words(page, offset, {reinterpret_cast<uint32_t*>(to + done), n / 4});
    } else {
      tokens_.make_ready(page, data_ + (page << WriteEpochs::kPageShift));
      std::memcpy(to + done, data_ + at + done, n);
    }
    mark_written(to + done, n);
  });
}

bool SramArena::lay_copy(size_t at, size_t to_page, size_t to_offset, size_t bytes,
                         std::span<const uint64_t> read_pages) {
  if (!read_pages.empty() && (read_pages[to_page / 64] >> (to_page % 64) & 1u) != 0) return false;
  TokenPages::CopiedRuns runs;
  size_t count = 0;
  bool runs_only = true;  // every source page holds runs of tokens
  each_page_piece(data_ + at, bytes, [&](size_t page, size_t offset, size_t done, size_t n) {
    runs_only = runs_only && tokens_.holds_token_runs(page);
    const auto shift = static_cast<std::ptrdiff_t>(to_offset + done) - static_cast<std::ptrdiff_t>(offset);
    if (runs_only) count = tokens_.runs_within(page, offset, n, shift, runs, count);
  });
  return runs_only && tokens_.lay(to_page, static_cast<uint32_t>(to_offset), static_cast<uint32_t>(to_offset + bytes),
                                  {runs.data(), count}, epochs_.last_write(to_page) == 0);
}

bool SramArena::holds_tokens(const uint8_t* at, size_t words, uint32_t first) const {
  if (!tokens_.any()) return arch::holds_tokens_following(at, words, first);
  constexpr size_t kPage = WriteEpochs::kPageBytes;
  for (size_t done = 0; done < words;) {
    const auto byte = static_cast<size_t>(at - data_) + 4 * done;
    const size_t page = byte >> WriteEpochs::kPageShift, offset = byte & (kPage - 1);
    const size_t n = std::min(words - done, (kPage - offset) / 4);
    const uint32_t from = arch::token_after(first, static_cast<uint32_t>(done));
    const bool holds = tokens_.deferred(page) ? tokens_.holds(page, offset, n, from)
                                              : arch::holds_tokens_following(at + 4 * done, n, from);
    if (!holds) return false;
    done += n;
  }
  return true;
}

bool Sram::holds_tokens(uint32_t address, uint32_t words, uint32_t first) const {
  check(address, 4 * words, "compare");
  const uint8_t* at = data_ + (address - base_);
  if (arena_ != nullptr && address % 4 == 0) return arena_->holds_tokens(at, words, first);
  // Unaligned words cannot be deferred: made tokens are whole aligned words.
  const auto here = span(address, 4 * words, "compare");
  return arch::holds_tokens_following(here.data(), words, first);
}

bool Sram::defer_tokens(uint64_t seed, uint32_t tile, uint32_t address, uint32_t bytes, uint32_t iteration) {
  check(address, bytes, "write");
  if (arena_ == nullptr || address % 4 != 0 || bytes % 4 != 0 || !arena_->token_pages().adopt(seed)) return false;
  arena_->defer_tokens(tile, data_ + (address - base_), address, bytes, iteration);
  return true;
}

void Sram::write_tokens(uint64_t seed, uint32_t tile, uint32_t address, uint32_t bytes, uint32_t iteration) {
  if (defer_tokens(seed, tile, address, bytes, iteration)) return;
  populate(address, bytes);
  // Made in place: a buffer to fill and copy was two more passes over the tokens.
  arch::payload_tokens(seed, tile, address, iteration, mutable_words(address, bytes));
}

// Page by page; a page that cannot defer its part (something wrote it) gets its tokens now.
void SramArena::defer_tokens(uint32_t tile, uint8_t* at, uint32_t address, uint32_t bytes, uint32_t iteration) {
  constexpr size_t kPage = WriteEpochs::kPageBytes;
  for (uint32_t done = 0; done < bytes;) {
    const size_t offset = static_cast<size_t>(at + done - data_) & (kPage - 1);
    const auto n = static_cast<uint32_t>(std::min<size_t>(bytes - done, kPage - offset));
    const size_t page = page_of(at + done);
    if (!tokens_.defer(page, tile, static_cast<uint32_t>(offset), static_cast<uint32_t>(offset + n), iteration,
                       epochs_.last_write(page) == 0)) {
      make_ready(at + done, n);
      arch::payload_tokens(*tokens_.seed(), tile, address + done, iteration,
                           {reinterpret_cast<uint32_t*>(at + done), n / 4});
    }
    mark_written(at + done, n);  // a write even deferred: a repeat that reads it copies again
    done += n;
  }
}

void SramArena::write_small(uint8_t* at, size_t count, const uint8_t* data) {
  each_page_piece(at, count, [&](size_t page, size_t offset, size_t done, size_t n) {
    if (!tokens_.lay_bytes(page, static_cast<uint32_t>(offset), static_cast<uint32_t>(offset + n), data + done,
                           epochs_.last_write(page) == 0)) {
      make_ready(at + done, n);
      std::memcpy(at + done, data + done, n);
    }
    mark_written(at + done, n);
  });
}

void SramArena::read_out(const uint8_t* at, size_t count, uint8_t* out) {
  each_page_piece(at, count, [&](size_t page, size_t offset, size_t done, size_t n) {
    if (tokens_.holds_bytes(page)) {
      tokens_.bytes(page, offset, {out + done, n});  // read where they are laid, nothing made
    } else {
      make_ready(at + done, n);
      std::memcpy(out + done, at + done, n);
    }
  });
}

bool SramArena::equal_out(const uint8_t* at, size_t count, const uint8_t* expected) {
  std::array<uint8_t, WriteEpochs::kPageBytes> held;
  bool equal = true;
  each_page_piece(at, count, [&](size_t, size_t, size_t done, size_t n) {
    if (!equal) return;
    read_out(at + done, n, held.data());
    equal = std::memcmp(held.data(), expected + done, n) == 0;
  });
  return equal;
}

void Sram::load(uint32_t address, uint32_t bytes, const uint8_t* data) {
  if (arena_ == nullptr || !arena_->small_write(bytes)) populate(address, bytes);
  write(address, bytes, data);
}

// Mapping pages writes nothing, so the write epochs are not marked.
void Sram::populate(uint32_t address, uint32_t bytes) {
  check(address, bytes, "write");
  arch::populate_for_write(data_ + (address - base_), bytes);
}

std::span<uint32_t> Sram::mutable_words(uint32_t address, uint32_t bytes) {
  if (address % 4 != 0 || bytes % 4 != 0) {
    throw std::invalid_argument("SRAM words at " + std::to_string(address) + ", " + std::to_string(bytes) +
                                " bytes: not whole words");
  }
  // The storage is page-aligned (a mapping of its own or an arena slot), so the words are too.
  return {reinterpret_cast<uint32_t*>(mutable_span(address, bytes).data()), bytes / 4};
}

void Sram::refuse(uint32_t address, const char* what) {
  throw std::out_of_range(std::string("SRAM ") + what + " outside memory at " + std::to_string(address));
}

}  // namespace lockstep::model
