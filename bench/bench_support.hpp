#pragma once
// What the benchmarks share: timing a command line as a user runs it, and printing a
// figure beside its issue's goal.
#include <cblas.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "io/mapped_file.hpp"

namespace lockstep::bench {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs a command line through the shell; the wall seconds it took, or -1 when it failed.
inline double timed_command(const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  const double seconds = seconds_since(start);
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? seconds : -1.0;
}

struct CommandFigure {
  double seconds = -1;  // -1: it failed
  double peak_rss_gb = 0;
  uint64_t minor_faults = 0;  // pages the command touched for the first time (and the like)
};

// Runs `argv` (no shell; output to /dev/null, or its standard error to `errors_to`) and
// measures its wall time and peak RSS alone.
inline CommandFigure measured_command(const std::vector<std::string>& argv, const std::string& errors_to = "") {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(errors_to.empty() ? null : ::open(errors_to.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  if (pid < 0 || ::wait4(pid, &status, 0, &usage) != pid) return {};
  CommandFigure figure;
  figure.peak_rss_gb = double(usage.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB
  figure.minor_faults = static_cast<uint64_t>(usage.ru_minflt);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) figure.seconds = seconds_since(start);
  return figure;
}

// GB/s of one core copying a buffer the size of `bytes` (capped at 256 MiB) several times.
inline double memcpy_gb_per_s(uint64_t bytes) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(std::max<uint64_t>(bytes, 1 << 20), 256u << 20));
  std::vector<char> from(n, 1), to(n);
  const auto start = std::chrono::steady_clock::now();
  constexpr int kRounds = 4;
  for (int r = 0; r < kRounds; ++r) std::memcpy(to.data(), from.data(), n);
  const double seconds = seconds_since(start);
  volatile char sink = to[n - 1];
  (void)sink;
  return double(n) * kRounds / seconds / 1e9;
}

// The kernels OpenBLAS runs (it picks them for the CPU as it starts, unless OPENBLAS_CORETYPE
// names them), for the line that prints the BLAS limit: "Haswell kernels; OPENBLAS_CORETYPE
// Haswell", say.
inline std::string openblas_kernels() {
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  return std::string(openblas_get_corename()) + " kernels; OPENBLAS_CORETYPE " + (coretype ? coretype : "unset");
}

// How a fresh page is first touched: written, or mapped ahead in one call first
// (MADV_POPULATE_WRITE, as the simulator maps large fresh writes) and then written, or written
// on 2 MiB huge pages (MADV_HUGEPAGE, as the simulator's heap takes its memory).
enum class FirstTouch { Written, MappedAheadThenWritten, HugePages };

// Microseconds of wall time per fresh 4 KiB page touched for the first time (64 MiB mapped and
// written a byte a page, each of `threads` threads on its own share): the fault, the zeroing
// and whatever the hypervisor adds. About 10 us written, 5.4 us mapped ahead, on one core of the
// AMD EPYC virtual machine of docs/performance.md rounds eleven and thirteen. Two cores there
// touch fresh pages only 1.35-1.9 times as fast as one (round thirty), so a floor of first
// touches on both cores takes their rate as measured, not half of one core's. On huge pages
// (the mapping aligned to them) a 2 MiB page there costs from 0.13 ms, while the host still
// backs the guest's free memory, to 4.7 ms once it has taken it back (round thirty-five).
inline double first_touch_us_per_page(FirstTouch how = FirstTouch::Written, unsigned threads = 1) {
  constexpr size_t kBytes = 64u << 20, kPage = 4096, kHugePage = 2u << 20;
  void* mapped = ::mmap(nullptr, kBytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return -1;
  char* const base =
      reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(mapped) + kHugePage - 1) / kHugePage * kHugePage);
  if (how == FirstTouch::HugePages) (void)::madvise(base, kBytes, MADV_HUGEPAGE);
  threads = std::max(1u, threads);
  const size_t share = kBytes / kPage / threads * kPage;
  const auto touch = [&](size_t from, size_t to) {
    volatile char* const bytes = base;
    if (how == FirstTouch::MappedAheadThenWritten) arch::populate_for_write(base + from, to - from);
    for (size_t at = from; at < to; at += kPage) bytes[at] = 1;
  };
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> others;
  for (unsigned t = 1; t < threads; ++t) others.emplace_back(touch, t * share, (t + 1) * share);
  touch(0, share);
  for (auto& other : others) other.join();
  const double seconds = seconds_since(start);
  ::munmap(mapped, kBytes + kHugePage);
  return seconds * 1e6 / double(share * threads / kPage);
}

