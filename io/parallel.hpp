#pragma once
// tbb::parallel_for over an index range whose failures read as one thread's would: every
// index runs, then the exception of the lowest failing index is rethrown, so which error a
// command reports never depends on thread timing.
#include <tbb/parallel_for.h>

#include <exception>
#include <mutex>

namespace lockstep::arch {

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
