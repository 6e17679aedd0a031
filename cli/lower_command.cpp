// `lockstep lower WORKLOAD -o CAPTURE [--program PROGRAM] [--stats]`: lower a ViT encoder.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "arch/machine.hpp"
#include "cli/capture_stats_output.hpp"
#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "formats/capture.hpp"
#include "formats/package.hpp"
#include "io/atomic_file.hpp"
#include "io/csv.hpp"
#include "io/errors.hpp"
#include "workload/lower.hpp"
#include "workload/workload.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace lower_command_local {}
using namespace lower_command_local;
namespace lower_command_local {

// The tiles with the most SRAM in use at the peak and resident throughout (end() if none).
auto busiest_tiles(const workload::Lowered& lowered) {
  const auto& m = lowered.memory;
  return std::pair{
      std::max_element(m.begin(), m.end(), [](const auto& a, const auto& b) { return a.peak_bytes < b.peak_bytes; }),
      std::max_element(m.begin(), m.end(),
                       [](const auto& a, const auto& b) { return a.persistent_bytes < b.persistent_bytes; })};
}

void print_stats(const workload::Lowered& lowered, double seconds) {
  const arch::CaptureStats stats = arch::capture_stats(lowered.capture);
  std::cout << "phases " << stats.phases.size() << "\n";
  std::cout << "transfers " << stats.transfers << "\n";
  std::cout << "source_addresses " << stats.source_addresses << "\n";
  std::cout << "words " << stats.words << "\n";
  std::cout << "words_delivered " << stats.words_delivered << "\n";
  uint64_t executed = 0;
  for (const auto& p : stats.phases) executed += p.words_delivered * p.execution_count;
  std::cout << "words_delivered_per_run " << executed << "\n";
  std::cout << "owners " << lowered.owners << "\n";
  const auto [peak, resident] = busiest_tiles(lowered);
  if (peak != lowered.memory.end()) {
    std::cout << "peak_sram_bytes " << peak->peak_bytes << " (tile " << peak->tile << ")\n";
    std::cout << "resident_sram_bytes " << resident->persistent_bytes << " (tile " << resident->tile << ")\n";
  }
  std::cout << "lowering_seconds " << seconds << "\n";
  std::cout << "gemm,in,out,k_blocks,o_blocks,chunks,row_groups\n";
  for (const auto& g : lowered.gemms) {
    std::cout << arch::csv_field(g.name) << "," << g.in << "," << g.out << "," << g.k_blocks << "," << g.o_blocks << ","
              << g.chunks << "," << g.row_groups << "\n";
  }
  print_phase_stats_csv(stats.phases, std::cout);
  std::cout << "tile,resident_bytes,peak_bytes\n";
  for (const auto& m : lowered.memory) {
    std::cout << m.tile << "," << m.persistent_bytes << "," << m.peak_bytes << "\n";
  }
}

// The --stats as one object, without the lowering time (so two runs diff cleanly).
nlohmann::ordered_json stats_json(const workload::Workload& workload, const workload::Lowered& lowered,
                                  const std::string& machine) {
  const arch::CaptureStats stats = arch::capture_stats(lowered.capture);
  nlohmann::ordered_json j;
  j["workload"] = workload.name;
  j["machine"] = machine;
  uint64_t executed = 0;
  for (const auto& p : stats.phases) executed += p.words_delivered * p.execution_count;
  j["totals"] = {{"phases", stats.phases.size()},
                 {"transfers", stats.transfers},
                 {"source_addresses", stats.source_addresses},
                 {"words", stats.words},
                 {"words_delivered", stats.words_delivered},
                 {"words_delivered_per_run", executed},
                 {"owners", lowered.owners}};
  const auto [peak, resident] = busiest_tiles(lowered);
  if (peak != lowered.memory.end()) {
    j["peak_sram"] = {{"bytes", peak->peak_bytes}, {"tile", peak->tile}};
    j["resident_sram"] = {{"bytes", resident->persistent_bytes}, {"tile", resident->tile}};
  }
  j["gemms"] = nlohmann::ordered_json::array();
  for (const auto& g : lowered.gemms) {
    j["gemms"].push_back({{"gemm", g.name},
                          {"in", g.in},
                          {"out", g.out},
                          {"k_blocks", g.k_blocks},
                          {"o_blocks", g.o_blocks},
                          {"chunks", g.chunks},
                          {"row_groups", g.row_groups}});
  }
  j["phases"] = phase_stats_json(stats.phases);
  j["tiles"] = nlohmann::ordered_json::array();
  for (const auto& m : lowered.memory) {
    j["tiles"].push_back({{"tile", m.tile}, {"resident_bytes", m.persistent_bytes}, {"peak_bytes", m.peak_bytes}});
  }
  return j;
}

const CommandRegistration registration{
    "lower", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("lower",
                             "Lower a ViT encoder workload (configs/workloads/*.yaml) onto its machine's tiles:\n"
                             "writes the exchange capture (every phase of transfers; the layer body is a Repeat\n"
                             "whose transfers carry one source address per layer) and, with --program, the per-tile\n"
                             "resident program as a package without rows (weight segments, kernel steps, exchange\n"
                             "steps, the layer Repeat with iterated weight pointers). --stats prints phases,\n"
                             "transfers, words per phase, GEMM splits and per-tile SRAM use. Output forms follow\n"
                             "the file names (.yaml/.yml YAML, else Cap'n Proto); --json prints the statistics as\n"
                             "one JSON object (without the lowering time). See docs/lowering.md.");
      struct Options {
        std::string workload;
        std::string capture;
        std::string program;
        std::string machine;
        bool stats = false;
        bool json = false;
      };
      auto o = std::make_shared<Options>();
      cmd->add_option("WORKLOAD", o->workload,
                      "workload file or embedded name, e.g. vit-tiny or configs/workloads/vit-tiny.yaml")
          ->required();
      cmd->add_option("-o,--output", o->capture, "capture file to write");
      cmd->add_option("--program", o->program, "package file to write with the per-tile program");
      cmd->add_option("--machine", o->machine, "override the workload's machine (name or YAML file)");
      cmd->add_flag("--stats", o->stats, "print phases, transfers, words per phase and SRAM use");
      cmd->add_flag("--json", o->json, "print the statistics as one JSON object (implies --stats)");
      add_common_options(*cmd);
      return [o]() {
        if (o->capture.empty() && o->program.empty() && !o->stats && !o->json) {
          throw InputError("lower: nothing to do: give -o CAPTURE, --program PROGRAM or --stats");
        }
        o->workload = resolve_workload(o->workload);
        for (const auto& [path, option] : {std::pair{o->capture, "-o"}, std::pair{o->program, "--program"}}) {
          if (path.empty()) continue;
          arch::check_output_file(path, option);
          arch::refuse_overwriting_input(path, {o->workload, o->machine});
        }
        if (!o->capture.empty() && !o->program.empty()) arch::refuse_overwriting_input(o->capture, {o->program});
        const workload::Workload workload = workload::load_workload(o->workload);
        const arch::MachineDescription machine = arch::load_machine(o->machine.empty() ? workload.machine : o->machine);
        const auto start = std::chrono::steady_clock::now();
        const workload::Lowered lowered = workload::lower_workload(workload, machine);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        spdlog::info("lowered {} in {:.2f} s", workload.name, seconds);
        arch::validate_capture(lowered.capture, machine, o->workload);
        if (!o->capture.empty()) arch::write_capture(lowered.capture, o->capture);
        if (!o->program.empty()) arch::write_package(lowered.program, o->program);
        if (o->json) {
          print_json(stats_json(workload, lowered, machine.name));
        } else if (o->stats) {
          print_stats(lowered, seconds);
        }
        return kExitOk;
      };
    }};

}  // namespace lower_command_local
}  // namespace lockstep::cli
