// `lockstep golden check|bless`: the golden regression of the replay harness.
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "replay/golden.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace golden_command_local {}
using namespace golden_command_local;
namespace golden_command_local {

struct GoldenArgs {
  std::string dir = "golden";
  size_t jobs = 0;
  bool json = false;
};

void add_golden_options(CLI::App& cmd, GoldenArgs& args) {
  cmd.add_option("--golden-dir", args.dir, "directory of the *.golden files (relative to the current folder)")
      ->capture_default_str();
  add_jobs_option(cmd, args.jobs, "worker processes (default, or 0: every core)");
  add_common_options(cmd);
}

int check(const GoldenArgs& args) {
  // Before any work: outside the repository root the default folder is not there.
  std::error_code ec;
  if (!std::filesystem::is_directory(args.dir, ec)) {
    throw InputError("--golden-dir: " + args.dir + ": no such directory (" +
                     std::filesystem::absolute(args.dir, ec).string() +
                     "); run from the repository root or give --golden-dir DIR");
  }
  const auto run = replay::run_golden(args.jobs);
  const auto differences = replay::check_golden(run, args.dir);
  size_t points = 0, failed = 0, errors = 0;
  for (const auto& [name, text] : run.files) {
    for (size_t at = 0; (at = text.find(" horizon ", at)) != std::string::npos; ++at) ++points;
    for (size_t at = 0; (at = text.find(" payload fail\n", at)) != std::string::npos; ++at) ++failed;
    for (size_t at = 0; (at = text.find(" error ", at)) != std::string::npos; ++at) ++errors;
  }
  if (args.json) {
    nlohmann::ordered_json j;
    j["golden_dir"] = args.dir;
    j["files"] = run.files.size();
    j["match"] = differences.empty();
    j["points"] = points + errors;
    j["payload_failures"] = failed;
    j["errors"] = errors;
    j["differences"] = nlohmann::ordered_json::array();
    for (const auto& d : differences) {
      j["differences"].push_back({{"file", d.file}, {"key", d.key}, {"expected", d.expected}, {"found", d.found}});
    }
    print_json(j);
    return differences.empty() ? kExitOk : kExitFailed;
  }
  for (const auto& d : differences) {
    std::cout << d.file << ": " << d.key << ": expected " << d.expected << ", found " << d.found << "\n";
  }
  if (!differences.empty()) {
    std::cout << differences.size() << " difference(s) in " << run.files.size()
              << " golden file(s); if the change is intended, run `lockstep golden bless`\n";
    return kExitFailed;
  }
  std::cout << "golden: " << run.files.size() << " file(s) match: " << points + errors << " points, of which " << failed
            << " fail their payload check and " << errors << " could not be compiled or run (as recorded)\n";
  return kExitOk;
}

int bless(const GoldenArgs& args) {
  arch::check_output_directory(args.dir, "--golden-dir");  // before the work, not after it
  const auto run = replay::run_golden(args.jobs);
  for (const auto& name : replay::bless_golden(run, args.dir)) {
    std::cout << "wrote " << args.dir << "/" << name << "\n";
  }
  return kExitOk;
}

const CommandRegistration registration{
    "golden", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("golden",
                             "Golden regression: every phase of a fixed set of captures (small synthetic captures\n"
                             "of every family, fixed seeds) under a subset of the configurations, with horizon,\n"
                             "row bytes, table bytes, patch words and a digest of the delivered payload.");
      cmd->require_subcommand(1);
      auto check_args = std::make_shared<GoldenArgs>();
      auto* check_cmd =
          cmd->add_subcommand("check",
                              "Recompute and compare with the golden files; print every difference (exit 1).\n"
                              "The golden folder (--golden-dir, default ./golden) must exist before any work;\n"
                              "--json prints the outcome and every difference as one JSON object.");
      add_golden_options(*check_cmd, *check_args);
      check_cmd->add_flag("--json", check_args->json, "print the outcome as one JSON object");
      auto bless_args = std::make_shared<GoldenArgs>();
      auto* bless_cmd =
          cmd->add_subcommand("bless", "Recompute and rewrite the golden files (only when a change is intended).");
      add_golden_options(*bless_cmd, *bless_args);
      add_common_options(*cmd);
      return [=]() { return check_cmd->parsed() ? check(*check_args) : bless(*bless_args); };
    }};

}  // namespace golden_command_local
}  // namespace lockstep::cli