// `runs` runs of `argv`, fastest first; empty when one of them failed.
inline std::vector<CommandFigure> measured_runs(const std::vector<std::string>& argv, int runs) {
  std::vector<CommandFigure> figures;
  for (int i = 0; i < runs; ++i) {
    figures.push_back(measured_command(argv));
    if (figures.back().seconds < 0) return {};
  }
  std::sort(figures.begin(), figures.end(),
            [](const CommandFigure& a, const CommandFigure& b) { return a.seconds < b.seconds; });
  return figures;
}

// Best of `runs` (the machine's noise only ever adds time); seconds -1 when a run failed.
inline CommandFigure best_of(const std::vector<std::string>& argv, int runs) {
  const std::vector<CommandFigure> figures = measured_runs(argv, runs);
  return figures.empty() ? CommandFigure{} : figures.front();
}

// The median of `runs` runs (what a user meets most; one lucky or slow minute does not move
// it), with the fastest and slowest beside it, and the largest peak RSS of them.
struct MedianFigure {
  CommandFigure median;  // seconds -1: a run failed
  double fastest = -1, slowest = -1;
  double peak_rss_gb = -1;
  int runs = 0;
};
inline MedianFigure median_of(std::vector<CommandFigure> figures) {
  std::sort(figures.begin(), figures.end(),
            [](const CommandFigure& a, const CommandFigure& b) { return a.seconds < b.seconds; });
  MedianFigure figure;
  if (figures.empty()) return figure;
  figure.median = figures[figures.size() / 2];
  for (const CommandFigure& f : figures) figure.peak_rss_gb = std::max(figure.peak_rss_gb, f.peak_rss_gb);
  figure.fastest = figures.front().seconds;
  figure.slowest = figures.back().seconds;
  figure.runs = static_cast<int>(figures.size());
  return figure;
}
inline MedianFigure median_of(const std::vector<std::string>& argv, int runs) {
  return median_of(measured_runs(argv, runs));
}

// `a` and `b` run in turn, `pairs` times: the median of each, and the median of the pairs'
// ratios a/b, which holds still while this machine's speed drifts by a fifth between minutes.
struct PairedFigure {
  MedianFigure a, b;
  double ratio = -1;  // -1: a run failed
};
inline PairedFigure paired_runs(const std::vector<std::string>& a, const std::vector<std::string>& b, int pairs) {
  std::vector<CommandFigure> of_a, of_b;
  std::vector<double> ratios;
  for (int i = 0; i < pairs; ++i) {
    of_a.push_back(measured_command(a));
    of_b.push_back(measured_command(b));
    if (of_a.back().seconds <= 0 || of_b.back().seconds <= 0) return {};
    ratios.push_back(of_a.back().seconds / of_b.back().seconds);
  }
  std::sort(ratios.begin(), ratios.end());
  PairedFigure figure{median_of(std::move(of_a)), median_of(std::move(of_b)), -1};
  if (!ratios.empty()) figure.ratio = ratios[ratios.size() / 2];
  return figure;
}

// "what: 2.48 s<detail> (goal 0.6 s: 4.13x of it, missed)"; smaller is better.
inline void print_against_goal(const char* what, double seconds, double goal, const std::string& detail = "") {
  if (seconds < 0) {
    std::printf("%s: failed\n", what);
    return;
  }
  std::printf("%s: %.2f s%s (goal %.3g s: %.2fx of it, %s)\n", what, seconds, detail.c_str(), goal, seconds / goal,
              seconds <= goal ? "met" : "missed");
}

// "what: 0.55 s, the median of 5 runs (0.51-0.62 s) (goal 0.6 s: 0.92x of it, met)".
inline void print_against_goal(const char* what, const MedianFigure& figure, double goal) {
  char detail[96];
  std::snprintf(detail, sizeof detail, ", the median of %d runs (%.2f-%.2f s)", figure.runs, figure.fastest,
                figure.slowest);
  print_against_goal(what, figure.median.seconds, goal, detail);
}

}  // namespace lockstep::bench
