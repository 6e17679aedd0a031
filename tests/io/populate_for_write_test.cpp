// arch::populate_for_write of several ranges: each stretch of ranges less than a page apart is
// mapped in one piece, and memory farther away stays untouched (read with mincore).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "io/mapped_file.hpp"

namespace lockstep::arch {
namespace {

constexpr size_t kPage = 4096, kPages = 32;

// Which pages of the mapping the kernel holds.
std::vector<bool> resident(uint8_t* base) {
  std::vector<unsigned char> in(kPages);
  EXPECT_EQ(::mincore(base, kPages * kPage, in.data()), 0);
  std::vector<bool> pages(kPages);
  for (size_t p = 0; p < kPages; ++p) pages[p] = (in[p] & 1) != 0;
  return pages;
}

TEST(PopulateForWrite, MapsEachStretchOfNeighbouringRangesAndNothingElse) {
  void* mapped = ::mmap(nullptr, kPages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto* base = static_cast<uint8_t*>(mapped);
  const auto at = [&](size_t offset) { return reinterpret_cast<uintptr_t>(base + offset); };
#if defined(MADV_POPULATE_WRITE)
  if (::madvise(base, kPage, MADV_POPULATE_WRITE) != 0) {
    ::munmap(mapped, kPages * kPage);
    GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE";
  }
#else
  ::munmap(mapped, kPages * kPage);
  GTEST_SKIP() << "built without MADV_POPULATE_WRITE";
#endif
  // Out of order. Pages 2-4: a two-page range and a range within page 4 less than a page after
  // it, mapped as one stretch (alone, the second would be left to its fault). Page 7: a small
  // range more than a page farther on, on its own and so left alone. Pages 20-21: a range of
  // its own.
  populate_for_write({{at(20 * kPage), at(22 * kPage)},
                      {at(4 * kPage + 512), at(4 * kPage + 1024)},
                      {at(7 * kPage + 100), at(7 * kPage + 200)},
                      {at(2 * kPage + 100), at(3 * kPage + 900)}});
  const std::vector<bool> pages = resident(base);
  for (size_t p = 1; p < kPages; ++p) {  // page 0: the probe above
    const bool expected = (p >= 2 && p <= 4) || p == 20 || p == 21;
    EXPECT_EQ(pages[p], expected) << "page " << p;
  }
  ::munmap(mapped, kPages * kPage);
}

}  // namespace
}  // namespace lockstep::arch
