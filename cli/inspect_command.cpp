// `lockstep inspect PACKAGE [--json]`: what a package holds, without running it.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "formats/package.hpp"
#include "formats/package_io.hpp"
#include "formats/package_summary.hpp"
#include "io/hex.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace inspect_command_local {}
using namespace inspect_command_local;
namespace inspect_command_local {

using arch::hex;

uint64_t binding_bytes(const arch::Binding& b) {
  uint64_t total = 0;
  for (const auto& s : b.slices) total += s.bytes;
  return total;
}

nlohmann::ordered_json step_json(const arch::StepCounts& counts) {
  nlohmann::ordered_json j;
  for (size_t k = 0; k < counts.size(); ++k) j[arch::kStepKindNames[k]] = counts[k];
  return j;
}

void print_json(const arch::Package& p, const arch::PackageSummary& s) {
  nlohmann::ordered_json j;
  j["version"] = p.version;
  j["machine"] = {{"name", p.machine_name}, {"digest", p.machine_digest}};
  j["phases"] = nlohmann::ordered_json::array();
  for (const auto& ph : p.phases) {
    j["phases"].push_back(
        {{"id", ph.id}, {"label", ph.label}, {"execution_count", ph.execution_count}, {"operation", ph.operation}});
  }
  j["table_bytes"] = {{"max", s.max_table_bytes}, {"total", s.total_table_bytes}};
  j["steps"] = {{"total", step_json(s.total_steps)}, {"max_per_tile", step_json(s.max_steps_per_tile)}};
  j["tiles"] = nlohmann::ordered_json::array();
  for (const auto& t : s.tiles) {
    j["tiles"].push_back({{"tile", t.tile},
                          {"table_bytes", t.table_bytes},
                          {"segments", t.segments},
                          {"segment_bytes", t.segment_bytes},
                          {"steps", step_json(t.steps)}});
  }
  j["bindings"] = nlohmann::ordered_json::array();
  for (const auto& b : p.bindings) {
    j["bindings"].push_back({{"name", b.name},
                             {"kind", arch::binding_kind_name(b.kind)},
                             {"slices", b.slices.size()},
                             {"bytes", binding_bytes(b)}});
  }
  j["expectations"] = nlohmann::ordered_json::array();
  for (const auto& e : p.expectations) {
    nlohmann::ordered_json x = {{"tile", e.tile}, {"address", e.address}, {"size", e.size}};
    if (e.digest) {
      x["digest"] = hex(*e.digest);
    } else {
      x["check"] = "bytes";
    }
    j["expectations"].push_back(x);
  }
  std::cout << json_text(j) << "\n";
}

void print_text(const arch::Package& p, const arch::PackageSummary& s) {
  std::cout << "package version " << p.version << "\n";
  std::cout << "machine: " << p.machine_name << " (digest " << p.machine_digest << ")\n";
  std::cout << "tiles: " << p.tiles.size() << " listed";
  if (!p.tiles.empty()) {
    std::cout << " (ids " << p.tiles.front().tile << " .. " << p.tiles.back().tile << ")";
  }
  std::cout << "\nphases: " << p.phases.size() << "\n";
  for (const auto& ph : p.phases) {
    std::cout << "  phase " << ph.id << ": label \"" << ph.label << "\", executions " << ph.execution_count
              << ", operation \"" << ph.operation << "\"\n";
  }
  std::cout << "table bytes per tile: max " << s.max_table_bytes << ", total " << s.total_table_bytes << "\n";
  std::cout << "steps (Repeat bodies counted once): total / max per tile\n";
  for (size_t k = 0; k < s.total_steps.size(); ++k) {
    std::cout << "  " << arch::kStepKindNames[k] << ": " << s.total_steps[k] << " / " << s.max_steps_per_tile[k]
              << "\n";
  }
  std::cout << "bindings: " << p.bindings.size() << "\n";
  for (const auto& b : p.bindings) {
    std::cout << "  " << b.name << " (" << arch::binding_kind_name(b.kind) << "): " << b.slices.size() << " slices, "
              << binding_bytes(b) << " bytes\n";
  }
  std::cout << "expectations: " << p.expectations.size() << "\n";
  for (const auto& e : p.expectations) {
    std::cout << "  tile " << e.tile << " " << hex(e.address) << " " << e.size << " bytes, "
              << (e.digest ? "digest " + hex(*e.digest) : std::string("exact bytes")) << "\n";
  }
}

const CommandRegistration registration{
    "inspect", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("inspect",
                             "Summarise a package (Cap'n Proto or YAML): its machine, tiles, phases (id, label,\n"
                             "execution count, operation), exchange-table bytes per tile (max and total), steps\n"
                             "per tile by kind, bindings and expectations. Reads only; nothing is validated\n"
                             "against a machine (`lockstep package convert` does that).");
      auto path = std::make_shared<std::string>();
      auto json = std::make_shared<bool>(false);
      cmd->add_option("PACKAGE", *path, "the package file")->required();
      cmd->add_flag("--json", *json, "print JSON (with one entry per tile) instead of text");
      add_common_options(*cmd);
      return [path, json]() {
        const arch::Package package = read_package_input(*path);
        const arch::PackageSummary summary = arch::summarize_package(package);
        if (*json) {
          print_json(package, summary);
        } else {
          print_text(package, summary);
        }
        return kExitOk;
      };
    }};

}  // namespace inspect_command_local
}  // namespace lockstep::cli
