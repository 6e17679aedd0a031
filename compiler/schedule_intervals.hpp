#pragma once
// A set of occupied half-open event intervals [a, b) with adjacent or overlapping intervals
// merged: the per-tile timelines of the physical scheduler (sends, mux windows, memory
// element windows). Earliest-fit queries make list scheduling backfill gaps.
#include <cstdint>
#include <iterator>
#include <map>

namespace lockstep::compiler {

class IntervalSet {
 public:
  // The smallest x' >= x such that [x', x' + length) is free.
  int32_t earliest_free(int32_t x, int32_t length) const {
    auto it = intervals_.upper_bound(x);
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
    auto it = intervals_.upper_bound(a);
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
    auto it = intervals_.upper_bound(a);
    if (it != intervals_.begin()) {
      auto prev = std::prev(it);
      if (prev->second >= a) {
        a = prev->first;
        if (prev->second > b) b = prev->second;
        it = intervals_.erase(prev);
      }
    }
    while (it != intervals_.end() && it->first <= b) {
      if (it->second > b) b = it->second;
      it = intervals_.erase(it);
    }
    intervals_.emplace_hint(it, a, b);
  }

  bool empty() const { return intervals_.empty(); }
  void clear() { intervals_.clear(); }

 private:
  std::map<int32_t, int32_t> intervals_;
};

}  // namespace lockstep::compiler
