// Lowering the full SigLIP-So400m-class encoder onto the C600: the figures the workload
// lowering issue asks for (phases, transfers, words moved, peak SRAM per tile, time).
//   build/<preset>/bench/bench_lower [WORKLOAD]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>

#include "arch/machine.hpp"
#include "formats/capture.hpp"
#include "workload/lower.hpp"
#include "workload/workload.hpp"

int main(int argc, char** argv) {
  using namespace lockstep;
  const std::string source = argc > 1 ? argv[1] : "configs/workloads/siglip-so400m.yaml";
  try {
    const workload::Workload workload = workload::load_workload(source);
    const arch::MachineDescription machine = arch::load_machine(workload.machine);
    const auto start = std::chrono::steady_clock::now();
    const workload::Lowered lowered = workload::lower_workload(workload, machine);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const arch::CaptureStats stats = arch::capture_stats(lowered.capture);
    uint64_t per_run = 0;
    for (const auto& p : stats.phases) per_run += p.words_delivered * p.execution_count;
    uint32_t peak = 0;
    uint32_t peak_tile = 0;
    for (const auto& m : lowered.memory) {
      if (m.peak_bytes > peak) {
        peak = m.peak_bytes;
        peak_tile = m.tile;
      }
    }
    std::printf("workload %s on %s (%u tiles)\n", workload.name.c_str(), machine.name.c_str(), machine.tiles);
    std::printf(
        "phases %zu\ntransfers %llu\nwords_sent %llu\nwords_delivered %llu\n"
        "words_delivered_per_run %llu\n",
        stats.phases.size(), static_cast<unsigned long long>(stats.transfers),
        static_cast<unsigned long long>(stats.words), static_cast<unsigned long long>(stats.words_delivered),
        static_cast<unsigned long long>(per_run));
    std::printf("peak_sram_bytes %u (tile %u)\nlowering_seconds %.3f (goal < 10)\n", peak, peak_tile, seconds);
    return seconds < 10.0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
