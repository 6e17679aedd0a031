// arch::group_by against its definition: every group lists its items in item order, whatever
// the blocks the items are counted and placed in. And arch::flatten.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lockstep::arch
