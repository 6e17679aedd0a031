#pragma once
// A set of occupied half-open event intervals [a, b) with adjacent or overlapping intervals
// merged: the per-tile timelines of the physical scheduler (sends, mux windows, memory
// element windows). Earliest-fit queries make list scheduling backfill gaps.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

namespace lockstep::compiler {

// Kept in a sorted vector: the scheduler asks far more than it adds, and adds mostly near the
// end of a timeline, so contiguous storage beats a tree's node per interval.
class IntervalSet {
 public:
  // The smallest x' >= x such that [x', x' + length) is free.
  int32_t earliest_free(int32_t x, int32_t length) const {
    auto it = first_after(x);
    if (it != intervals_.begin()) {
      auto prev = std::prev(it);
      if (prev->second > x) x = prev->second;
    }
    while (it != intervals_.end() && it->first < x + length) {
      x = it->second;
      ++it;
    }
    return x;
  }

  // The end of the last interval that intersects [a, b), or `a` when none does: the first
  // start at or after which [start, start + (b - a)) could be free again is at least that.
  int32_t overlap_end(int32_t a, int32_t b) const {
    int32_t end = a;
    auto it = first_after(a);
    if (it != intervals_.begin()) {
      auto prev = std::prev(it);
      if (prev->second > a) end = prev->second;
    }
    while (it != intervals_.end() && it->first < b) {
      end = it->second;
      ++it;
    }
    return end;
  }

  bool intersects(int32_t a, int32_t b) const { return overlap_end(a, b) != a; }

  void add(int32_t a, int32_t b) {
    if (a >= b) return;
    auto first = first_after(a);
    if (first != intervals_.begin()) {
      auto prev = std::prev(first);
      if (prev->second >= a) {
        a = prev->first;
        if (prev->second > b) b = prev->second;
        first = prev;
      }
    }
    auto last = first;
    while (last != intervals_.end() && last->first <= b) {
      if (last->second > b) b = last->second;
      ++last;
    }
    if (first == last) {
      intervals_.insert(first, {a, b});
      return;
    }
    *first = {a, b};
    intervals_.erase(std::next(first), last);
  }

  bool empty() const { return intervals_.empty(); }
  void clear() { intervals_.clear(); }

 private:
  using Interval = std::pair<int32_t, int32_t>;  // [first, second)
  // The first interval starting after x.
  std::vector<Interval>::const_iterator first_after(int32_t x) const {
    return std::upper_bound(intervals_.begin(), intervals_.end(), x,
                            [](int32_t value, const Interval& interval) { return value < interval.first; });
  }
  std::vector<Interval>::iterator first_after(int32_t x) {
    return std::upper_bound(intervals_.begin(), intervals_.end(), x,
                            [](int32_t value, const Interval& interval) { return value < interval.first; });
  }

  std::vector<Interval> intervals_;  // sorted by start, disjoint, none touching
};

}  // namespace lockstep::compiler
