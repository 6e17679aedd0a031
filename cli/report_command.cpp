// `lockstep report DIR`: rebuilds a sweep's report from DIR/results.csv alone.
#include <iostream>
#include <memory>

#include "arch/machine.hpp"
#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "cli/version.hpp"
#include "report/report.hpp"
#include "results/provenance.hpp"
#include "results/results.hpp"
#include "results/sweep_definition.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace report_command_local {}
using namespace report_command_local;
namespace report_command_local {

struct ReportArgs {
  std::string dir;
  std::string configs = replay::kDefaultSweep;
  std::string reference;
  std::string machine;  // default: the sweep's machine (provenance.json), else ipu21-c600
  uint64_t program_cycles = 0;
  bool json = false;
};

const CommandRegistration registration{
    "report", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("report",
                             "Rebuild a sweep's report from DIR/results.csv: frontier.csv, comparisons.csv,\n"
                             "comparisons_by_phase.csv, index.html and per phase phase-<id>.html with its plot\n"
                             "(phase-<id>.svg, .png, .pdf). results.csv itself is only read. The outputs contain\n"
                             "no timings, dates or absolute paths: the same results give the same bytes.\n"
                             "A malformed results.csv exits 2 with 'results.csv:LINE: column: what'.\n"
                             "--json prints the closing line as one JSON object.\n"
                             "DIR/provenance.json (written by the sweep: capture and machine digests, Lockstep\n"
                             "version) is read back and rewritten with this Lockstep as the report's author; a\n"
                             "folder without one gets a report whose capture and machine are 'unknown'.\n"
                             "See docs/reports.md for every file, column and comparison window.");
      auto args = std::make_shared<ReportArgs>();
      cmd->add_option("DIR", args->dir, "the sweep's output directory, holding results.csv")->required();
      cmd->add_option("--configs", args->configs,
                      "sweep definition: reference policy and max-row growth windows (a file, or an "
                      "embedded name such as frontier; default configs/sweeps/frontier.yaml)");
      cmd->add_option("--reference", args->reference,
                      "compare against this configuration instead of the sweep's reference, e.g. "
                      "S256 (word32) or B256p (paired64)");
      cmd->add_option("--machine", args->machine,
                      "machine whose clock converts saved cycles to milliseconds (a file or an "
                      "embedded name; default: the sweep's machine from DIR/provenance.json, else "
                      "ipu21-c600, 1.5 GHz)");
      cmd->add_option("--program-cycles", args->program_cycles,
                      "the whole program's cycles under the reference policy, for \"saved, % of "
                      "program\" (default: the value in DIR/provenance.json, if any)")
          ->check(unsigned_in(1, UINT64_MAX));
      cmd->add_flag("--json", args->json, "print {\"points\", \"phases\", \"index\"} as one JSON object");
      add_common_options(*cmd);
      return [args]() {
        replay::SweepDefinition sweep = replay::load_sweep_definition(resolve_sweep(args->configs));
        if (!args->reference.empty()) {
          sweep.reference = replay::parse_point_ref(args->reference, "--reference");
        }
        const auto rows = replay::read_results_csv(args->dir + "/results.csv");
        replay::ReportProvenance provenance = replay::read_provenance(args->dir).value_or(replay::ReportProvenance{});
        std::string machine_name = args->machine;
        if (machine_name.empty())
          machine_name = provenance.machine.empty() ? arch::kDefaultMachine : provenance.machine;
        const double clock_hz = arch::load_machine(machine_name).clock_hz;
        provenance.report_lockstep = replay::lockstep_build_text(LOCKSTEP_VERSION, LOCKSTEP_COMMIT);
        if (args->program_cycles > 0) provenance.program_cycles = args->program_cycles;
        replay::write_report(rows, sweep, clock_hz, args->dir, provenance);
        if (args->json) {
          print_json({{"points", rows.size()},
                      {"phases", replay::group_by_phase(rows).size()},
                      {"index", args->dir + "/index.html"}});
          return kExitOk;
        }
        std::cout << "report: " << rows.size() << " points, " << replay::group_by_phase(rows).size() << " phases; open "
                  << args->dir << "/index.html\n";
        return kExitOk;
      };
    }};

}  // namespace report_command_local
}  // namespace lockstep::cli
