// bench_scheduler: per configuration, horizon / lower bound and compile time per phase on
// synthetic phases at 1,472 tiles (compiler/synth.hpp, fixed seeds), plus the whole-model
// figure: every phase of the synthetic transformer capture under one configuration.
//
//   bench_scheduler [--families a,b] [--configs x,y] [--whole CONFIG] [--seed N]
//
// Prints one line per configuration: phases, median / p95 / max of horizon/bound, median /
// p95 / max compile ms per phase, the largest row of any tile in any phase and the row
// bytes of all phases together; for a configuration that dropped duplicate candidate
// orders, the same phases again with deduplication off and the time it saved; then the
// whole-model total.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "compiler/phase_schedule.hpp"
#include "workload/synth.hpp"

using namespace lockstep;

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t index = static_cast<size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> families = {"permutation", "uniform", "skewed", "multicast", "transformer"};
  std::vector<std::string> configs = {"latency", "S256", "S1024", "B256", "B1024", "automatic", "remaining-combined"};
  std::string whole = "B1024";
  uint64_t seed = 1;
  uint32_t max_phases = 24;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--families")
      families = split(argv[i + 1]);
    else if (flag == "--configs")
      configs = split(argv[i + 1]);
    else if (flag == "--whole")
      whole = argv[i + 1];
    else if (flag == "--seed")
      seed = std::stoull(argv[i + 1]);
    else if (flag == "--max-phases")
      max_phases = static_cast<uint32_t>(std::stoul(argv[i + 1]));
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  const arch::MachineDescription machine = arch::load_machine("ipu21-c600");
  const arch::Topology topology(machine);

  // Sample phases: up to max_phases per family (the distinct shapes; transformer phases
  // repeat per layer).
  std::vector<arch::CapturePhase> phases;
  for (const std::string& name : families) {
    workload::SynthOptions options;
    options.family = workload::parse_synth_family(name);
    options.seed = seed;
    arch::Capture capture = workload::synthesize_capture(options, machine);
    for (size_t i = 0; i < capture.phases.size() && i < max_phases; ++i) phases.push_back(std::move(capture.phases[i]));
  }
  uint64_t transfers = 0;
  for (const auto& p : phases) transfers += p.transfers.size();
  std::printf("sample: %zu phases, %llu transfers, 1472 tiles, seed %llu\n", phases.size(),
              static_cast<unsigned long long>(transfers), static_cast<unsigned long long>(seed));
  std::printf("%-20s %6s %8s %8s %8s %9s %9s %9s %8s %10s %8s %8s\n", "config", "phases", "ratio.md", "ratio.p95",
              "ratio.max", "ms.md", "ms.p95", "ms.max", "maxrow.B", "rows.B", "orders", "dedup");
  for (const std::string& name : configs) {
    const compiler::ScheduleConfig config = compiler::parse_config(name);
    std::vector<double> ratios, ms;
    std::vector<uint32_t> horizons;
    uint64_t orders = 0, dedup = 0, max_row = 0, total_rows = 0;
    double total_ms = 0;
    for (const auto& phase : phases) {
      if (phase.transfers.empty()) continue;
      const double start = now_ms();
      const compiler::ScheduledPhase result = compiler::schedule_phase(phase, machine, topology, config);
      ms.push_back(now_ms() - start);
      total_ms += ms.back();
      horizons.push_back(result.horizon);
      for (const auto& row : result.rows) {
        max_row = std::max<uint64_t>(max_row, row.words.size() * 4);
        total_rows += row.words.size() * 4;
      }
      ratios.push_back(static_cast<double>(result.horizon) / std::max<uint32_t>(1, result.lower_bound));
      orders += result.orders_considered;
      dedup += result.orders_deduplicated;
    }
    std::printf("%-20s %6zu %8.3f %9.3f %9.3f %9.1f %9.1f %9.1f %8llu %10llu %8llu %8llu\n", name.c_str(),
                ratios.size(), quantile(ratios, 0.5), quantile(ratios, 0.95), quantile(ratios, 1.0), quantile(ms, 0.5),
                quantile(ms, 0.95), quantile(ms, 1.0), static_cast<unsigned long long>(max_row),
                static_cast<unsigned long long>(total_rows), static_cast<unsigned long long>(orders),
                static_cast<unsigned long long>(dedup));
    if (name == "latency") {
      const double p95 = quantile(ratios, 0.95);
      std::printf("  latency p95 horizon / lower bound %.3f (goal at most 1.15: %.2fx of it, %s)\n", p95, p95 / 1.15,
                  p95 <= 1.15 ? "met" : "missed");
    }
    std::fflush(stdout);
    if (dedup > 0) {
      compiler::ScheduleConfig without = config;
      without.deduplicate_orders = false;
      const double start = now_ms();
      size_t differ = 0, k = 0;
      for (const auto& phase : phases) {
        if (phase.transfers.empty()) continue;
        differ += compiler::schedule_phase(phase, machine, topology, without).horizon != horizons[k++];
      }
      const double off_ms = now_ms() - start;
      std::printf(
          "  %s deduplication: %.0f ms with, %.0f ms without (saved %.0f ms, %.1f%%; %llu duplicate "
          "orders placed again; %zu horizons differ)\n",
          name.c_str(), total_ms, off_ms, off_ms - total_ms, 100.0 * (off_ms - total_ms) / off_ms,
          static_cast<unsigned long long>(dedup), differ);
      std::fflush(stdout);
    }
  }

  if (!whole.empty()) {
    workload::SynthOptions options;
    options.family = workload::SynthFamily::Transformer;
    options.seed = seed;
    const arch::Capture capture = workload::synthesize_capture(options, machine);
    uint64_t total = 0;
    for (const auto& p : capture.phases) total += p.transfers.size() * std::max<uint32_t>(1, p.iterations);
    const compiler::ScheduleConfig config = compiler::parse_config(whole);
    const double start = now_ms();
    uint64_t horizon = 0;
    for (const auto& phase : capture.phases)
      horizon += compiler::schedule_phase(phase, machine, topology, config).horizon;
    std::printf(
        "whole model (%s): %zu phases, %llu transfers (x iterations), schedule+encode+check %.0f ms, "
        "sum of horizons %llu\n",
        whole.c_str(), capture.phases.size(), static_cast<unsigned long long>(total), now_ms() - start,
        static_cast<unsigned long long>(horizon));
  }
  return 0;
}
