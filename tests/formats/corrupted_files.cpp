#include "tests/formats/corrupted_files.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <random>

#include "io/errors.hpp"

// The largest single operator new request while tracking is on: a hostile size must be
// refused before it reaches the allocator. Replacing operator new is global to the test
// binary, so it only counts; sanitizer builds keep their own allocator (no tracking there).
#if defined(__SANITIZE_ADDRESS__)
#define LOCKSTEP_SANITIZED_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define LOCKSTEP_SANITIZED_ALLOCATOR 1
#endif
#endif

namespace {
std::atomic<bool> g_tracking{false};
std::atomic<size_t> g_largest{0};
}  // namespace

#ifndef LOCKSTEP_SANITIZED_ALLOCATOR
void* operator new(std::size_t size) {
  if (g_tracking.load(std::memory_order_relaxed)) {
    size_t seen = g_largest.load(std::memory_order_relaxed);
    while (size > seen && !g_largest.compare_exchange_weak(seen, size)) {
    }
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// Not inlined: GCC would otherwise see free() meet operator new's pointer and warn.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace lockstep::arch {
namespace allocation_tracking {

bool available() {
#ifdef LOCKSTEP_SANITIZED_ALLOCATOR
  return false;
#else
  return true;
#endif
}
void start() {
  g_largest = 0;
  g_tracking = true;
}
size_t stop() {
  g_tracking = false;
  return g_largest;
}

}  // namespace allocation_tracking

void read_corrupted_copies(const std::string& valid, size_t header_bytes, const std::string& name, size_t times,
                           size_t slack, const std::function<void(const std::string&, const std::string&)>& read,
                           CorruptionOutcomes& outcomes) {
  std::mt19937_64 rng(20261130);
  size_t largest_seen = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes = valid;
    const int mode = static_cast<int>(rng() % 4);
    if (mode == 0 || mode == 3) bytes.resize(rng() % bytes.size());
    if (mode >= 1 && !bytes.empty()) {
      const size_t span = mode == 2 ? bytes.size() : header_bytes;
      for (int n = 1 + static_cast<int>(rng() % 3); n > 0; --n) {
        bytes[rng() % std::min(span, bytes.size())] = static_cast<char>(rng());
      }
    }
    std::string error;
    allocation_tracking::start();
    try {
      read(bytes, name);
    } catch (const InputError& e) {
      error = e.what();
    } catch (const std::exception& e) {
      allocation_tracking::stop();
      FAIL() << "case " << i << ": " << e.what();
    }
    const size_t largest = allocation_tracking::stop();
    largest_seen = std::max(largest_seen, largest);
    if (allocation_tracking::available()) {
      ASSERT_LE(largest, times * bytes.size() + slack) << "case " << i;
    }
    if (error.empty()) {
      ++outcomes.reads;
      continue;
    }
    ++outcomes.refusals;
    ASSERT_EQ(error.rfind(name + ": ", 0), 0u) << error;
    ASSERT_EQ(error.find('\n'), std::string::npos) << error;
  }
  if (allocation_tracking::available()) {
    EXPECT_GT(largest_seen, 0u);  // the tracking works
  }
}

}  // namespace lockstep::arch
