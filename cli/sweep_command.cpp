// `lockstep sweep CAPTURE -o DIR` (or `--resume DIR`): every phase under every configuration of a sweep file and
// its paired-width alternative, each point compiled, simulated and payload-checked, in
// worker processes (and MPI ranks under mpirun); then results.csv and the report.
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "cli/version.hpp"
#include "formats/capture.hpp"
#include "formats/package.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "io/mapped_file.hpp"
#include "io/printable.hpp"
#include "io/report_files.hpp"
#include "replay/mpi.hpp"
#include "replay/replay_args.hpp"
#include "replay/sweep.hpp"
#include "replay/sweep_journal.hpp"
#include "report/report.hpp"
#include "results/provenance.hpp"
#include "results/results.hpp"
#include "results/sweep_definition.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace sweep_command_local {}
using namespace sweep_command_local;
namespace sweep_command_local {

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
  std::string resume;           // the folder of an interrupted sweep
  bool json = false;            // the summary as one JSON object (not part of the journal's identity)
  uint64_t program_cycles = 0;  // the whole program's cycles for the report (0: unknown)
};

// The journal's identity line: the arguments that decide the results (so `--resume DIR`
// needs nothing else) and digests of the capture and configurations (so a changed input is
// refused instead of mixed in).
std::string sweep_identity(const SweepArgs& args, const replay::SweepDefinition& definition) {
  const arch::MappedFile capture(args.capture);
  std::string configurations;
  for (const auto& c : definition.configurations) configurations += c + "\n";
  nlohmann::json j;
  j["capture"] = args.capture;
  j["capture_fnv1a64"] = arch::hex(arch::fnv1a64(capture.data(), capture.size()));
  j["configs"] = args.configs;
  j["configurations_fnv1a64"] =
      arch::hex(arch::fnv1a64(reinterpret_cast<const uint8_t*>(configurations.data()), configurations.size()));
  j["phases"] = args.phases;
  j["no_timings"] = args.no_timings;
  j["word32_only"] = args.word32_only;
  j["samples"] = args.samples;
  j["seed"] = args.seed;
  j["machine"] = args.machine;
  try {
    return j.dump();
  } catch (const nlohmann::json::type_error&) {
    // The journal must give the exact arguments back on --resume.
    throw InputError(args.capture +
                     ": sweep: the capture, --configs, --phases and --machine arguments must be "
                     "valid UTF-8 (a resumable sweep records them)");
  }
}

// `--resume DIR`: the interrupted sweep's own arguments, read back from its journal.
SweepArgs resumed_args(const SweepArgs& given) {
  const std::string identity = replay::SweepJournal::read_identity(given.resume);
  const std::string where = replay::join_path(given.resume, "points.journal");
  SweepArgs args;
  try {
    const auto j = nlohmann::json::parse(identity);
    args.capture = j.at("capture").get<std::string>();
    args.configs = j.at("configs").get<std::string>();
    args.phases = j.at("phases").get<std::string>();
    args.no_timings = j.at("no_timings").get<bool>();
    args.word32_only = j.at("word32_only").get<bool>();
    args.samples = j.at("samples").get<uint64_t>();
    args.seed = j.at("seed").get<uint64_t>();
    args.machine = j.at("machine").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": unreadable sweep arguments: " + e.what());
  }
  args.jobs = given.jobs;
  args.json = given.json;
  args.program_cycles = given.program_cycles;
  args.out = given.resume;
  args.resume = given.resume;
  return args;
}

// `--resume DIR`, the journal read: says what was dropped from it and removes the
// temporaries a write killed half way left in DIR (every file of the sweep is written again).
void resumed_folder(const std::string& dir, const replay::SweepJournal& journal) {
  if (journal.dropped() > 0) {
    std::cerr << "sweep: " << journal.path() << ": " << journal.dropped()
              << " stretch(es) of cut-short or damaged records dropped; their points run again\n";
  }
  arch::remove_stale_temporaries_in(dir);
}

