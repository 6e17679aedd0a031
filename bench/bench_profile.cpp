// What profiling costs, measured on the command lines a user runs (issue 13's figures):
// `lockstep run` of the whole model (default the full-size SigLIP, built with `lockstep
// build`) with and without --profile, and `lockstep replay` of a full-size phase (the first
// reduce phase, 27 iterations, every word) with and without; the profile's size, the time
// `profile render` and `profile export --chrome` take on it, and beside them the bytes per
// second memcpy moves on this machine (the limit for writing a file of that size).
//   LOCKSTEP_BINARY=build/release/lockstep build/release/bench/bench_profile [WORKLOAD]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_support.hpp"

namespace {

namespace fs = std::filesystem;
using lockstep::bench::CommandFigure;
using lockstep::bench::measured_command;
using lockstep::bench::memcpy_gb_per_s;
using lockstep::bench::paired_runs;
using lockstep::bench::PairedFigure;

// The overhead as the median of alternating pairs' ratios: the best of two runs each, taken
// minutes apart, moved with the machine's speed (+3% one hour, +22% the next, same binary).
void print_overhead(const char* what, const PairedFigure& runs) {
  if (runs.ratio < 0) {
    std::printf("%s: failed\n", what);
    return;
  }
  const double overhead = runs.ratio - 1.0;
  std::printf(
      "%s: %.2f s without, %.2f s with --profile (medians of %d alternating pairs): %+.1f%%, the median of the "
      "pairs' ratios (goal at most +10%%: %s); peak RSS %.2f -> %.2f GB\n",
      what, runs.b.median.seconds, runs.a.median.seconds, runs.a.runs, 100.0 * overhead,
      overhead <= 0.10 ? "met" : "missed", runs.b.peak_rss_gb, runs.a.peak_rss_gb);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // figures appear as they are measured
  const char* env = std::getenv("LOCKSTEP_BINARY");
  const std::string binary = env != nullptr ? env : "build/release/lockstep";
  const std::string workload = argc > 1 ? argv[1] : "configs/workloads/siglip-so400m.yaml";
  const fs::path dir = fs::temp_directory_path() / ("bench_profile_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string package = (dir / "model.lkspkg").string();
  const std::string profile = (dir / "model.lsprof").string();
  const std::string capture = (dir / "capture.capnp").string();
  const int pairs = 3;
  std::printf("workload %s, %s\n", workload.c_str(), binary.c_str());

  if (measured_command({binary, "build", workload, "-o", package}).seconds < 0) {
    std::printf("lockstep build %s failed\n", workload.c_str());
    return 1;
  }
  print_overhead("lockstep run, whole model",
                 paired_runs({binary, "run", package, "--profile", profile}, {binary, "run", package}, pairs));
  const uint64_t bytes = fs::exists(profile) ? fs::file_size(profile) : 0;
  const double copy_gb_per_s = memcpy_gb_per_s(bytes);
  std::printf("  profile file %.1f MB; memcpy on this machine %.1f GB/s (copying the file once: %.3f s)\n",
              double(bytes) / 1e6, copy_gb_per_s, double(bytes) / 1e9 / copy_gb_per_s);
  const CommandFigure render =
      measured_command({binary, "profile", "render", profile, "-o", (dir / "model.html").string()});
  lockstep::bench::print_against_goal("lockstep profile render, whole model", render.seconds, 10.0);
  if (fs::exists(dir / "model.html")) std::printf("  page %.1f MB\n", double(fs::file_size(dir / "model.html")) / 1e6);
  const CommandFigure chrome =
      measured_command({binary, "profile", "export", profile, "--chrome", (dir / "trace.json").string()});
  if (chrome.seconds >= 0) {
    std::printf("lockstep profile export --chrome, whole model: %.2f s, %.1f MB\n", chrome.seconds,
                double(fs::file_size(dir / "trace.json")) / 1e6);
  }
  fs::remove(dir / "trace.json");

  if (measured_command({binary, "lower", workload, "-o", capture}).seconds >= 0) {
    const std::vector<std::string> replay{binary, "replay", capture, "--phase", "4", "--config", "B1024"};
    std::vector<std::string> replay_profiled = replay;
    replay_profiled.insert(replay_profiled.end(), {"--profile", (dir / "replay.lsprof").string()});
    print_overhead("lockstep replay --phase 4 --config B1024 (every word, every iteration)",
                   paired_runs(replay_profiled, replay, 3 * pairs));
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return 0;
}
