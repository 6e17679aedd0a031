// arch::group_by against its definition: every group lists its items in item order, whatever
// the blocks the items are counted and placed in. And arch::flatten, into a plain vector and
// into an UninitializedVector.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "io/parallel.hpp"

namespace lockstep::arch {
namespace {

// The definition, one item at a time.
std::vector<std::vector<uint32_t>> plain_groups(const std::vector<uint32_t>& keys, size_t groups) {
  std::vector<std::vector<uint32_t>> out(groups);
  for (uint32_t i = 0; i < keys.size(); ++i) out[keys[i]].push_back(i);
  return out;
}

class GroupBy : public ::testing::TestWithParam<std::pair<size_t, size_t>> {};

TEST_P(GroupBy, ListsEachGroupsItemsInItemOrder) {
  const auto [count, groups] = GetParam();
  std::mt19937 random(7);
  std::vector<uint32_t> keys(count);
  // Mostly runs of one key (as selections by sender are), with scattered ones between.
  for (size_t i = 0; i < count; ++i) {
    keys[i] = random() % 4 == 0 ? random() % groups : static_cast<uint32_t>(i * groups / count);
  }
  const Groups got = group_by(count, groups, [&](size_t i) { return keys[i]; });
  const auto want = plain_groups(keys, groups);
  ASSERT_EQ(got.size(), groups);
  for (size_t g = 0; g < groups; ++g) {
    const auto items = got.of(g);
    ASSERT_EQ(std::vector<uint32_t>(items.begin(), items.end()), want[g]) << "group " << g;
  }
}

// Below one block, several blocks, the most blocks, and more groups than counters allow blocks.
INSTANTIATE_TEST_SUITE_P(Sizes, GroupBy,
                         ::testing::Values(std::pair<size_t, size_t>{0, 3}, std::pair<size_t, size_t>{1000, 7},
                                           std::pair<size_t, size_t>{200'000, 1472},
                                           std::pair<size_t, size_t>{2'000'000, 1472},
                                           std::pair<size_t, size_t>{300'000, 3'000'000}));

TEST(Flatten, LaysTheListsEndToEndAndSaysWhereEachStarts) {
  const std::vector<std::vector<int>> lists{{1, 2}, {}, {3}, {4, 5, 6}};
  std::vector<int> out{9};  // replaced, not appended to
  EXPECT_EQ(flatten(lists, out), (std::vector<uint32_t>{0, 2, 2, 3, 6}));
  EXPECT_EQ(out, (std::vector<int>{1, 2, 3, 4, 5, 6}));
}

// Plain data with default member initialisers, as model::WriteRun and the planned copies are.
struct Piece {
  uint32_t list = 7;
  uint32_t index = 7;
  bool operator==(const Piece&) const = default;
};

TEST(Flatten, FillsAnUninitializedVectorWholeFromManyListsInParallel) {
  std::vector<std::vector<Piece>> lists(1472);
  std::vector<Piece> want;
  for (uint32_t l = 0; l < lists.size(); ++l) {
    for (uint32_t i = 0; i < (l * 37) % 211; ++i) lists[l].push_back({l, i});
    want.insert(want.end(), lists[l].begin(), lists[l].end());
  }
  UninitializedVector<Piece> out;
  const std::vector<uint32_t> begin = flatten(lists, out);
  ASSERT_EQ(begin.back(), want.size());
  EXPECT_TRUE(std::equal(out.begin(), out.end(), want.begin(), want.end()));
  EXPECT_EQ(out[begin[5]], (Piece{5, 0}));
}

TEST(UninitializedVector, ConstructsWhatItIsGivenAndCopiesLikeAVector) {
  UninitializedVector<Piece> v;
  v.resize(3, Piece{1, 2});  // a value given is constructed as in any vector
  v.push_back({3, 4});
  v.emplace_back();  // default construction with no arguments writes nothing: assign before reading
  v.back() = {5, 6};
  const UninitializedVector<Piece> copy = v;
  EXPECT_EQ(std::vector<Piece>(copy.begin(), copy.end()), (std::vector<Piece>{{1, 2}, {1, 2}, {1, 2}, {3, 4}, {5, 6}}));
}

}  // namespace
}  // namespace lockstep::arch