int run_sweep_command(const SweepArgs& given, const std::vector<std::string>& explicit_options) {
  if (!given.resume.empty() && !explicit_options.empty()) {
    throw InputError("--resume: the sweep's options come from its journal; drop " + explicit_options.front());
  }
  const SweepArgs args = given.resume.empty() ? given : resumed_args(given);
  if (args.capture.empty()) throw InputError("sweep: give CAPTURE -o DIR, or --resume DIR");
  if (args.out.empty()) throw InputError("sweep: -o DIR is required (the folder for results and report)");
  replay::MpiSession mpi;
  if (mpi.root()) arch::check_output_directory(args.out, "-o");
  const auto capture = read_capture_input(args.capture);
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
  std::unique_ptr<replay::SweepJournal> journal;
  replay::SweepResume resume;
  std::vector<uint64_t> finished;
  int status = 0;
  std::string failure;
  if (mpi.root()) {
    try {
      arch::create_output_directory(args.out, "-o");
      journal = std::make_unique<replay::SweepJournal>(args.out, sweep_identity(args, definition), !args.resume.empty(),
                                                       plan.size());
      resume.finished = journal->finished();
      if (!args.resume.empty()) resumed_folder(args.out, *journal);
      for (const auto& point : resume.finished) finished.push_back(point.first);
      resume.on_point = [&](size_t index, const std::string& encoded) { journal->append(index, encoded); };
    } catch (const InputError& e) {
      status = 2;
      failure = e.what();
    }
  }
  // Every rank learns of the root's failure (none waits forever) and of what is done.
  if (mpi.broadcast(status) != 0) throw InputError(mpi.root() ? failure : "input error on rank 0");
  for (uint64_t index : mpi.broadcast(finished)) resume.finished.emplace(index, std::string());
  if (mpi.root()) {
    std::cerr << "sweep: " << plan.size() << " points ("
              << (plan.empty() ? 0 : plan.size() / definition.configurations.size() / (options.paired ? 2 : 1))
              << " phases x " << definition.configurations.size() << " configurations"
              << (options.paired ? " x 2 widths" : "") << ") on "
              << (options.jobs ? options.jobs : replay::default_jobs(mpi)) << " worker(s)"
              << (mpi.size() > 1 ? " x " + std::to_string(mpi.size()) + " ranks" : "") << ", "
              << (args.samples ? std::to_string(args.samples) + " sampled destination words"
                               : std::string("every destination word"))
              << " checked per iteration";
    if (!args.resume.empty()) {
      std::cerr << "; resuming: " << resume.finished.size() << " already done";
    }
    std::cerr << "\n";
  }
  const auto points = replay::run_sweep(capture, machine, plan, options, mpi, resume);
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
        std::cerr << printable(p.error);
      } else if (!p.mismatches.empty()) {
        const auto& m = p.mismatches.front();
        std::cerr << p.mismatch_count << " mismatches, first tile " << m.tile << " address " << m.address
                  << " iteration " << m.iteration;
      } else if (!p.hazards.empty()) {
        std::cerr << p.hazard_count << " hazards, first " << printable(p.hazards.front());
      } else {
        std::cerr << p.expectation_failures << " expectation failures, " << p.executions << " of " << p.iterations
                  << " executions";
      }
      std::cerr << "\n";
    }
  }
  replay::write_results_csv(rows, replay::join_path(args.out, "results.csv"));
  replay::ReportProvenance provenance;
  provenance.capture = replay::base_name(args.capture);
  provenance.capture_fnv1a64 = replay::file_fnv1a64(args.capture);
  provenance.machine = machine.name;
  provenance.machine_digest = arch::machine_digest(machine);
  provenance.sweep_lockstep = replay::lockstep_build_text(LOCKSTEP_VERSION, LOCKSTEP_COMMIT);
  provenance.report_lockstep = provenance.sweep_lockstep;
  if (args.program_cycles > 0) provenance.program_cycles = args.program_cycles;
  replay::write_report(rows, definition, machine.clock_hz, args.out, provenance);
  // Everything is in results.csv now; the journal (in finishing order, so not
  // byte-identical across job counts) has done its work.
  journal->finish();
  if (args.json) {
    nlohmann::ordered_json j;
    j["points"] = points.size();
    j["pass"] = points.size() - failed;
    j["fail"] = failed;
    j["errors"] = errors;
    j["results"] = replay::join_path(args.out, "results.csv");
    j["report"] = replay::join_path(args.out, "index.html");
    print_json(j);
  } else {
    std::cout << "points     " << points.size() << " (" << points.size() - failed << " pass, " << failed << " fail)\n"
              << "results    " << replay::join_path(args.out, "results.csv") << "\n"
              << "report     " << replay::join_path(args.out, "index.html") << "\n";
  }
  if (errors > 0) {
    std::cerr << errors << " point(s) could not be compiled or simulated\n";
    return kExitInternal;
  }
  return failed == 0 ? kExitOk : kExitFailed;
}

