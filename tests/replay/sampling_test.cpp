#include "replay/sampling.hpp"

#include <gtest/gtest.h>

#include <set>

#include "formats/token.hpp"

namespace lockstep::replay {
namespace {

// 6 destination tiles with very different word counts, one Repeat of 3 iterations.
arch::CapturePhase uneven_phase() {
  arch::CapturePhase phase;
  phase.id = 4;
  phase.iterations = 3;
  auto transfer = [&](uint32_t source, std::vector<uint32_t> tiles, uint32_t words) {
    arch::Transfer t;
    t.source_tile = source;
    t.source_addresses = {0x50000, 0x51000, 0x52000};
    for (uint32_t tile : tiles) t.destinations.push_back({tile, 0x60000 + 64 * tile});
    t.words = words;
    phase.transfers.push_back(t);
  };
  transfer(0, {1, 2}, 500);
  transfer(1, {3}, 2);
  transfer(2, {4, 5, 6}, 1);
  transfer(3, {1}, 40);
  return phase;
}

uint32_t tile_of(const arch::CapturePhase& phase, const DestinationWord& w) {
  return phase.transfers[w.transfer].destinations[w.destination].tile;
}

TEST(Sampling, AllWordsWhenNoSampleSize) {
  const auto phase = uneven_phase();
  EXPECT_EQ(count_destination_words(phase), 1000u + 2 + 3 + 40);
  const auto all = sample_destination_words(phase, 7, std::nullopt);
  ASSERT_EQ(all.size(), 1045u);
  EXPECT_EQ(all.front(), (DestinationWord{0, 0, 0}));
  EXPECT_EQ(all.back(), (DestinationWord{3, 0, 39}));
  // A sample at least as large as the phase is the whole phase.
  EXPECT_EQ(sample_destination_words(phase, 7, 5000), all);
}

TEST(Sampling, CoversEveryDestinationTileBeforeRepeatingOne) {
  const auto phase = uneven_phase();
  for (uint64_t seed : {1u, 2u, 99u}) {
    const auto sample = sample_destination_words(phase, seed, 20);
    ASSERT_EQ(sample.size(), 20u);
    std::set<uint32_t> first_round;
    for (size_t i = 0; i < 6; ++i) first_round.insert(tile_of(phase, sample[i]));
    EXPECT_EQ(first_round, (std::set<uint32_t>{1, 2, 3, 4, 5, 6})) << "seed " << seed;
  }
}

TEST(Sampling, ReproducibleDistinctAndSeeded) {
  const auto phase = uneven_phase();
  const auto a = sample_destination_words(phase, 42, 300);
  EXPECT_EQ(a, sample_destination_words(phase, 42, 300));
  EXPECT_NE(a, sample_destination_words(phase, 43, 300));
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> distinct;
  for (const auto& w : a) {
    EXPECT_LT(w.word, phase.transfers[w.transfer].words);
    distinct.insert({w.transfer, w.destination, w.word});
  }
  EXPECT_EQ(distinct.size(), a.size()) << "a sample never takes a word twice";
  // Tiles with few words run out; the rest keep being visited in turn.
  size_t tile3 = 0;
  for (const auto& w : a) tile3 += tile_of(phase, w) == 3;
  EXPECT_EQ(tile3, 2u);
}

TEST(Sampling, ExpectedTokenFollowsTheIteration) {
  const auto phase = uneven_phase();
  const DestinationWord w{3, 0, 5};
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(expected_token(phase, w, i, 9), arch::payload_token(9, 3, 0x50000 + 0x1000 * i + 20, i));
  }
}

TEST(Sampling, SeededRandomIsUniformAndBounded) {
  SeededRandom random(5);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 7000; ++i) ++counts[random.below(7)];
  for (int c : counts) EXPECT_NEAR(c, 1000, 150);
  EXPECT_EQ(SeededRandom(5).next(), SeededRandom(5).next());
}

}  // namespace
}  // namespace lockstep::replay
