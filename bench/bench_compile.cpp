// Compile time of a whole synthetic transformer-like capture (80 phases, 27-iteration
// layer Repeat) at the full machine under the production policy B1024, with and without
// the payload proof. Prints the figures the exchange-compiler issue asks for.
//   build/<preset>/bench/bench_compile [--tiles N] [--seed S] [--config NAME]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "arch/machine.hpp"
#include "compiler/compile.hpp"
#include "compiler/synth.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lockstep;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // figures appear as they are measured
  uint32_t tiles = 0;
  uint64_t seed = 1;
  std::string config = "B1024";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--tiles") == 0) tiles = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
    if (std::strcmp(argv[i], "--seed") == 0) seed = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--config") == 0) config = argv[i + 1];
  }
  try {
    const arch::MachineDescription machine = arch::load_machine(arch::kDefaultMachine);
    compiler::SynthOptions synth;
    synth.family = compiler::SynthFamily::Transformer;
    synth.tiles = tiles;
    synth.seed = seed;
    auto start = std::chrono::steady_clock::now();
    const arch::Capture capture = compiler::synthesize_capture(synth, machine);
    const double synth_s = seconds_since(start);
    uint64_t transfers = 0, words = 0;
    for (const auto& phase : capture.phases) {
      transfers += phase.transfers.size();
      for (const auto& t : phase.transfers) words += uint64_t{t.words} * t.destinations.size();
    }
    std::printf("capture: %zu phases, %llu transfers, %llu words delivered per execution set, %u tiles "
                "(synthesised in %.2f s)\n",
                capture.phases.size(), static_cast<unsigned long long>(transfers),
                static_cast<unsigned long long>(words), tiles == 0 ? machine.tiles : tiles, synth_s);

    compiler::CompileOptions options;
    options.config = compiler::parse_config(config);
    options.with_proof = false;
    start = std::chrono::steady_clock::now();
    const compiler::CompileResult bare = compiler::compile_capture(capture, machine, options);
    const double bare_s = seconds_since(start);
    double scheduling_ms = 0;
    uint64_t horizon = 0;
    for (const auto& phase : bare.report.phases) {
      scheduling_ms += phase.compile_ms;
      horizon += uint64_t{phase.horizon} * phase.execution_count;
    }
    std::printf("compile %s without proof: %.2f s (per-phase scheduling, summed over threads: %.2f s)\n",
                config.c_str(), bare_s, scheduling_ms / 1000.0);

    options.with_proof = true;
    start = std::chrono::steady_clock::now();
    const compiler::CompileResult proven = compiler::compile_capture(capture, machine, options);
    const double proof_s = seconds_since(start);
    std::printf("compile %s with payload proof: %.2f s (%zu expectations)\n", config.c_str(), proof_s,
                proven.package.expectations.size());

    const auto& r = proven.report;
    uint64_t patch_calls = 0, patch_words = 0;
    uint32_t max_list = 0;
    for (const auto& phase : r.phases) {
      patch_calls += phase.patch_calls;
      patch_words += phase.patch_words;
      max_list = std::max(max_list, phase.max_patch_words_per_tile);
    }
    std::printf("weighted horizon: %llu cycles\n", static_cast<unsigned long long>(horizon));
    std::printf("table peak: %u bytes shared, %u unshared; sharing setup patches %u calls, %u words\n",
                r.table_bytes_shared, r.table_bytes_unshared, r.sharing_patch_calls, r.sharing_patch_words);
    std::printf("Repeat patches per layer: %llu calls, %llu words; largest list on one tile %u words\n",
                static_cast<unsigned long long>(patch_calls), static_cast<unsigned long long>(patch_words), max_list);
    std::printf("orders: %u considered, %u deduplicated\n", r.orders_considered, r.orders_deduplicated);
    std::printf("goal: whole compile under 10 s: %s\n", bare_s < 10.0 ? "met" : "missed");
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_compile: %s\n", error.what());
    return 3;
  }
  return 0;
}
