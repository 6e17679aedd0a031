// bench_multicast_split: why the latency policy tries receiver groups of 4 and 3 for wide
// multicast transfers. For each phase of the synthetic multicast family at 1,472 tiles,
// schedules the phase with its transfers unsplit and cut into groups of 8, 6, 4, 3 and 2
// destinations (compiler/multicast_split.hpp), and prints horizon / the unsplit phase's
// lower bound (the bound of the problem as given: splitting only adds sends).
//
//   bench_multicast_split [CONFIG] [--phases N]   (default: latency, 3 phases, seed 1)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "compiler/multicast_split.hpp"
#include "compiler/phase_schedule.hpp"
#include "workload/synth.hpp"

using namespace lockstep;

int main(int argc, char** argv) {
  std::string config_name = "latency";
  uint32_t phases = 3;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--phases") && i + 1 < argc) {
      phases = static_cast<uint32_t>(std::stoul(argv[++i]));
    } else {
      config_name = argv[i];
    }
  }
  const auto machine = arch::load_machine("ipu21-c600");
  const arch::Topology topology(machine);
  workload::SynthOptions options;
  options.family = workload::SynthFamily::Multicast;
  options.seed = 1;
  options.phases = phases;
  const auto capture = workload::synthesize_capture(options, machine);
  auto config = compiler::parse_config(config_name);
  config.split_multicast = false;  // the groups below are the only splitting
  std::printf("multicast family, 1472 tiles, seed 1, %u phases, order %s (no further splitting)\n", phases,
              config_name.c_str());
  std::printf("%5s %5s %9s %8s %8s %7s %8s\n", "phase", "group", "transfers", "horizon", "bound", "ratio", "ms");
  for (const auto& phase : capture.phases) {
    const uint32_t bound = compiler::phase_lower_bound(phase, topology, compiler::Width::Word32);
    for (uint32_t group : {0u, 8u, 6u, 4u, 3u, 2u}) {
      const auto split = compiler::split_multicast(phase, topology, group);
      const auto start = std::chrono::steady_clock::now();
      const auto result = compiler::schedule_phase(split, machine, topology, config);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      std::printf("%5u %5u %9zu %8u %8u %7.3f %8.0f\n", phase.id, group, split.transfers.size(), result.horizon, bound,
                  double(result.horizon) / bound, ms);
      std::fflush(stdout);
    }
  }
  return 0;
}
