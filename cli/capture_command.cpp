// `lockstep capture synth|convert|stats|validate`: make, convert and inspect captures.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "arch/machine.hpp"
#include "cli/capture_stats_output.hpp"
#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "formats/capture.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "replay/point.hpp"
#include "workload/synth.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace capture_command_local {}
using namespace capture_command_local;
namespace capture_command_local {

void print_stats(const arch::Capture& capture) {
  const arch::CaptureStats stats = arch::capture_stats(capture);
  std::cout << "machine " << capture.machine_name << "\n";
  std::cout << "phases " << stats.phases.size() << "\n";
  std::cout << "transfers " << stats.transfers << "\n";
  std::cout << "source_addresses " << stats.source_addresses << "\n";
  std::cout << "words " << stats.words << "\n";
  std::cout << "words_delivered " << stats.words_delivered << "\n";
  print_phase_stats_csv(stats.phases, std::cout);
}

nlohmann::ordered_json stats_json(const arch::Capture& capture) {
  const arch::CaptureStats stats = arch::capture_stats(capture);
  nlohmann::ordered_json j;
  j["machine"] = capture.machine_name;
  j["totals"] = {{"phases", stats.phases.size()},
                 {"transfers", stats.transfers},
                 {"source_addresses", stats.source_addresses},
                 {"words", stats.words},
                 {"words_delivered", stats.words_delivered}};
  j["phases"] = phase_stats_json(stats.phases);
  return j;
}

void add_synth(CLI::App& parent, std::function<int()>& run) {
  auto* cmd =
      parent.add_subcommand("synth",
                            "Write a synthetic capture. Families: permutation (each tile sends one block to its\n"
                            "image under a random derangement), uniform (all-to-all: each tile to min(N-1, 32)\n"
                            "distinct tiles), skewed (half the traffic to a few hot tiles), multicast (2..64\n"
                            "destinations per transfer), transformer (embedding, a 27-layer Repeat body whose\n"
                            "weight-streaming phases carry 27 source addresses, then head phases; 80 phases by\n"
                            "default like the seed capture). The same options and seed give the same bytes.");
  struct Options {
    std::string family;
    uint32_t tiles = 0;
    uint64_t seed = 1;
    uint32_t phases = 0;
    std::string machine = arch::kDefaultMachine;
    std::string output;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--family", o->family, "permutation, uniform, skewed, multicast or transformer")->required();
  cmd->add_option("--tiles", o->tiles, "tiles taking part (default: all of the machine's)");
  add_seed_option(*cmd, "--seed", o->seed, "seed of the synthetic capture (default 1)");
  cmd->add_option("--phases", o->phases, "phases (default 8; transformer 80)");
  cmd->add_option("--machine", o->machine, "machine name or YAML file (default ipu21-c600)");
  cmd->add_option("-o,--output", o->output, "output file (.yaml for YAML, else Cap'n Proto)")->required();
  add_common_options(*cmd);
  run = [cmd, o]() {
    if (!cmd->parsed()) return -1;
    arch::check_output_file(o->output, "-o");
    arch::refuse_overwriting_input(o->output, {o->machine});
    const auto machine = arch::load_machine(o->machine);
    workload::SynthOptions options;
    options.family = workload::parse_synth_family(o->family);
    options.tiles = o->tiles;
    options.seed = o->seed;
    options.phases = o->phases;
    using Clock = std::chrono::steady_clock;
    const auto seconds_since = [](Clock::time_point t) {
      return std::chrono::duration<double>(Clock::now() - t).count();
    };
    auto start = Clock::now();
    const arch::Capture capture = workload::synthesize_capture(options, machine);
    spdlog::info("synthesized {} phases in {:.2f} s", capture.phases.size(), seconds_since(start));
    start = Clock::now();
    arch::validate_capture(capture, machine, o->output);
    spdlog::info("validated in {:.2f} s", seconds_since(start));
    start = Clock::now();
    arch::write_capture(capture, o->output);
    spdlog::info("wrote {} in {:.2f} s", o->output, seconds_since(start));
    return kExitOk;
  };
}

void add_convert(CLI::App& parent, std::function<int()>& run) {
  auto* cmd =
      parent.add_subcommand("convert",
                            "Convert a capture between YAML and Cap'n Proto. The input form is read from its\n"
                            "content; the output form follows the output's name (.yaml/.yml is YAML, else Cap'n\n"
                            "Proto). Example: lockstep capture convert in.capnp -o out.yaml (or IN OUT).");
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("IN", *in, "capture to read")->required();
  auto* out_positional = cmd->add_option("OUT", *out, "file to write (the older spelling of -o)");
  cmd->add_option("-o,--output", *out, "file to write")->excludes(out_positional);
  add_common_options(*cmd);
  run = [cmd, in, out]() {
    if (!cmd->parsed()) return -1;
    if (out->empty()) throw InputError("capture convert: -o/--output is required (the file to write)");
    arch::check_output_file(*out, "-o");
    arch::refuse_overwriting_input(*out, {*in});
    arch::write_capture(read_capture_input(*in), *out);
    return kExitOk;
  };
}

void add_stats(CLI::App& parent, std::function<int()>& run) {
  auto* cmd =
      parent.add_subcommand("stats",
                            "Print a capture's totals, then one CSV line per phase: id, label, execution count,\n"
                            "iterations, transfers, destinations, words sent and words delivered (words x\n"
                            "destinations), for one execution of the phase. --json prints one JSON object.");
  auto in = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("FILE", *in, "capture to read")->required();
  cmd->add_flag("--json", *json, "print the totals and phases as one JSON object");
  add_common_options(*cmd);
  run = [cmd, in, json]() {
    if (!cmd->parsed()) return -1;
    const arch::Capture capture = read_capture_input(*in);
    if (*json) {
      print_json(stats_json(capture));
    } else {
      print_stats(capture);
    }
    return kExitOk;
  };
}

void add_validate(CLI::App& parent, std::function<int()>& run) {
  auto* cmd =
      parent.add_subcommand("validate",
                            "Check a capture against its machine (the one it names, as replay, sweep and compile\n"
                            "use it; --machine overrides): tiles, 4-aligned spans inside SRAM and outside\n"
                            "the exchange-table range, word counts, distinct destinations, one source address\n"
                            "per iteration, unique phase ids. Exit 2 with the phase, transfer and field of the\n"
                            "first problem.");
  auto in = std::make_shared<std::string>();
  auto machine = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("FILE", *in, "capture to check")->required();
  cmd->add_option("--machine", *machine, "machine name or YAML file (default: the capture's machine, else ipu21-c600)");
  cmd->add_flag("--json", *json, "print {\"file\", \"machine\", \"ok\"} as one JSON object");
  add_common_options(*cmd);
  run = [cmd, in, machine, json]() {
    if (!cmd->parsed()) return -1;
    const arch::Capture capture = read_capture_input(*in);
    const arch::MachineDescription m = replay::machine_for(capture, *machine);
    arch::validate_capture(capture, m, *in);
    if (*json) {
      print_json({{"file", *in}, {"machine", m.name}, {"ok", true}});
      return kExitOk;
    }
    std::cout << *in << ": ok\n";
    return kExitOk;
  };
}

const CommandRegistration registration{
    "capture", [](CLI::App& app) {
      auto* cmd =
          app.add_subcommand("capture",
                             "Work with captures, the phases and transfers of a program (docs/formats.md, Captures).\n"
                             "Synthesize them, convert between YAML and Cap'n Proto, print statistics, validate.");
      cmd->require_subcommand(1);
      add_common_options(*cmd);
      auto runners = std::make_shared<std::vector<std::function<int()>>>(4);
      add_synth(*cmd, (*runners)[0]);
      add_convert(*cmd, (*runners)[1]);
      add_stats(*cmd, (*runners)[2]);
      add_validate(*cmd, (*runners)[3]);
      return [runners]() {
        for (auto& run : *runners) {
          const int code = run();
          if (code >= 0) return code;
        }
        return kExitBadInput;
      };
    }};

}  // namespace capture_command_local
}  // namespace lockstep::cli
