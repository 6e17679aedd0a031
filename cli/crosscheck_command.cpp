// `lockstep crosscheck --simulated DIR --device DIR -o REPORT`: two result folders of the
// runner contract compared (docs/device.md, "Cross-check"): outputs byte for byte, cycles per
// exchange phase, per kernel and in total, with error %, MAPE and correlation; a report
// folder with crosscheck.csv, outputs.csv, scatter.svg/png and index.html.
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "io/errors.hpp"
#include "io/staged_directory.hpp"
#include "report/crosscheck_report.hpp"
#include "sim/device/crosscheck.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace crosscheck_command_local {}
using namespace crosscheck_command_local;
namespace crosscheck_command_local {

struct CrosscheckArgs {
  std::string simulated;
  std::string device;
  std::string report;
  double max_total = -1, max_phase = -1, max_kernel = -1;  // negative: no bound
  bool json = false;
};

std::string statistic(double value) {
  if (std::isnan(value)) return "n/a";
  char text[48];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

const replay::CycleRow* total_row(const replay::Crosscheck& c) {
  for (const auto& row : c.rows) {
    if (row.kind == replay::RowKind::Total) return &row;
  }
  return nullptr;
}

void print_text(const replay::Crosscheck& c) {
  size_t equal = 0, phases = 0, kernels = 0;
  for (const auto& o : c.outputs) equal += o.equal() ? 1 : 0;
  for (const auto& r : c.rows) {
    phases += r.kind == replay::RowKind::Phase ? 1 : 0;
    kernels += r.kind == replay::RowKind::Kernel ? 1 : 0;
  }
  const replay::CycleRow* total = total_row(c);
  std::cout << "outputs: " << equal << " of " << c.outputs.size() << " equal\n";
  std::cout << "rows: " << phases << " exchange phases, " << kernels << " kernels\n";
  if (total) {
    std::cout << "total: simulated " << (total->simulated ? std::to_string(*total->simulated) : "-") << ", device "
              << (total->device ? std::to_string(*total->device) : "-") << " cycles, error "
              << replay::percent_text(total->error_percent()) << "%\n";
  }
  std::cout << "MAPE " << statistic(c.statistics.mape_percent) << "% over " << c.statistics.rows
            << " rows; Pearson r (log10 cycles) " << statistic(c.statistics.pearson_log) << ", (cycles) "
            << statistic(c.statistics.pearson) << "\n";
  for (const auto& f : c.failures) std::cout << "FAILED " << f << "\n";
  std::cout << (c.passed() ? "ok" : "FAILED") << "\n";
}

void print_summary_json(const replay::Crosscheck& c) {
  auto number = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
  nlohmann::ordered_json j;
  j["simulated"] = c.simulated_dir;
  j["device"] = c.device_dir;
  j["outputs"] = nlohmann::ordered_json::array();
  for (const auto& o : c.outputs) j["outputs"].push_back({{"binding", o.name}, {"equal", o.equal()}});
  const replay::CycleRow* total = total_row(c);
  j["total_error_percent"] = total ? number(total->error_percent()) : nlohmann::ordered_json();
  j["rows"] = c.statistics.rows;
  j["mape_percent"] = number(c.statistics.mape_percent);
  j["pearson_log"] = number(c.statistics.pearson_log);
  j["pearson"] = number(c.statistics.pearson);
  j["failures"] = c.failures;
  j["ok"] = c.passed();
  std::cout << json_text(j) << "\n";
}

int run_crosscheck(const CrosscheckArgs& args) {
  arch::check_staged_directory(args.report, "-o");
  const replay::LoadedResult simulated = replay::read_device_result(args.simulated);
  const replay::LoadedResult device = replay::read_device_result(args.device);
  auto bound = [](double percent) { return percent < 0 ? std::nullopt : std::optional<double>(percent); };
  const replay::Thresholds thresholds{bound(args.max_total), bound(args.max_phase), bound(args.max_kernel)};
  const replay::Crosscheck check = replay::crosscheck(simulated, device, thresholds);
  {
    arch::StagedDirectory staged(args.report, "-o");
    replay::write_crosscheck_report(check, staged.path());
    staged.commit();
  }
  if (args.json) {
    print_summary_json(check);
  } else {
    print_text(check);
  }
  return check.passed() ? kExitOk : kExitFailed;
}

const CommandRegistration registration{
    "crosscheck", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("crosscheck",
                             "Compare a simulated result folder with a device's (both in the runner contract's "
                             "layout,\n"
                             "docs/device.md; `lockstep device simulate` writes one). Outputs byte for byte per "
                             "binding;\n"
                             "cycles per exchange phase (latest end - latest start over its tiles), per kernel "
                             "(summed\n"
                             "compute samples) and in total, error = (simulated - device) / device, the mean "
                             "absolute\n"
                             "percentage error and Pearson's r of log10 cycles. Writes REPORT/: crosscheck.csv,\n"
                             "outputs.csv, scatter.svg, scatter.png (log-log, y = x) and a self-contained "
                             "index.html.\n"
                             "Exit 0 all outputs equal and every error within its bound, 1 otherwise (each failure\n"
                             "printed), 2 bad input (a missing folder, a malformed file: nothing written).");
      auto args = std::make_shared<CrosscheckArgs>();
      cmd->add_option("--simulated", args->simulated, "the simulated result folder")->required();
      cmd->add_option("--device", args->device, "the device's result folder")->required();
      cmd->add_option("-o,--output", args->report, "the report folder to make (missing or empty)")->required();
      cmd->add_option("--max-total-error", args->max_total, "fail when |total error| passes PCT percent")
          ->check(finite_non_negative());
      cmd->add_option("--max-phase-error", args->max_phase, "fail when any exchange phase's |error| passes PCT percent")
          ->check(finite_non_negative());
      cmd->add_option("--max-kernel-error", args->max_kernel, "fail when any kernel's |error| passes PCT percent")
          ->check(finite_non_negative());
      cmd->add_flag("--json", args->json, "print the summary as one JSON object");
      add_common_options(*cmd);
      return [args]() { return run_crosscheck(*args); };
    }};

}  // namespace crosscheck_command_local
}  // namespace lockstep::cli
