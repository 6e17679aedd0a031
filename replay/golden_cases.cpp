// The golden cases: small synthetic captures of every family with fixed seeds (so the
// check exercises unicast, all-to-all, hot spots, multicast and Repeat phases) and the
// embedded default workload lowered to a capture.
#include <algorithm>

#include "arch/machine.hpp"
#include "replay/golden.hpp"
#include "workload/lower.hpp"
#include "workload/synth.hpp"
#include "workload/workload.hpp"

namespace lockstep::replay {
namespace {

GoldenCase synthetic(workload::SynthFamily family, const std::string& machine, uint32_t tiles, uint64_t seed,
                     uint32_t phases) {
  const std::string family_name = workload::synth_family_name(family);
  GoldenCase c;
  c.name = "synth-" + family_name + "-t" + std::to_string(tiles) + "-s" + std::to_string(seed);
  c.description = "lockstep capture synth --family " + family_name + " --tiles " + std::to_string(tiles) + " --seed " +
                  std::to_string(seed) + " --phases " + std::to_string(phases) + " --machine " + machine;
  c.machine = machine;
  c.make = [=]() {
    workload::SynthOptions options;
    options.family = family;
    options.tiles = tiles;
    options.seed = seed;
    options.phases = phases;
    return workload::synthesize_capture(options, arch::load_machine(machine));
  };
  return c;
}

GoldenCase lowered(const std::string& name, const std::string& workload_file) {
  const auto loaded = workload::load_workload(workload_file);
  GoldenCase c;
  c.name = name;
  c.description = "lockstep lower " + workload_file;
  c.machine = loaded.machine;
  c.make = [loaded]() { return workload::lower_workload(loaded, arch::load_machine(loaded.machine)).capture; };
  return c;
}

}  // namespace

std::vector<GoldenCase> golden_cases() {
  using workload::SynthFamily;
  std::vector<GoldenCase> cases{
      lowered("vit-tiny", "configs/workloads/vit-tiny.yaml"),
      synthetic(SynthFamily::Permutation, "ipu21-c600", 16, 11, 3),
      synthetic(SynthFamily::Uniform, "ipu21-c600", 16, 12, 2),
      synthetic(SynthFamily::Skewed, "ipu21-c600", 32, 13, 2),
      synthetic(SynthFamily::Multicast, "ipu21-c600", 32, 14, 2),
      synthetic(SynthFamily::Transformer, "ipu21-c600", 16, 15, 6),
  };
  std::sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return cases;
}

const std::vector<PointSpec>& golden_configurations() {
  // One of each order kind, a small and a large chunk, and the paired width of two.
  static const std::vector<PointSpec> configurations{
      {0, "latency", false}, {0, "automatic", false}, {0, "remaining-combined", false},
      {0, "S64", false},     {0, "B256", false},      {0, "B1024", false},
      {0, "latency", true},  {0, "B1024", true},
  };
  return configurations;
}

}  // namespace lockstep::replay
