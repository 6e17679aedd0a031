// `lockstep report DIR`: rebuilds a sweep's report from DIR/results.csv alone.
#include <iostream>
#include <memory>

#include "arch/machine.hpp"
#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "replay/report.hpp"
#include "replay/results.hpp"
#include "replay/sweep_definition.hpp"

namespace lockstep::cli {
namespace {

struct ReportArgs {
  std::string dir;
  std::string configs = replay::kDefaultSweep;
  std::string reference;
  std::string machine = arch::kDefaultMachine;
  bool json = false;
};

const CommandRegistration registration{"report", [](CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report",
      "Rebuild a sweep's report from DIR/results.csv: frontier.csv, comparisons.csv,\n"
      "comparisons_by_phase.csv, index.html and per phase phase-<id>.html with its plot\n"
      "(phase-<id>.svg, .png, .pdf). results.csv itself is only read. The outputs contain\n"
      "no timings, dates or absolute paths: the same results give the same bytes.\n"
      "A malformed results.csv exits 2 with 'results.csv:LINE: column: what'.\n"
      "--json prints the closing line as one JSON object.\n"
      "See docs/reports.md for every file, column and comparison window.");
  auto args = std::make_shared<ReportArgs>();
  cmd->add_option("DIR", args->dir, "the sweep's output directory, holding results.csv")
      ->required();
  cmd->add_option("--configs", args->configs,
                  "sweep definition: reference policy and max-row growth windows (a file, or an "
                  "embedded name such as frontier; default configs/sweeps/frontier.yaml)");
  cmd->add_option("--reference", args->reference,
                  "compare against this configuration instead of the sweep's reference, e.g. "
                  "S256 (word32) or B256p (paired64)");
  cmd->add_option("--machine", args->machine,
                  "machine whose clock converts saved cycles to milliseconds (a file or an "
                  "embedded name; default ipu21-c600, 1.5 GHz)");
  cmd->add_flag("--json", args->json, "print {\"points\", \"phases\", \"index\"} as one JSON object");
  add_common_options(*cmd);
  return [args]() {
    replay::SweepDefinition sweep = replay::load_sweep_definition(resolve_sweep(args->configs));
    if (!args->reference.empty()) {
      sweep.reference = replay::parse_point_ref(args->reference, "--reference");
    }
    const double clock_hz = arch::load_machine(args->machine).clock_hz;
    const auto rows = replay::read_results_csv(args->dir + "/results.csv");
    replay::write_report(rows, sweep, clock_hz, args->dir);
    if (args->json) {
      print_json({{"points", rows.size()},
                  {"phases", replay::group_by_phase(rows).size()},
                  {"index", args->dir + "/index.html"}});
      return kExitOk;
    }
    std::cout << "report: " << rows.size() << " points, "
              << replay::group_by_phase(rows).size() << " phases; open " << args->dir
              << "/index.html\n";
    return kExitOk;
  };
}};

}  // namespace
}  // namespace lockstep::cli
