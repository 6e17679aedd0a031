// arch::pages_in_use: the pages of a mapping that may hold anything but zero are the ones the
// process wrote (in memory or in swap); pages never touched are not, nor are pages given back.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <vector>

#include "io/mapped_file.hpp"

namespace lockstep::arch {
namespace {

constexpr size_t kInUsePage = 4096, kInUsePages = 16;

TEST(PagesInUse, AreTheWrittenPagesAndNoneNeverTouchedOrGivenBack) {
  void* mapped = ::mmap(nullptr, kInUsePages * kInUsePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto* base = static_cast<uint8_t*>(mapped);
  if (pages_in_use(base, kInUsePages * kInUsePage).empty()) {
    ::munmap(mapped, kInUsePages * kInUsePage);
    GTEST_SKIP() << "this kernel does not say (no /proc/self/pagemap)";
  }
  base[2 * kInUsePage + 17] = 1;
  base[9 * kInUsePage] = 1;
  base[14 * kInUsePage + 4095] = 1;
  base[11 * kInUsePage] = 1;
  ASSERT_EQ(::madvise(base + 11 * kInUsePage, kInUsePage, MADV_DONTNEED), 0);  // given back: zero again
  const std::vector<uint8_t> in_use = pages_in_use(base, kInUsePages * kInUsePage);
  ASSERT_EQ(in_use.size(), kInUsePages);
  for (size_t p = 0; p < kInUsePages; ++p) {
    EXPECT_EQ(in_use[p], p == 2 || p == 9 || p == 14 ? 1 : 0) << "page " << p;
  }
  // A range that starts at a later page reads that page's entry first.
  const std::vector<uint8_t> tail = pages_in_use(base + 9 * kInUsePage, 3 * kInUsePage);
  EXPECT_EQ(tail, (std::vector<uint8_t>{1, 0, 0}));
  ::munmap(mapped, kInUsePages * kInUsePage);
}

}  // namespace
}  // namespace lockstep::arch
