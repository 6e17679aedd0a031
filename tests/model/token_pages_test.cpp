// Payload tokens made when first touched (model/token_pages.hpp): whatever reads or writes a
// tile's SRAM through Sram, and whatever the exchange fabric's copies move, must be what an
// SRAM with the tokens written at load holds. Each case loads the same segments into an arena
// slot (deferred) and into an SRAM of its own (written at once, the plain way), then compares.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "arch/machine.hpp"
#include "formats/token.hpp"
#include "model/sram.hpp"

namespace lockstep::model {
namespace {

constexpr uint64_t kSeed = 7;
constexpr uint32_t kTile = 5;

const arch::MachineDescription& c600() {
  static const auto m = arch::load_machine("ipu21-c600");
  return m;
}

uint32_t at(uint32_t offset) { return c600().sram_base + offset; }

// The plain load of a token segment.
void write_tokens(Sram& plain, uint32_t address, uint32_t bytes, uint64_t seed = kSeed) {
  arch::payload_tokens(seed, kTile, address, 0, plain.mutable_words(address, bytes));
}

std::vector<uint8_t> bytes_of(const Sram& m, uint32_t address, uint32_t n) {
  std::vector<uint8_t> out(n);
  m.read(address, n, out.data());
  return out;
}

struct Loaded {
  SramArena arena{c600(), 2};
  Sram deferred{c600(), arena, 1};
  Sram plain{c600()};
  void tokens(uint32_t address, uint32_t bytes) {
    ASSERT_TRUE(deferred.defer_tokens(kSeed, kTile, address, bytes));
    write_tokens(plain, address, bytes);
  }
  void expect_same(uint32_t address, uint32_t bytes) const {
    EXPECT_EQ(bytes_of(deferred, address, bytes), bytes_of(plain, address, bytes)) << "at " << address;
  }
  bool waits(uint32_t address, uint32_t bytes) { return arena.waits_for_tokens(deferred.place(address, bytes), bytes); }
};

TEST(TokenPages, ASegmentReadsAsItsTokensWithZeroAroundAcrossPartPages) {
  Loaded l;
  l.tokens(at(0x1008), 3 * 4096 + 100);  // starts and ends inside pages
  EXPECT_TRUE(l.arena.token_pages().any());
  EXPECT_TRUE(l.waits(at(0x1000), 4));
  l.expect_same(at(0x1000), 5 * 4096);  // the tokens, and zero on both sides
  EXPECT_FALSE(l.waits(at(0x1000), 4 * 4096));
}

TEST(TokenPages, SegmentsThatTouchJoinAndAPageHoldsUpToItsRangesApart) {
  Loaded l;
  l.tokens(at(0x2000), 0x100);
  l.tokens(at(0x2100), 0x80);  // continues the deferred range
  EXPECT_TRUE(l.waits(at(0x2000), 4));
  for (uint32_t k = 1; k < TokenPages::kRanges; ++k) {
    l.tokens(at(0x2200 + 0x100 * k), 0x40);  // each apart from the others: another range
    EXPECT_TRUE(l.waits(at(0x2000), 4)) << k + 1 << " ranges";
  }
  l.tokens(at(0x2200 + 0x100 * TokenPages::kRanges), 0x40);  // one more than the page can hold
  EXPECT_FALSE(l.waits(at(0x2000), 4));
  l.expect_same(at(0x2000), 4096);
}

TEST(TokenPages, TwoRangesReadAsTheirTokensWithZeroAroundAndBetween) {
  Loaded l;
  l.tokens(at(0x5400), 0x100);
  l.tokens(at(0x5040), 0x80);  // the lower one second
  EXPECT_TRUE(l.waits(at(0x5000), 4));
  l.expect_same(at(0x5000), 4096);  // read through Sram: made, then compared
  EXPECT_FALSE(l.waits(at(0x5000), 4));
}

TEST(TokenPages, ACopyOutOfTwoRangesMovesTheGapAsZero) {
  Loaded l;
  l.tokens(at(0x9040), 0x40);
  l.tokens(at(0x9100), 0x40);
  const uint32_t from = at(0x9020), to = at(0x30000), bytes = 0x140;
  const std::vector<uint8_t> old(4096, 0x5a);  // what the copy overwrites, the gap's zeros too
  l.deferred.write(to, 4096, old.data());
  l.plain.write(to, 4096, old.data());
  l.arena.copy_out(l.deferred.place(from, bytes), l.deferred.mutable_place(to, bytes), bytes);
  l.plain.copy_from(l.plain, from, to, bytes);
  EXPECT_TRUE(l.waits(from, bytes));  // the source is never made
  l.expect_same(at(0x30000), 4096);
  l.expect_same(at(0x9000), 4096);
}

// A replay's refill of a page with two ranges: each run of the next iteration covers one of
// them in turn, and the page holds one range of each iteration meanwhile.
TEST(TokenPages, ARefillOfTwoRangesDefersEachInTurn) {
  Loaded l;
  l.tokens(at(0xa000), 0x200);
  l.tokens(at(0xa800), 0x100);
  for (const auto& [address, bytes] : {std::pair{at(0xa000), 0x200u}, std::pair{at(0xa800), 0x100u}}) {
    ASSERT_TRUE(l.deferred.defer_tokens(kSeed, kTile, address, bytes, 1));
    arch::payload_tokens(kSeed, kTile, address, 1, l.plain.mutable_words(address, bytes));
    EXPECT_TRUE(l.waits(at(0xa000), 4));
  }
  l.expect_same(at(0xa000), 4096);
}

TEST(TokenPages, APageWrittenBeforeGetsItsTokensAtOnce) {
  Loaded l;
  const std::vector<uint8_t> code(64, 0xab);
  l.deferred.write(at(0x3000), 64, code.data());
  l.plain.write(at(0x3000), 64, code.data());
  l.tokens(at(0x3040), 0x200);
  EXPECT_FALSE(l.waits(at(0x3040), 4));
  l.expect_same(at(0x3000), 4096);
}

TEST(TokenPages, AWriteKeepsTheOtherTokensOfItsPage) {
  Loaded l;
  l.tokens(at(0x4000), 2 * 4096);
  l.deferred.write_word(at(0x4010), 0xdeadbeef);
  l.plain.write_word(at(0x4010), 0xdeadbeef);
  l.expect_same(at(0x4000), 2 * 4096);
}

// A copy across a page boundary of its source, into the middle of a destination page that
// holds tokens too: made there (a package's run) or laid there as runs (a replay's).
class TokenPagesCopy : public ::testing::TestWithParam<bool> {};

TEST_P(TokenPagesCopy, MovesTheTokensAndLeavesItsSourceUntouched) {
  const bool lay = GetParam();
  Loaded l;
  l.tokens(at(0x8000), 4 * 4096);
  l.tokens(at(0x20000), 4096);
  const uint32_t from = at(0x8ff0), to = at(0x20100), bytes = 0x40;
  if (lay) {
    l.arena.lay_out(l.deferred.place(from, bytes), l.deferred.mutable_place(to, bytes), bytes);
  } else {
    l.arena.copy_out(l.deferred.place(from, bytes), l.deferred.mutable_place(to, bytes), bytes);
  }
  l.plain.copy_from(l.plain, from, to, bytes);
  EXPECT_TRUE(l.waits(from, bytes));   // never made
  EXPECT_EQ(l.waits(to, bytes), lay);  // made before the copy landed, or holding the runs moved there
  l.expect_same(at(0x20000), 4096);
  l.expect_same(at(0x8000), 4 * 4096);
}

INSTANTIATE_TEST_SUITE_P(Copies, TokenPagesCopy, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("LaidAsRuns") : std::string("MadeAtTheDestination");
                         });

// A replay's copies: two senders' runs side by side on an untouched receiver page, then the next
// iteration's over them. The page is never made, and the check compares its runs.
TEST(TokenPages, CopiesLayTheirRunsOverAnUntouchedPageAndTheNextIterationsOverThose) {
  Loaded l;
  SramArena& arena = l.arena;
  Sram other(c600(), arena, 0);  // a second sender's SRAM (tile 9)
  Sram other_plain(c600());
  constexpr uint32_t kOther = 9;
  const uint32_t to = at(0x50000);
  for (uint32_t iteration = 0; iteration < 2; ++iteration) {
    ASSERT_TRUE(l.deferred.defer_tokens(kSeed, kTile, at(0x1000), 0x100, iteration));
    arch::payload_tokens(kSeed, kTile, at(0x1000), iteration, l.plain.mutable_words(at(0x1000), 0x100));
    ASSERT_TRUE(other.defer_tokens(kSeed, kOther, at(0x2000), 0x80, iteration));
    arch::payload_tokens(kSeed, kOther, at(0x2000), iteration, other_plain.mutable_words(at(0x2000), 0x80));
    arena.lay_out(l.deferred.place(at(0x1000), 0x100), l.deferred.mutable_place(to, 0x100), 0x100);
    arena.lay_out(other.place(at(0x2000), 0x80), l.deferred.mutable_place(to + 0x100, 0x80), 0x80);
    l.plain.copy_from(l.plain, at(0x1000), to, 0x100);
    l.plain.copy_from(other_plain, at(0x2000), to + 0x100, 0x80);
    EXPECT_TRUE(l.waits(to, 4));
    EXPECT_TRUE(l.deferred.holds_tokens(to, 0x40, arch::payload_token(kSeed, kTile, at(0x1000), iteration)));
    EXPECT_TRUE(l.deferred.holds_tokens(to + 0x100, 0x20, arch::payload_token(kSeed, kOther, at(0x2000), iteration)));
    EXPECT_TRUE(l.deferred.holds_tokens(to + 0x40, 0x10, arch::payload_token(kSeed, kTile, at(0x1040), iteration)));
    // Another iteration's tokens, a word off, or a span that runs into the next sender's.
    EXPECT_FALSE(l.deferred.holds_tokens(to, 0x40, arch::payload_token(kSeed, kTile, at(0x1000), iteration + 1)));
    EXPECT_FALSE(l.deferred.holds_tokens(to, 0x40, arch::payload_token(kSeed, kTile, at(0x1004), iteration)));
    EXPECT_FALSE(l.deferred.holds_tokens(to, 0x41, arch::payload_token(kSeed, kTile, at(0x1000), iteration)));
    EXPECT_TRUE(l.waits(to, 4));  // compared, not made
  }
  l.expect_same(to - 0x100, 4096);
}

TEST(TokenPages, ACopyToAPageWrittenBeforeOrReadByAnotherCopyMakesIt) {
  Loaded l;
  l.tokens(at(0x1000), 0x200);
  const std::vector<uint8_t> code(64, 0xab);
  l.deferred.write(at(0x60000), 64, code.data());  // something wrote this page
  l.plain.write(at(0x60000), 64, code.data());
  l.arena.lay_out(l.deferred.place(at(0x1000), 0x100), l.deferred.mutable_place(at(0x60100), 0x100), 0x100);
  l.plain.copy_from(l.plain, at(0x1000), at(0x60100), 0x100);
  EXPECT_FALSE(l.waits(at(0x60100), 4));
  // An untouched page that some copy meanwhile reads (its bit set) is not laid over either.
  const size_t read_page = l.arena.page_of(l.deferred.place(at(0x70000), 4));
  std::vector<uint64_t> read_pages(l.arena.epochs().pages() / 64 + 1, 0);
  read_pages[read_page / 64] |= uint64_t{1} << (read_page % 64);
  l.arena.lay_out(l.deferred.place(at(0x1100), 0x100), l.deferred.mutable_place(at(0x70000), 0x100), 0x100, read_pages);
  l.plain.copy_from(l.plain, at(0x1100), at(0x70000), 0x100);
  EXPECT_FALSE(l.waits(at(0x70000), 4));
  l.expect_same(at(0x60000), 4096);
  l.expect_same(at(0x70000), 4096);
  EXPECT_TRUE(l.waits(at(0x1000), 4));
}

// One copy from the end of a page whose tokens were made on into the next page, whose tokens
// wait, both onto one untouched page: the second piece must not lay its run over a page the first
// piece wrote (a replay of a gather phase once compared zero there).
TEST(TokenPages, ACopyFromAMadePageIntoAPageOfTokensLandsBothPiecesOnOnePage) {
  Loaded l;
  l.tokens(at(0x1e00), 0x400);                                                       // 0x1e00..0x2200: two pages
  EXPECT_EQ(bytes_of(l.deferred, at(0x1f00), 4), bytes_of(l.plain, at(0x1f00), 4));  // the first page made
  EXPECT_FALSE(l.waits(at(0x1e00), 4));
  EXPECT_TRUE(l.waits(at(0x2000), 4));
  l.arena.lay_out(l.deferred.place(at(0x1f00), 0x200), l.deferred.mutable_place(at(0x50100), 0x200), 0x200);
  l.plain.copy_from(l.plain, at(0x1f00), at(0x50100), 0x200);
  // Compared as a replay's check compares, run by run: reading the page would make it, and the
  // making keeps the first piece's words in memory even where a run was laid over them.
  EXPECT_TRUE(l.deferred.holds_tokens(at(0x50100), 0x80, arch::payload_token(kSeed, kTile, at(0x1f00), 0)));
  l.expect_same(at(0x50000), 4096);
}

// In a replay, writes smaller than a page land as runs of bytes on pages nothing else wrote: a
// tile's rows, its code, its loop counter. They read back, and are made once anything takes a
// span of their page, or lays tokens or copies onto it.
TEST(TokenPages, SmallWritesLayBytesThatReadBackAndAreMadeWhenThePageIsTaken) {
  Loaded l;
  l.arena.lay_small_writes(true);
  std::vector<uint8_t> code(216);
  for (size_t i = 0; i < code.size(); ++i) code[i] = static_cast<uint8_t>(3 * i + 1);
  for (Sram* m : {&l.deferred, &l.plain}) {
    m->write(at(0x33f28), static_cast<uint32_t>(code.size()), code.data());
    m->write_word(at(0x33ff8), 7);          // a counter within the code: in place
    m->write_word(at(0x33e00), 9);          // apart: a second run
    m->write(at(0x34ffe), 3, code.data());  // across a page edge, unaligned
  }
  EXPECT_TRUE(l.waits(at(0x33000), 4));
  EXPECT_TRUE(l.waits(at(0x34000), 4));
  l.expect_same(at(0x33000), 3 * 4096);
  EXPECT_EQ(l.deferred.read_word(at(0x33ff8)), 7u);
  EXPECT_TRUE(l.deferred.equal(at(0x33f28), 8, code.data()));
  EXPECT_FALSE(l.deferred.equal(at(0x33f28), 8, code.data() + 1));
  EXPECT_TRUE(l.waits(at(0x33000), 4));  // read and compared, not made
  l.tokens(at(0x33000), 0x100);          // tokens on a page of bytes: the page is made, then written
  EXPECT_FALSE(l.waits(at(0x33000), 4));
  (void)l.deferred.span(at(0x35000), 4);
  EXPECT_FALSE(l.waits(at(0x35000), 4));
  l.expect_same(at(0x33000), 3 * 4096);
  // A page written at full size first is written, and small writes then land in memory.
  const std::vector<uint8_t> big(4096, 0x11);
  for (Sram* m : {&l.deferred, &l.plain}) {
    m->write(at(0x40000), 4096, big.data());
    m->write_word(at(0x40010), 5);
  }
  EXPECT_FALSE(l.waits(at(0x40000), 4));
  l.expect_same(at(0x40000), 4096);
}

// A replay's refill: the next iteration's tokens over the same sources.
TEST(TokenPages, ARefillThatCoversTheDeferredRangeDefersTheNextIterationAndIsAWrite) {
  Loaded l;
  l.tokens(at(0x6000), 0x300);
  const auto page = l.arena.page_of(l.deferred.place(at(0x6000), 4));
  const auto before = l.arena.epochs().last_write(page);
  l.arena.epochs().advance();
  ASSERT_TRUE(l.deferred.defer_tokens(kSeed, kTile, at(0x6000), 0x300, 1));
  arch::payload_tokens(kSeed, kTile, at(0x6000), 1, l.plain.mutable_words(at(0x6000), 0x300));
  EXPECT_TRUE(l.waits(at(0x6000), 4));
  EXPECT_GT(l.arena.epochs().last_write(page), before);  // a repeat that reads it copies again
  l.expect_same(at(0x6000), 4096);
}

TEST(TokenPages, ARefillOfPartOfTheDeferredRangeSplitsIt) {
  Loaded l;
  l.tokens(at(0x7000), 0x300);
  ASSERT_TRUE(l.deferred.defer_tokens(kSeed, kTile, at(0x7100), 0x100, 2));
  arch::payload_tokens(kSeed, kTile, at(0x7100), 2, l.plain.mutable_words(at(0x7100), 0x100));
  EXPECT_TRUE(l.waits(at(0x7000), 4));  // three ranges: iteration 0, 2, 0
  l.expect_same(at(0x7000), 4096);
}

TEST(TokenPages, ASecondSeedOrUnalignedWordsAreNotDeferred) {
  SramArena arena(c600(), 1);
  Sram m(c600(), arena, 0);
  EXPECT_TRUE(m.defer_tokens(kSeed, kTile, at(0x1000), 4096));
  EXPECT_FALSE(m.defer_tokens(kSeed + 1, kTile, at(0x3000), 4096));
  EXPECT_FALSE(m.defer_tokens(kSeed, kTile, at(0x5002), 8));
  Sram own(c600());
  EXPECT_FALSE(own.defer_tokens(kSeed, kTile, at(0x1000), 4096));
}

// write_tokens defers where it can and writes at once where it cannot: either way the words
// read back as the plain load's.
TEST(TokenPages, WriteTokensReadsAsThePlainLoadDeferredOrNot) {
  SramArena arena(c600(), 1);
  Sram arena_slot(c600(), arena, 0), own(c600()), plain(c600());
  arena_slot.write_tokens(kSeed, kTile, at(0x1000), 4096);
  arena_slot.write_tokens(kSeed + 1, kTile, at(0x3000), 4096);  // a second seed: written now
  own.write_tokens(kSeed, kTile, at(0x1000), 4096);
  write_tokens(plain, at(0x1000), 4096);
  write_tokens(plain, at(0x3000), 4096, kSeed + 1);
  EXPECT_EQ(bytes_of(arena_slot, at(0x1000), 0x3000), bytes_of(plain, at(0x1000), 0x3000));
  EXPECT_EQ(bytes_of(own, at(0x1000), 4096), bytes_of(plain, at(0x1000), 4096));
  EXPECT_THROW(own.write_tokens(kSeed, kTile, at(0x5002), 8), std::invalid_argument);
}

TEST(TokenPages, ThreadsThatTouchOnePageAtOnceAllSeeItsTokens) {
  Loaded l;
  l.tokens(at(0x10000), 64 * 4096);
  std::vector<std::vector<uint8_t>> seen(4);
  std::vector<std::thread> readers;
  for (auto& out : seen) readers.emplace_back([&] { out = bytes_of(l.deferred, at(0x10000), 64 * 4096); });
  for (auto& r : readers) r.join();
  for (const auto& out : seen) EXPECT_EQ(out, bytes_of(l.plain, at(0x10000), 64 * 4096));
}

// Random deferrals (ranges of three iterations, some touching, some apart, some overlapping),
// plain writes, reads, token compares and copies out over two pages, some copies a few words off,
// against an SRAM that writes every token at once. A read makes a page of tokens for good, so each
// episode starts on fresh pages; every other episode's copies land on untouched pages, which then
// take their runs, and half the episodes lay small writes as runs of bytes (a replay's). Fixed seeds.
class TokenPagesRandomly : public ::testing::TestWithParam<uint32_t> {};

TEST_P(TokenPagesRandomly, ReadAndCopyAsThePlainSramDoes) {
  std::mt19937 random(GetParam());
  const uint32_t base = at(0xc000), span = 2 * 4096, destination = at(0x40000);
  const auto word_in = [&](uint32_t words) { return 4 * std::uniform_int_distribution<uint32_t>(0, words)(random); };
  const std::vector<uint8_t> old(span, 0x5a);
  for (int episode = 0; episode < 40; ++episode) {
    Loaded l;
    l.arena.lay_small_writes(episode % 4 >= 2);  // a replay's writes smaller than a page: runs of bytes
    if (episode % 2 == 0) {
      l.deferred.write(destination, span, old.data());
      l.plain.write(destination, span, old.data());
    }
    std::pair<uint32_t, uint32_t> last;  // the last step's lo and bytes
    for (int step = 0; step < 12; ++step) {
      uint32_t lo = word_in(span / 4 - 1), bytes = std::max(4u, word_in(std::min(160u, (span - lo) / 4)));
      // A third of the steps at the last step's place: a refill's or a copy's next iteration.
      if (step > 0 && std::uniform_int_distribution<int>(0, 2)(random) == 0) std::tie(lo, bytes) = last;
      last = {lo, bytes};
      const int kind = std::uniform_int_distribution<int>(0, 12)(random);
      if (kind < 6) {
        const uint32_t iteration = std::uniform_int_distribution<uint32_t>(0, 2)(random);
        l.deferred.write_tokens(kSeed, kTile, base + lo, bytes, iteration);
        arch::payload_tokens(kSeed, kTile, base + lo, iteration, l.plain.mutable_words(base + lo, bytes));
      } else if (kind == 6) {
        l.deferred.write_word(base + lo, 0x5eed0000u + uint32_t(step));
        l.plain.write_word(base + lo, 0x5eed0000u + uint32_t(step));
      } else if (kind < 9) {
        // Made at the destination (a package's run) or laid there as runs (a replay's); a third of
        // them a few words off, so that one copy's pieces from two pages meet on one.
        const uint32_t to_lo = step % 3 == 0 ? std::min(lo + word_in(64), span - bytes) : lo;
        const uint8_t* from = l.deferred.place(base + lo, bytes);
        uint8_t* to = l.deferred.mutable_place(destination + to_lo, bytes);
        if (kind == 7) {
          l.arena.copy_out(from, to, bytes);
        } else {
          l.arena.lay_out(from, to, bytes);
        }
        l.plain.copy_from(l.plain, base + lo, destination + to_lo, bytes);
      } else if (kind == 9) {
        ASSERT_EQ(bytes_of(l.deferred, base + lo, bytes), bytes_of(l.plain, base + lo, bytes))
            << "episode " << episode << " step " << step;
      } else if (kind > 10) {
        // A few bytes anywhere, aligned or not: runs of bytes where small writes are laid.
        const uint32_t n = std::uniform_int_distribution<uint32_t>(1, 48)(random);
        const uint32_t where = std::uniform_int_distribution<uint32_t>(0, span - n)(random);
        std::vector<uint8_t> data(n);
        for (uint8_t& b : data) b = static_cast<uint8_t>(random());
        const uint32_t address = (kind == 11 ? base : destination) + where;
        l.deferred.write(address, n, data.data());
        l.plain.write(address, n, data.data());
      } else {
        // Tokens of some iteration from a source address near lo, compared at the destination.
        const uint32_t iteration = std::uniform_int_distribution<uint32_t>(0, 2)(random);
        const uint32_t first = arch::payload_token(kSeed, kTile, base + lo + 4 * (step % 2), iteration);
        std::vector<uint32_t> tokens(bytes / 4);
        arch::tokens_following(first, tokens);
        ASSERT_EQ(l.deferred.holds_tokens(destination + lo, bytes / 4, first),
                  l.plain.equal(destination + lo, bytes, reinterpret_cast<const uint8_t*>(tokens.data())))
            << "episode " << episode << " step " << step;
      }
    }
    ASSERT_EQ(bytes_of(l.deferred, destination, span), bytes_of(l.plain, destination, span)) << "episode " << episode;
    ASSERT_EQ(bytes_of(l.deferred, base, span), bytes_of(l.plain, base, span)) << "episode " << episode;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, TokenPagesRandomly, ::testing::Values(1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u));

}  // namespace
}  // namespace lockstep::model
