// `lockstep run PACKAGE`: runs a package on the SystemC model of the machine it names,
// prints total cycles and each phase's horizon, writes output bindings, reports hazards
// and expectation failures.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include "arch/errors.hpp"
#include "arch/machine.hpp"
#include "arch/package.hpp"
#include "cli/command_registry.hpp"
#include "cli/logging.hpp"
#include "sim/backend.hpp"

namespace lockstep::cli {
namespace {

struct RunArgs {
  std::string package;
  std::vector<std::string> inputs;
  std::string output_dir;
  bool json = false;
  bool keep_going = false;
};

std::vector<uint8_t> read_binary(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(what + ": cannot read file '" + path + "'");
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_binary(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  const auto tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path.string() + ": cannot write");
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw InputError(path.string() + ": write failed");
  }
  std::filesystem::rename(tmp, path);
}

// Events count from the phase's release (event 0 = release_cycle).
nlohmann::ordered_json execution_json(const sim::PhaseExecution& e) {
  nlohmann::ordered_json tiles = nlohmann::ordered_json::array();
  for (const auto& t : e.tiles) {
    nlohmann::ordered_json received = nlohmann::ordered_json::array();
    for (const auto& r : t.received) {
      received.push_back({{"from_tile", r.sender}, {"address", r.address}, {"source_address", r.source_address},
                          {"bytes", r.bytes}, {"first_write_event", r.first_write_event},
                          {"last_write_event", r.last_write_event}});
    }
    tiles.push_back({{"tile", t.tile}, {"row_end", t.row_end}, {"received", received}});
  }
  return {{"phase", e.phase}, {"iteration", e.iteration}, {"release_cycle", e.release_cycle},
          {"horizon", e.horizon}, {"tiles", tiles}};
}

int run(const RunArgs& args) {
  const arch::Package package = arch::read_package(args.package);
  const arch::MachineDescription machine = arch::load_machine(package.machine_name);
  sim::RunOptions options;
  options.keep_going = args.keep_going;
  options.source_name = args.package;
  options.record_tiles = args.json;
  if (auto t = trace_tile()) options.trace_tile = *t;
  for (const auto& spec : args.inputs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError("--input " + spec + ": expected NAME=FILE");
    }
    const std::string name = spec.substr(0, eq);
    options.inputs[name] = read_binary(spec.substr(eq + 1), "--input " + name);
  }
  if (!args.output_dir.empty() && !std::filesystem::is_directory(args.output_dir)) {
    throw InputError("--output-dir " + args.output_dir + ": not a directory");
  }
  const sim::RunResult result = sim::make_systemc_backend(machine)->run(package, options);

  if (!args.output_dir.empty()) {
    for (const auto& [name, bytes] : result.outputs) {
      write_binary(std::filesystem::path(args.output_dir) / (name + ".bin"), bytes);
    }
  }
  if (args.json) {
    nlohmann::ordered_json j;
    j["package"] = std::filesystem::path(args.package).filename().string();
    j["machine"] = machine.name;
    j["total_cycles"] = result.total_cycles;
    j["executions"] = nlohmann::ordered_json::array();
    for (const auto& e : result.executions) j["executions"].push_back(execution_json(e));
    j["hazards"] = nlohmann::ordered_json::array();
    for (const auto& h : result.hazards) {
      j["hazards"].push_back({{"kind", sim::hazard_name(h.kind)}, {"tile", h.tile}, {"phase", h.phase},
                              {"iteration", h.iteration}, {"cycle", h.cycle}, {"row_offset", h.row_offset},
                              {"instruction", h.instruction}, {"detail", h.detail}});
    }
    j["expectation_failures"] = nlohmann::ordered_json::array();
    for (const auto& f : result.expectation_failures) {
      j["expectation_failures"].push_back(
          {{"tile", f.tile}, {"address", f.address}, {"expected", f.expected}, {"found", f.found}});
    }
    j["ok"] = result.ok();
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "machine " << machine.name << "\n";
    std::cout << "total cycles " << result.total_cycles << "\n";
    std::cout << "phase  iteration  release_cycle  horizon\n";
    for (const auto& e : result.executions) {
      std::cout << e.phase << "  " << e.iteration << "  " << e.release_cycle << "  " << e.horizon << "\n";
    }
    for (const auto& h : result.hazards) std::cout << sim::describe(h) << "\n";
    for (const auto& f : result.expectation_failures) {
      std::cout << "expectation failed: tile " << f.tile << " address 0x" << std::hex << f.address
                << std::dec << ": expected " << f.expected << ", found " << f.found << "\n";
    }
    std::cout << (result.ok() ? "ok" : "FAILED") << "\n";
  }
  return result.ok() ? kExitOk : kExitFailed;
}

const CommandRegistration registration{"run", [](CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "run",
      "Run a package (Cap'n Proto or YAML) on the SystemC model of the machine it names.\n"
      "Prints the total cycles and the horizon of every phase execution, every hazard\n"
      "(class, tile, phase, iteration, cycle, row offset, instruction) and every failed\n"
      "expectation. By default the first hazard stops the run; --keep-going collects all.\n"
      "Exit 0 ok, 1 a hazard or failed expectation, 2 bad input.");
  auto args = std::make_shared<RunArgs>();
  cmd->add_option("PACKAGE", args->package, "the package file")->required();
  cmd->add_option("--input", args->inputs, "NAME=FILE: bytes of an input binding (repeatable)");
  cmd->add_option("--output-dir", args->output_dir, "write each output binding to DIR/NAME.bin");
  cmd->add_flag("--json", args->json,
                "print the result as one JSON object; every phase execution lists each tile's\n"
                "row end and, per received run, its sender, addresses, bytes and first and\n"
                "last write event (events from the phase's release)");
  cmd->add_flag("--keep-going", args->keep_going, "collect every hazard instead of stopping");
  add_common_options(*cmd);
  return [args]() { return run(*args); };
}};

}  // namespace
}  // namespace lockstep::cli
