// `lockstep replay CAPTURE --phase ID --config C`: one phase compiled, run for every Repeat
// iteration with a unique token in every source word, and its payload checked.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/command_registry.hpp"
#include "cli/device_image.hpp"
#include "cli/options.hpp"
#include "cli/profile_output.hpp"
#include "cli/watch_option.hpp"
#include "formats/capture.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "replay/point.hpp"
#include "replay/replay_args.hpp"
#include "replay/sampling.hpp"
#include "sim/backend.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace replay_command_local {}
using namespace replay_command_local;
namespace replay_command_local {

constexpr uint64_t kDeviceProofWords = 8192;  // what the seed's hardware replays read back

struct ReplayArgs {
  std::string capture;
  uint32_t phase = 0;
  std::string config;
  uint64_t samples = 0;  // 0: every destination word
  bool all = false;      // the old way to say "every word", now the default
  uint64_t seed = 1;
  std::string iterations = "all";
  std::string machine;
  size_t jobs = 0;
  bool json = false;
  std::string profile;               // --profile FILE
  std::vector<std::string> watches;  // --watch TILE:ADDRESS[:BYTES]
  std::string device_image;          // --device-image FILE
  std::string object;
  std::string profiling = "none";
};

// `--device-image F`: the phase as an image the IPU21 stack runs (docs/device.md, "Replays
// on a device"), its payload read back through proof.sampled.
int write_device_replay(const ReplayArgs& args, const arch::Capture& capture, const arch::MachineDescription& machine,
                        const replay::PointSpec& spec) {
  arch::check_output_file(args.device_image, "--device-image");
  arch::refuse_overwriting_input(args.device_image, {args.capture});
  const uint64_t words = args.samples > 0 ? args.samples : kDeviceProofWords;
  const arch::Package package = replay::device_replay_package(capture, machine, spec, args.seed, words);
  arch::ExportOptions options;
  options.object_path = args.object;
  options.profiling = args.profiling == "full"      ? arch::ProfilingMode::Full
                      : args.profiling == "overall" ? arch::ProfilingMode::Overall
                                                    : arch::ProfilingMode::None;
  const arch::Application app = write_device_image(package, args.device_image, args.device_image, options);
  uint64_t sampled = 0;
  for (const arch::Binding& b : package.bindings) {
    for (const arch::Slice& s : b.slices) sampled += b.name == "proof.sampled" ? s.bytes / 4 : 0;
  }
  std::cout << args.device_image << ": phase " << spec.phase << " config " << spec.display_name() << ", "
            << app.tiles.size() << " tiles, " << sampled << " destination words read back as proof.sampled\n";
  return kExitOk;
}

// The replayed phase's profile; a phase without transfers never runs, so its profile has
// no tiles.
void write_replay_profile(const replay::PointResult& r, const arch::MachineDescription& machine, const ReplayArgs& args,
                          const replay::PointSpec& spec) {
  arch::Profile profile;
  if (r.profile) {
    profile = *r.profile;
  } else {
    profile.clock_hz = static_cast<uint64_t>(machine.clock_hz);
    profile.machine_name = machine.name;
  }
  const std::string capture = std::filesystem::path(args.capture).filename().string();
  write_run_profile(std::move(profile), capture + " phase " + std::to_string(spec.phase) + " config " + spec.config,
                    args.profile);
}

std::string hex(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

nlohmann::ordered_json result_json(const ReplayArgs& args, const replay::PointResult& r, const replay::PointSpec& spec,
                                   uint64_t phase_iterations, uint64_t words, const std::optional<uint64_t>& samples) {
  nlohmann::ordered_json j;
  j["phase"] = r.spec.phase;
  j["label"] = r.label;
  j["config"] = spec.config;
  j["width"] = spec.paired ? "paired64" : "word32";
  j["iterations"] = phase_iterations;
  j["iterations_replayed"] = r.iterations;
  j["seed"] = args.seed;
  if (!r.error.empty()) {
    j["error"] = r.error;
    return j;
  }
  j["horizon_cycles"] = r.horizon;
  j["compiled_horizon_cycles"] = r.compiled_horizon;
  j["lower_bound_cycles"] = r.lower_bound;
  j["max_row_bytes"] = r.max_row_bytes;
  j["total_row_bytes"] = r.total_row_bytes;
  j["patch_words"] = r.patch_words;
  j["patch_calls"] = r.patch_calls;
  j["destination_words"] = words;
  j["sampled_words"] = samples && *samples < words ? nlohmann::ordered_json(*samples) : nlohmann::ordered_json();
  j["words_checked"] = r.words_checked;
  j["executions"] = r.executions;
  j["hazard_count"] = r.hazard_count;
  j["hazards"] = r.hazards;
  j["expectation_failures"] = r.expectation_failures;
  j["mismatch_count"] = r.mismatch_count;
  j["mismatches"] = nlohmann::ordered_json::array();
  for (const auto& m : r.mismatches) {
    j["mismatches"].push_back({{"tile", m.tile},
                               {"address", hex(m.address)},
                               {"iteration", m.iteration},
                               {"expected", hex(m.expected)},
                               {"found", hex(m.found)}});
  }
  if (!args.watches.empty()) j["watch"] = watch_json(r.watch_writes);
  j["payload"] = r.payload_ok() ? "pass" : "fail";
  return j;
}

int run_replay(const ReplayArgs& args) {
  const ThreadLimit threads(args.jobs);
  // Only the replayed phase is read and validated: the others play no part.
  const auto capture = read_capture_input(args.capture, args.phase);
  const auto machine = replay::machine_for(capture, args.machine);
  arch::validate_capture(capture, machine, args.capture);
  const auto& phase = replay::find_phase(capture, args.phase);
  const auto spec = replay::parse_point_config(args.config, args.phase);
  if (!args.device_image.empty()) return write_device_replay(args, capture, machine, spec);
  replay::PointOptions options;
  options.seed = args.seed;
  if (args.samples > 0) options.samples = args.samples;
  options.all_iterations = args.iterations == "all";
  options.profile = !args.profile.empty();
  if (options.profile) check_profile_output(args.profile, {args.capture});
  options.watches = parse_watches(args.watches);
  sim::check_watches(options.watches, machine);

  const auto r = replay::run_point(capture, machine, spec, options);
  const uint64_t words = replay::count_destination_words(phase);
  if (options.profile && r.error.empty()) write_replay_profile(r, machine, args, spec);
  if (args.json) {
    print_json(result_json(args, r, spec, phase.iterations, words, options.samples));
    if (!r.error.empty()) return r.error_exit_code == kExitBadInput ? kExitBadInput : kExitInternal;
    return r.payload_ok() ? kExitOk : kExitFailed;
  }
  std::cout << "phase " << r.spec.phase << " (" << r.label << ") config " << spec.config
            << (spec.paired ? " paired64" : " word32") << ", " << r.iterations << " of " << phase.iterations
            << " iteration(s) replayed, seed " << args.seed << "\n";
  if (!r.error.empty()) {
    std::cout << "error: " << r.error << "\n";
    return r.error_exit_code == kExitBadInput ? kExitBadInput : kExitInternal;
  }
  if (phase.transfers.empty()) std::cout << "empty        the phase has no transfers: nothing to move or check\n";
  std::cout << "horizon      " << r.horizon << " cycles (compiled schedule: " << r.compiled_horizon << ")\n"
            << "lower bound  " << r.lower_bound << "\n"
            << "max row      " << r.max_row_bytes << " bytes\n"
            << "total row    " << r.total_row_bytes << " bytes\n"
            << "patch words  " << r.patch_words << " (" << r.patch_calls << " patch calls)\n"
            << "checked      " << r.words_checked << " words: "
            << (options.samples && *options.samples < words ? std::to_string(*options.samples) + " sampled"
                                                            : "all " + std::to_string(words))
            << " per iteration x " << r.executions << " execution(s)\n";
  if (r.executions != r.iterations) {
    std::cout << "executions   the simulator ran the phase " << r.executions << " time(s), expected " << r.iterations
              << "\n";
  }
  std::cout << watch_text(r.watch_writes);
  for (const auto& h : r.hazards) std::cout << "hazard       " << h << "\n";
  if (r.hazard_count > r.hazards.size()) {
    std::cout << "hazard       ... " << r.hazard_count - r.hazards.size() << " more\n";
  }
  if (r.expectation_failures > 0) {
    std::cout << "expectations " << r.expectation_failures << " package expectation(s) failed\n";
  }
  for (const auto& m : r.mismatches) {
    std::cout << "mismatch     tile " << m.tile << " address " << hex(m.address) << " iteration " << m.iteration
              << ": expected " << hex(m.expected) << " found " << hex(m.found) << "\n";
  }
  if (r.mismatch_count > r.mismatches.size()) {
    std::cout << "mismatch     ... " << r.mismatch_count - r.mismatches.size() << " more\n";
  }
  const bool pass = r.payload_ok();
  std::cout << "payload      " << (pass ? "pass" : "FAIL") << "\n";
  return pass ? kExitOk : kExitFailed;
}

const CommandRegistration registration{
    "replay", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("replay",
                             "Replay one phase of a capture: compile it under one configuration, put a unique\n"
                             "payload token in every source word of every Repeat iteration, run it on the SystemC\n"
                             "model, and check the destination words after every iteration. Prints horizon, lower\n"
                             "bound, row and patch sizes, pass or fail and the first mismatches. Exit 1 on a\n"
                             "mismatch or hazard. Every destination word is checked unless --samples N asks for\n"
                             "a seeded sample; --json prints the result as one JSON object.\n"
                             "Example: lockstep replay out/vit.capnp --phase 3 --config B256");
      auto args = std::make_shared<ReplayArgs>();
      cmd->add_option("CAPTURE", args->capture, "capture file (Cap'n Proto or YAML)")->required();
      cmd->add_option("--phase", args->phase, "phase id")->required();
      cmd->add_option("--config", args->config,
                      "configuration: latency, automatic, remaining-combined, S<W>, B<W>; a p or\n"
                      "+paired suffix selects the paired width (B256p)")
          ->required();
      auto* samples = cmd->add_option("--samples", args->samples,
                                      "check a seeded sample of N destination words per iteration (covering\n"
                                      "every destination tile first) instead of every word; N >= 1")
                          ->check(unsigned_in(1, UINT64_MAX));
      cmd->add_flag("--all", args->all, "check every destination word (the default; kept for old scripts)")
          ->excludes(samples);
      add_seed_option(*cmd, "--seed", args->seed, "payload token and sampling seed")->capture_default_str();
      cmd->add_option("--iterations", args->iterations, "all: replay every Repeat iteration; first: only the first")
          ->check(CLI::IsMember({"all", "first"}))
          ->capture_default_str();
      cmd->add_option("--machine", args->machine, "machine (path or embedded name); default: the capture's machine");
      add_jobs_option(*cmd, args->jobs, "threads to compile the phase on (default, or 0: every core)");
      cmd->add_flag("--json", args->json, "print the result as one JSON object");
      add_watch_option(*cmd, args->watches);
      cmd->add_option("--profile", args->profile,
                      "write the replay's cycle profile (docs/profiles.md): per tile, a sample per executed\n"
                      "step; read it with `lockstep profile summary|phases|query|render|export`");
      auto* image =
          cmd->add_option("--device-image", args->device_image,
                          "instead of replaying, write the phase (every Repeat iteration) as an image the IPU21\n"
                          "stack runs: no checksum kernels; the output binding proof.sampled reads back about\n"
                          "8192 destination words (--samples N: about N), which `crosscheck` compares with\n"
                          "`device simulate` of the same image");
      cmd->add_option("--object", args->object,
                      "with --device-image: an ELF object defining the symbols the code calls")
          ->needs(image);
      cmd->add_option("--profiling", args->profiling, "with --device-image: none, overall or full, as device export")
          ->check(CLI::IsMember({"none", "overall", "full"}))
          ->needs(image);
      add_common_options(*cmd);
      return [args]() { return run_replay(*args); };
    }};

}  // namespace replay_command_local
}  // namespace lockstep::cli
