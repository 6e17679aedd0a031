// Compile time of a whole synthetic transformer-like capture (80 phases, 27-iteration
// layer Repeat) at the full machine under the production policy B1024, without the payload proof
// (BENCH_COMPILE_PROOF=1 adds a run with it), then of the full-size lowered workload
// (configs/workloads/siglip-so400m.yaml, run from the source tree). Prints the figures the
// exchange-compiler issue asks for. With LOCKSTEP_BINARY (scripts/bench.sh sets it), also the
// throughput issue's figures: the full-size capture compiled from the command line with its
// payload proof (goal 30 s) and with --no-proof (goal 5 s), wall time as a user sees it.
//   build/<preset>/bench/bench_compile [--tiles N] [--seed S] [--config NAME]
#include <sys/wait.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "bench/bench_support.hpp"
#include "compiler/compile.hpp"
#include "compiler/package_builder.hpp"
#include "compiler/phase_schedule.hpp"
#include "workload/lower.hpp"
#include "workload/synth.hpp"
#include "workload/workload.hpp"

namespace {

using lockstep::bench::print_against_goal;
using lockstep::bench::seconds_since;
using lockstep::bench::timed_command;

// The full-size capture through the CLI, as a user runs it: lower once, then compile B1024
// with and without the payload proof.
void command_line_figures(const std::string& binary) {
  namespace fs = std::filesystem;
  const fs::path directory = fs::temp_directory_path() / ("bench_compile_" + std::to_string(::getpid()));
  fs::create_directories(directory);
  const std::string capture = (directory / "siglip.capnp").string();
  const std::string quiet = " > /dev/null 2>&1";
  if (timed_command(binary + " lower configs/workloads/siglip-so400m.yaml -o " + capture + quiet) < 0) {
    std::printf("command line: lowering configs/workloads/siglip-so400m.yaml failed\n");
  } else {
    const std::string compile = binary + " compile " + capture + " --exchange-stream-words 1024 -o ";
    print_against_goal("lockstep compile, full-size capture, B1024, with payload proof",
                       timed_command(compile + (directory / "proof.lkspkg").string() + quiet), 30.0);
    print_against_goal("lockstep compile --no-proof, full-size capture, B1024",
                       timed_command(compile + (directory / "bare.lkspkg").string() + " --no-proof" + quiet), 5.0);
  }
  std::error_code ignored;
  fs::remove_all(directory, ignored);
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
    workload::SynthOptions synth;
    synth.family = workload::SynthFamily::Transformer;
    synth.tiles = tiles;
    synth.seed = seed;
    auto start = std::chrono::steady_clock::now();
    const arch::Capture capture = workload::synthesize_capture(synth, machine);
    const double synth_s = seconds_since(start);
    uint64_t transfers = 0, words = 0;
    for (const auto& phase : capture.phases) {
      transfers += phase.transfers.size();
      for (const auto& t : phase.transfers) words += uint64_t{t.words} * t.destinations.size();
    }
    std::printf(
        "capture: %zu phases, %llu transfers, %llu words delivered per execution set, %u tiles "
        "(synthesised in %.2f s)\n",
        capture.phases.size(), static_cast<unsigned long long>(transfers), static_cast<unsigned long long>(words),
        tiles == 0 ? machine.tiles : tiles, synth_s);

    compiler::CompileOptions options;
    options.config = compiler::parse_config(config);
    options.with_proof = false;

    // The stages of compile_capture, timed apart: scheduling, then packaging.
    const arch::Topology topology(machine);
    std::vector<compiler::ScheduledPhase> scheduled(capture.phases.size());
    start = std::chrono::steady_clock::now();
    tbb::parallel_for(size_t{0}, capture.phases.size(), [&](size_t i) {
      scheduled[i] = compiler::schedule_phase(capture.phases[i], machine, topology, options.config);
    });
    const double schedule_s = seconds_since(start);
    std::vector<compiler::PackagingPhase> inputs;
    for (size_t i = 0; i < scheduled.size(); ++i) inputs.push_back({&capture.phases[i], &scheduled[i]});
    start = std::chrono::steady_clock::now();
    const compiler::CompileResult packaged = compiler::build_package(inputs, machine, options);
    const double package_s = seconds_since(start);
    std::printf("%s: scheduling and encoding %.2f s, packaging (tables, sharing, patch lists) %.2f s\n", config.c_str(),
                schedule_s, package_s);

    start = std::chrono::steady_clock::now();
    const compiler::CompileResult bare = compiler::compile_capture(capture, machine, options);
    const double bare_s = seconds_since(start);
    uint64_t horizon = 0;
    for (const auto& phase : bare.report.phases) horizon += uint64_t{phase.horizon} * phase.execution_count;
    std::printf("compile_capture %s without proof: %.2f s (goal: under 10 s: %s)\n", config.c_str(), bare_s,
                bare_s < 10.0 ? "met" : "missed");

    const auto& r = bare.report;
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

    // The whole model as the lowering produces it.
    {
      const auto workload = workload::load_workload("configs/workloads/siglip-so400m.yaml");
      const arch::MachineDescription full_machine = arch::load_machine(workload.machine);
      const arch::Capture full = workload::lower_workload(workload, full_machine).capture;
      uint64_t full_transfers = 0;
      for (const auto& phase : full.phases) full_transfers += phase.transfers.size();
      start = std::chrono::steady_clock::now();
      const compiler::CompileResult lowered = compiler::compile_capture(full, full_machine, options);
      const double full_s = seconds_since(start);
      std::printf(
          "full-size lowered workload (%zu phases, %llu transfers): compile_capture %s without proof "
          "%.2f s (goal: under 10 s: %s), table peak %u bytes\n",
          full.phases.size(), static_cast<unsigned long long>(full_transfers), config.c_str(), full_s,
          full_s < 10.0 ? "met" : "missed", lowered.report.table_bytes_shared);
    }

    if (std::getenv("BENCH_COMPILE_PROOF") != nullptr) {
      options.with_proof = true;
      start = std::chrono::steady_clock::now();
      const compiler::CompileResult proven = compiler::compile_capture(capture, machine, options);
      std::printf("compile_capture %s with payload proof: %.2f s (%zu expectations)\n", config.c_str(),
                  seconds_since(start), proven.package.expectations.size());
    }
    if (const char* binary = std::getenv("LOCKSTEP_BINARY")) command_line_figures(binary);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_compile: %s\n", error.what());
    return 3;
  }
  return 0;
}