const CommandRegistration registration{
    "sweep", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("sweep",
                             "Sweep a capture: every phase under every configuration of a sweep file and the\n"
                             "paired-width alternative of each (B256 and B256p). Every point is compiled, simulated\n"
                             "for every Repeat iteration and payload-checked (every destination word unless\n"
                             "--samples).\n"
                             "Writes DIR/results.csv and the report (frontier.csv, comparisons.csv, index.html,\n"
                             "phase pages and plots). Runs on --jobs worker processes; under `mpirun -np N` the\n"
                             "points are split across ranks. Outputs are byte-identical whatever the job or rank\n"
                             "count (with --no-timings, results.csv too). --json prints the closing summary as one\n"
                             "JSON object. Exit 1 if any payload check fails.\n"
                             "DIR/provenance.json records the capture's and machine's digests and this Lockstep's\n"
                             "version; `lockstep compile CAPTURE --selection DIR --window ID` applies a selection.\n"
                             "Example: lockstep sweep out/vit.capnp --phases 0-3 -o out/sweep");
      auto args = std::make_shared<SweepArgs>();
      cmd->add_option("CAPTURE", args->capture, "capture file (Cap'n Proto or YAML)");
      cmd->add_option("--configs", args->configs, "sweep definition (path or embedded name, e.g. frontier)")
          ->capture_default_str();
      cmd->add_option("--phases", args->phases, "phase ids to sweep, e.g. 0,3,5-9 (default: all)");
      add_jobs_option(*cmd, args->jobs, "worker processes (default, or 0: the cores, shared among local MPI ranks)");
      cmd->add_flag("--no-timings", args->no_timings,
                    "write compile_ms and simulate_ms as 0.000 (byte-identical results.csv)");
      cmd->add_flag("--word32-only", args->word32_only, "leave out the paired-width alternatives (half the points)");
      cmd->add_option("--samples", args->samples,
                      "check this many sampled destination words per iteration instead of all; N >= 1")
          ->check(unsigned_in(1, UINT64_MAX));
      add_seed_option(*cmd, "--seed", args->seed, "payload token and sampling seed")->capture_default_str();
      cmd->add_option("--machine", args->machine, "machine (path or embedded name); default: the capture's machine");
      cmd->add_option("-o,--output", args->out,
                      "output folder (created if missing); points are journalled there as they finish");
      cmd->add_option("--resume", args->resume,
                      "finish the interrupted sweep in DIR: its arguments come from DIR/points.journal,\n"
                      "finished points are kept, the rest run; the files equal an uninterrupted run's");
      cmd->add_option("--program-cycles", args->program_cycles,
                      "the whole program's cycles under the reference policy, for the report's\n"
                      "\"saved, % of program\" (e.g. the total cycles `lockstep run` prints for the\n"
                      "model built with it); recorded in DIR/provenance.json")
          ->check(unsigned_in(1, UINT64_MAX));
      cmd->add_flag("--json", args->json, "print the closing summary as one JSON object");
      add_common_options(*cmd);
      return [cmd, args]() {
        std::vector<std::string> given;
        for (const char* name : {"CAPTURE", "--configs", "--phases", "--no-timings", "--word32-only", "--samples",
                                 "--seed", "--machine", "-o"}) {
          if (cmd->get_option(name)->count() > 0) given.emplace_back(name);
        }
        if (args->resume.empty()) args->configs = resolve_sweep(args->configs);
        return run_sweep_command(*args, given);
      };
    }};

}  // namespace sweep_command_local
}  // namespace lockstep::cli
