#pragma once
// Ordered parallel loops. parallel_for_each: tbb::parallel_for over an index range whose
// failures read as one thread's would: every index runs, then the exception of the lowest
// failing index is rethrown, so which error a command reports never depends on thread timing.
// group_by: items grouped by a key (a tile, say) so each group can go to its own task and
// still see its items in the order one thread would. UninitializedAllocator: a vector whose
// resize writes nothing, so that the threads that fill it touch its fresh pages first.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "io/mapped_file.hpp"

namespace lockstep::arch {

// For a large list that parallel tasks fill whole right after `resize`: resize then neither
// zeroes nor runs default member initialisers, so each page is first written by the task that
// fills it, on its own core, instead of once more by the resizing thread (a page's first touch
// costs 5-11 us on a paravirtualised guest; docs/performance.md, round thirteen). Only for
// element types whose storage is the object (trivially copyable and destructible): every
// element must be written before it is read.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  using value_type = T;
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  template <class U>
  void construct(U*) noexcept {
    static_assert(std::is_trivially_copyable_v<U> && std::is_trivially_destructible_v<U>,
                  "UninitializedAllocator leaves elements unwritten: only for plain data");
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <class T>
using UninitializedVector = std::vector<T, UninitializedAllocator<T>>;

// Items 0..count-1 grouped by key(i) < groups, each group in item order (a counting sort):
// of(g) lists group g's items. A large count is counted and placed in blocks in parallel
// (key must be safe to call from several threads); each block's items keep their order
// and go after the earlier blocks' in every group, so the result is the one-thread one.
struct Groups {
  std::vector<uint32_t> begin, order;
  size_t size() const { return begin.size() - 1; }
  std::span<uint32_t> of(size_t g) { return {order.data() + begin[g], begin[g + 1] - begin[g]}; }
  std::span<const uint32_t> of(size_t g) const { return {order.data() + begin[g], begin[g + 1] - begin[g]}; }
};
template <class Key>
Groups group_by(size_t count, size_t groups, Key key) {
  constexpr size_t kItemsPerBlock = size_t{1} << 16, kMostBlocks = 16, kMostCounters = size_t{1} << 22;
  const size_t blocks =
      std::max<size_t>(1, std::min({kMostBlocks, count / kItemsPerBlock, kMostCounters / std::max<size_t>(1, groups)}));
  const auto first = [&](size_t b) { return count * b / blocks; };
  // next[b * groups + g]: where block b's next item of group g goes.
  std::vector<uint32_t> next(blocks * groups, 0);
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    for (size_t i = first(b); i < first(b + 1); ++i) ++next[b * groups + key(i)];
  });
  Groups out{std::vector<uint32_t>(groups + 1, 0), std::vector<uint32_t>(count)};
  uint32_t placed = 0;
  for (size_t g = 0; g < groups; ++g) {
    out.begin[g] = placed;
    for (size_t b = 0; b < blocks; ++b) {
      const uint32_t items = next[b * groups + g];
      next[b * groups + g] = placed;
      placed += items;
    }
  }
  out.begin[groups] = placed;
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    for (size_t i = first(b); i < first(b + 1); ++i) out.order[next[b * groups + key(i)]++] = static_cast<uint32_t>(i);
  });
  return out;
}
// Lists made in parallel (one per tile, say) laid end to end in list order into `out`, the
// lists copied in parallel; returns where each list starts there, then the end.
template <class T, class Out>
std::vector<uint32_t> flatten(const std::vector<std::vector<T>>& lists, Out& out) {
  std::vector<uint32_t> begin(lists.size() + 1, 0);
  for (size_t l = 0; l < lists.size(); ++l) begin[l + 1] = begin[l] + static_cast<uint32_t>(lists[l].size());
  resize_populated(out, begin.back());
  tbb::parallel_for(size_t{0}, lists.size(),
                    [&](size_t l) { std::copy(lists[l].begin(), lists[l].end(), out.begin() + begin[l]); });
  return begin;
}

// The same with as many groups as the largest key needs.
template <class Key>
Groups group_by(size_t count, Key key) {
  size_t groups = 0;
  for (size_t i = 0; i < count; ++i) groups = std::max<size_t>(groups, size_t{key(i)} + 1);
  return group_by(count, groups, key);
}

template <typename Index, typename Fn>
void parallel_for_each(Index begin, Index end, const Fn& fn) {
  std::mutex mutex;
  Index first_failure = end;
  std::exception_ptr failure;
  tbb::parallel_for(begin, end, [&](Index i) {
    try {
      fn(i);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex);
      if (i < first_failure) {
        first_failure = i;
        failure = std::current_exception();
      }
    }
  });
  if (failure) std::rethrow_exception(failure);
}

}  // namespace lockstep::arch
