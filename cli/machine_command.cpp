// `lockstep machine [NAME|FILE] [--json]`: load a machine description, print it and its digest.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "arch/machine.hpp"
#include "cli/command_registry.hpp"
#include "cli/options.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace machine_command_local {}
using namespace machine_command_local;
namespace machine_command_local {

nlohmann::ordered_json machine_json(const arch::MachineDescription& m) {
  nlohmann::ordered_json j;
  j["name"] = m.name;
  j["tiles"] = m.tiles;
  j["chip_tiles"] = m.chip_tiles;
  j["tile_mapping"] = "c600";
  j["memory"] = {{"base", m.sram_base},
                 {"end", m.sram_end},
                 {"element_bytes", m.element_bytes},
                 {"interleaved_base", m.interleaved_base},
                 {"interleaved_element_bytes", m.interleaved_element_bytes},
                 {"row_region_end", m.row_region_end},
                 {"loader_limit", m.loader_limit},
                 {"fetch_lookahead_bytes", m.fetch_lookahead_bytes}};
  j["clock_hz"] = m.clock_hz;
  j["supervisor"] = {{"cycles_per_instruction", m.supervisor_cycles_per_instruction},
                     {"workers", m.workers},
                     {"bulk_patch_threshold_words", m.bulk_patch_threshold_words}};
  j["barrier"] = {{"latency_cycles", m.barrier_latency_cycles}};
  j["exchange"] = {{"neutral_mux", m.neutral_mux},
                   {"ttm_offset", m.route.ttm_offset},
                   {"write_delay_base", m.route.write_delay_base},
                   {"write_delay_per_row", m.route.write_delay_per_row},
                   {"paired_write_delay_base", m.route.paired_write_delay_base},
                   {"receive_tail_events", m.route.receive_tail_events}};
  j["derived"] = {{"sram_bytes", m.sram_bytes()},
                  {"first_element", m.element_of(m.sram_base)},
                  {"last_element", m.element_of(m.sram_end - 1)}};
  j["digest"] = m.digest;
  return j;
}

const CommandRegistration registration{
    "machine", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("machine",
                             "Load a machine description, check it, and print every number the model will use\n"
                             "with the machine's digest (FNV-1a 64 of its canonical text; a package records it\n"
                             "and will not run on a machine with another). SOURCE is an embedded machine name\n"
                             "(see `lockstep configs`) or a YAML file; the default is ipu21-c600. The format is\n"
                             "described in docs/machine.md.");
      auto source = std::make_shared<std::string>(arch::kDefaultMachine);
      auto json = std::make_shared<bool>(false);
      cmd->add_option("SOURCE", *source, "machine name or file (default ipu21-c600)");
      cmd->add_flag("--json", *json, "print one JSON object instead of YAML");
      add_common_options(*cmd);
      return [source, json]() {
        const arch::MachineDescription m = arch::load_machine(*source);
        if (*json) {
          std::cout << json_text(machine_json(m)) << "\n";
          return kExitOk;
        }
        std::cout << arch::machine_to_yaml(m);
        std::cout << "digest: " << m.digest << "\n";
        std::cout << "# derived: " << m.sram_bytes() << " bytes of SRAM per tile (" << m.sram_bytes() / 1024
                  << " KiB), memory elements " << m.element_of(m.sram_base) << ".." << m.element_of(m.sram_end - 1)
                  << "\n";
        return kExitOk;
      };
    }};

}  // namespace machine_command_local
}  // namespace lockstep::cli
