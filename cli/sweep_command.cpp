// `lockstep sweep CAPTURE -o DIR`: every phase under every configuration of a sweep file and
// its paired-width alternative, each point compiled, simulated and payload-checked, in
// worker processes (and MPI ranks under mpirun); then results.csv and the report.
#include <filesystem>
#include <iostream>
#include <memory>

#include "arch/capture.hpp"
#include "arch/errors.hpp"
#include "cli/command_registry.hpp"
#include "replay/mpi.hpp"
#include "replay/replay_args.hpp"
#include "replay/report.hpp"
#include "replay/report_files.hpp"
#include "replay/results.hpp"
#include "replay/sweep.hpp"
#include "replay/sweep_definition.hpp"

namespace lockstep::cli {
namespace {

struct SweepArgs {
  std::string capture;
  std::string configs = replay::kDefaultSweep;
  std::string phases;
  size_t jobs = 0;
  bool no_timings = false;
  bool word32_only = false;
  uint64_t samples = 0;
  uint64_t seed = 1;
  std::string machine;
  std::string out;
};

int run_sweep_command(const SweepArgs& args) {
  replay::MpiSession mpi;
  const auto capture = arch::read_capture(args.capture);
  const auto machine = replay::machine_for(capture, args.machine);
  arch::validate_capture(capture, machine, args.capture);
  const auto definition = replay::load_sweep_definition(args.configs);
  replay::SweepOptions options;
  if (!args.phases.empty()) options.phases = replay::parse_phase_list(args.phases);
  options.paired = !args.word32_only;
  options.timings = !args.no_timings;
  options.jobs = args.jobs;
  options.point.seed = args.seed;
  if (args.samples > 0) options.point.samples = args.samples;
  const auto plan = replay::plan_sweep(capture, definition, options);
  if (mpi.root()) {
    std::cerr << "sweep: " << plan.size() << " points ("
              << (plan.empty() ? 0 : plan.size() / definition.configurations.size() /
                                         (options.paired ? 2 : 1))
              << " phases x " << definition.configurations.size() << " configurations"
              << (options.paired ? " x 2 widths" : "") << ") on "
              << (options.jobs ? options.jobs : replay::default_jobs(mpi)) << " worker(s)"
              << (mpi.size() > 1 ? " x " + std::to_string(mpi.size()) + " ranks" : "") << ", "
              << (args.samples ? std::to_string(args.samples) + " sampled destination words"
                               : std::string("every destination word"))
              << " checked per iteration\n";
  }
  const auto points = replay::run_sweep(capture, machine, plan, options, mpi);
  if (!mpi.root()) return kExitOk;

  std::vector<replay::ResultRow> rows;
  size_t failed = 0, errors = 0;
  for (const auto& p : points) {
    rows.push_back(replay::to_result_row(p, options.timings));
    if (p.payload_ok()) continue;
    ++failed;
    if (!p.error.empty()) ++errors;
    if (failed <= 10) {
      std::cerr << "FAIL phase " << p.spec.phase << " " << p.spec.display_name() << ": ";
      if (!p.error.empty()) {
        std::cerr << p.error;
      } else if (!p.mismatches.empty()) {
        const auto& m = p.mismatches.front();
        std::cerr << p.mismatch_count << " mismatches, first tile " << m.tile << " address "
                  << m.address << " iteration " << m.iteration;
      } else if (!p.hazards.empty()) {
        std::cerr << p.hazard_count << " hazards, first " << p.hazards.front();
      } else {
        std::cerr << p.expectation_failures << " expectation failures, " << p.executions
                  << " of " << p.iterations << " executions";
      }
      std::cerr << "\n";
    }
  }
  std::filesystem::create_directories(args.out);
  replay::write_results_csv(rows, replay::join_path(args.out, "results.csv"));
  replay::write_report(rows, definition, machine.clock_hz, args.out);
  std::cout << "points     " << points.size() << " (" << points.size() - failed << " pass, "
            << failed << " fail)\n"
            << "results    " << replay::join_path(args.out, "results.csv") << "\n"
            << "report     " << replay::join_path(args.out, "index.html") << "\n";
  if (errors > 0) {
    std::cerr << errors << " point(s) could not be compiled or simulated\n";
    return kExitInternal;
  }
  return failed == 0 ? kExitOk : kExitFailed;
}

const CommandRegistration registration{"sweep", [](CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "sweep",
      "Sweep a capture: every phase under every configuration of a sweep file and the\n"
      "paired-width alternative of each (B256 and B256p). Every point is compiled, simulated\n"
      "for every Repeat iteration and payload-checked (every destination word unless\n"
      "--samples).\n"
      "Writes DIR/results.csv and the report (frontier.csv, comparisons.csv, index.html,\n"
      "phase pages and plots). Runs on --jobs worker processes; under `mpirun -np N` the\n"
      "points are split across ranks. Outputs are byte-identical whatever the job or rank\n"
      "count (with --no-timings, results.csv too). Exit 1 if any payload check fails.\n"
      "Example: lockstep sweep out/vit.capnp --phases 0-3 -o out/sweep");
  auto args = std::make_shared<SweepArgs>();
  cmd->add_option("CAPTURE", args->capture, "capture file (Cap'n Proto or YAML)")->required();
  cmd->add_option("--configs", args->configs, "sweep definition (path or embedded name)")
      ->capture_default_str();
  cmd->add_option("--phases", args->phases, "phase ids to sweep, e.g. 0,3,5-9 (default: all)");
  cmd->add_option("--jobs,-j", args->jobs,
                  "worker processes (default: the cores, shared among local MPI ranks)");
  cmd->add_flag("--no-timings", args->no_timings,
                "write compile_ms and simulate_ms as 0.000 (byte-identical results.csv)");
  cmd->add_flag("--word32-only", args->word32_only,
                "leave out the paired-width alternatives (half the points)");
  cmd->add_option("--samples", args->samples,
                  "check this many sampled destination words per iteration instead of all");
  cmd->add_option("--seed", args->seed, "payload token and sampling seed")->capture_default_str();
  cmd->add_option("--machine", args->machine,
                  "machine (path or embedded name); default: the capture's machine");
  cmd->add_option("-o,--output", args->out, "output directory")->required();
  add_common_options(*cmd);
  return [args]() { return run_sweep_command(*args); };
}};

}  // namespace
}  // namespace lockstep::cli
