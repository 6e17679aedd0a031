// arch::parallel_for_each reports the failure of the lowest index, whatever the threads did.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>

#include "io/parallel.hpp"

namespace lockstep::arch {
namespace {

TEST(ParallelForEach, RethrowsTheLowestFailingIndexAfterRunningEvery) {
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> ran{0};
    try {
      parallel_for_each(0, 1000, [&](int i) {
        ++ran;
        if (i % 97 == 13) throw std::runtime_error("index " + std::to_string(i));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "index 13");
    }
    EXPECT_EQ(ran.load(), 1000);
  }
}

}  // namespace
}  // namespace lockstep::arch
