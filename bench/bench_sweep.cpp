// Sweep throughput: points per second of `lockstep sweep` on the embedded default workload,
// and the whole full-size frontier (every phase of the 27-layer capture x 19 configurations x
// 2 widths, every destination word of every iteration checked) run as a user runs it:
// `lockstep lower siglip-so400m` then `lockstep sweep CAPTURE -o DIR` with LOCKSTEP_BINARY
// (scripts/bench.sh sets it), beside one core's memcpy of the destination words it checks.
// The lowered workload has no pair-eligible transfer, so a paired point takes its word32
// twin's result (replay::run_points) and only the word32 points are simulated.
//
//   bench_sweep [--budget SECONDS] [--jobs N] [--samples N]
//     --budget   instead of the whole frontier, probe points for this many seconds (in-process,
//                two configurations and their paired twins per phase) and extrapolate
//     --samples  check N sampled destination words per iteration instead of all
//     --full-only  skip the default workload
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "bench_support.hpp"
#include "replay/mpi.hpp"
#include "replay/parallel.hpp"
#include "replay/sampling.hpp"
#include "replay/sweep.hpp"
#include "results/sweep_definition.hpp"
#include "workload/lower.hpp"
#include "workload/workload.hpp"

namespace {

using namespace lockstep;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Lowered {
  arch::Capture capture;
  arch::MachineDescription machine;
  double seconds = 0;
};

Lowered lower(const std::string& file) {
  const auto start = Clock::now();
  const auto workload = workload::load_workload(file);
  Lowered l{{}, arch::load_machine(workload.machine), 0};
  l.capture = workload::lower_workload(workload, l.machine).capture;
  l.seconds = seconds_since(start);
  return l;
}

struct Measured {
  size_t points = 0;
  size_t failed = 0;
  double seconds = 0;
};

Measured sweep(const Lowered& l, const replay::SweepDefinition& definition, replay::SweepOptions options,
               const std::vector<uint32_t>& phases, const replay::MpiSession& mpi) {
  options.phases = phases;
  const auto plan = replay::plan_sweep(l.capture, definition, options);
  const auto start = Clock::now();
  const auto results = replay::run_sweep(l.capture, l.machine, plan, options, mpi);
  Measured m{plan.size(), 0, seconds_since(start)};
  for (const auto& r : results) m.failed += !r.payload_ok();
  return m;
}

std::vector<uint32_t> all_phases(const arch::Capture& capture) {
  std::vector<uint32_t> ids;
  for (const auto& p : capture.phases) ids.push_back(p.id);
  return ids;
}

uint64_t delivered_words(const arch::CapturePhase& phase) {
  return replay::count_destination_words(phase) * phase.iterations;
}

// The whole frontier of the full-size capture as a user runs it, with its physical limit.
int whole_frontier(size_t configurations, size_t jobs, uint64_t samples) {
  namespace fs = std::filesystem;
  const char* binary = std::getenv("LOCKSTEP_BINARY");
  if (binary == nullptr) {
    std::fprintf(stderr, "bench_sweep: set LOCKSTEP_BINARY to the lockstep executable (or pass --budget)\n");
    return 2;
  }
  const auto full = lower("configs/workloads/siglip-so400m.yaml");
  uint64_t words = 0;  // checked by the word32 points (the paired ones take their results)
  for (const auto& p : full.capture.phases) words += delivered_words(p);
  words *= configurations;
  const fs::path directory = fs::temp_directory_path() / ("bench_sweep_" + std::to_string(::getpid()));
  fs::create_directories(directory);
  const std::string capture = (directory / "siglip.capnp").string();
  std::vector<std::string> sweep = {binary, "sweep", capture, "-o", (directory / "sweep").string()};
  if (jobs) sweep.insert(sweep.end(), {"--jobs", std::to_string(jobs)});
  if (samples) sweep.insert(sweep.end(), {"--samples", std::to_string(samples)});
  bench::CommandFigure figure;
  if (bench::measured_command({binary, "lower", "configs/workloads/siglip-so400m.yaml", "-o", capture}).seconds >= 0) {
    figure = bench::measured_command(sweep);
  }
  std::error_code ignored;
  fs::remove_all(directory, ignored);
  const size_t points = full.capture.phases.size() * configurations * 2;
  char what[160];
  std::snprintf(what, sizeof what, "lockstep sweep, whole full-size frontier (%zu points, %s)", points,
                samples ? "sampled words" : "every word");
  bench::print_against_goal(what, figure.seconds, 600.0);
  if (figure.seconds < 0) return 1;
  const double gbps = bench::memcpy_gb_per_s(256u << 20);
  std::printf(
      "  peak RSS %.2f GB; %.1f G destination words checked; one core's memcpy of them: %.1f s "
      "(%.1f GB/s, measured now)\n",
      figure.peak_rss_gb, double(words) / 1e9, double(words) * 4 / (gbps * 1e9), gbps);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  double budget = -1;  // the whole frontier as a command
  size_t jobs = 0;
  uint64_t samples = 0;
  bool tiny_too = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--full-only")) tiny_too = false;
  }
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--budget"))
      budget = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--jobs"))
      jobs = std::strtoul(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--samples"))
      samples = std::strtoull(argv[i + 1], nullptr, 10);
  }
  try {
    replay::MpiSession mpi;
    const auto definition = replay::load_sweep_definition(replay::kDefaultSweep);
    replay::SweepOptions options;
    options.jobs = jobs;
    options.timings = true;
    options.progress = false;
    if (samples > 0) options.point.samples = samples;
    const size_t workers = jobs ? jobs : replay::default_jobs(mpi);
    const std::string check = samples ? std::to_string(samples) + " sampled destination words per iteration"
                                      : std::string("every destination word of every iteration");
    std::printf("sweep: %zu configurations x 2 widths per phase, %zu worker processes, %s checked\n",
                definition.configurations.size(), workers, check.c_str());

    // The default workload: the whole frontier.
    if (tiny_too) {
      const auto tiny = lower("configs/workloads/vit-tiny.yaml");
      const auto t = sweep(tiny, definition, options, all_phases(tiny.capture), mpi);
      std::printf("vit-tiny: %zu phases, %zu points in %.2f s: %.1f points/s (%zu failed)\n",
                  tiny.capture.phases.size(), t.points, t.seconds, t.points / t.seconds, t.failed);
      std::fflush(stdout);
    }

    if (budget < 0) return whole_frontier(definition.configurations.size(), jobs, samples);

    // The full-size capture. A whole phase is 38 points; within the budget, probe phases in
    // an evenly spread order with two configurations each and their paired twins, and
    // extrapolate: a phase costs its mean probe point x 38, and a
    // phase never probed costs in proportion to the words it delivers.
    const auto full = lower("configs/workloads/siglip-so400m.yaml");
    const size_t phase_count = full.capture.phases.size();
    const size_t per_phase = definition.configurations.size() * 2;
    uint64_t total_words = 0;
    for (const auto& p : full.capture.phases) total_words += delivered_words(p);
    std::printf(
        "siglip-so400m: lowered in %.2f s: %zu phases, %llu destination words over all "
        "iterations\n",
        full.seconds, phase_count, static_cast<unsigned long long>(total_words));
    std::fflush(stdout);
    std::vector<size_t> order;  // 0, n/2, n/4, 3n/4, ...: spread over the model
    std::vector<bool> taken(phase_count, false);
    for (size_t step = phase_count; order.size() < phase_count; step = std::max<size_t>(1, step / 2)) {
      for (size_t i = 0; i < phase_count; i += step) {
        if (!taken[i]) {
          taken[i] = true;
          order.push_back(i);
        }
      }
    }
    // Probe configurations rotate through the sweep file (two per phase), so cheap and costly
    // ones (S16 cuts every transfer into 16-word messages) are both sampled.
    replay::SweepDefinition probe = definition;
    const auto& configurations = definition.configurations;
    size_t next_config = 0;
    replay::SweepOptions probe_options = options;
    probe_options.paired = true;
    Measured done;
    double estimated_probed = 0;
    uint64_t probed_words = 0;
    size_t phases_done = 0;
    for (size_t index : order) {
      if (budget > 0 && done.seconds >= budget) break;
      const auto& phase = full.capture.phases[index];
      probe.configurations = {configurations[next_config % configurations.size()],
                              configurations[(next_config + 1) % configurations.size()]};
      next_config += 2;
      const auto m = sweep(full, probe, probe_options, {phase.id}, mpi);
      done.points += m.points;
      done.failed += m.failed;
      done.seconds += m.seconds;
      // Worker processes ran the points side by side: wall time per point x points.
      estimated_probed += m.seconds / double(m.points) * double(per_phase);
      probed_words += delivered_words(phase);
      ++phases_done;
      std::printf("  phase %u (%s): %s and %s in %.1f s\n", phase.id, phase.label.c_str(),
                  probe.configurations[0].c_str(), probe.configurations[1].c_str(), m.seconds);
      std::fflush(stdout);
    }
    const size_t full_points = phase_count * per_phase;
    std::printf(
        "siglip-so400m: measured %zu points (%zu of %zu phases) in %.1f s: %.3f points/s "
        "(%zu failed)\n",
        done.points, phases_done, phase_count, done.seconds, done.points / done.seconds, done.failed);
    const double estimate = estimated_probed * double(total_words) / double(std::max<uint64_t>(1, probed_words));
    std::printf(
        "siglip-so400m full frontier (%zu phases x %zu configurations x 2 widths = %zu "
        "points): extrapolated %.1f min on %zu workers (not run in full; goal 10 min: %.2fx of it, %s)\n",
        phase_count, definition.configurations.size(), full_points, estimate / 60, workers, estimate / 600.0,
        estimate <= 600.0 ? "met" : "missed");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_sweep: %s\n", e.what());
    return 3;
  }
  return 0;
}
