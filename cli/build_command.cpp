// `lockstep build WORKLOAD -o PACKAGE`: lower a workload, compile every exchange phase and
// merge the rows into the program: one package that runs the whole model.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "arch/machine.hpp"
#include "calibration/costs_file.hpp"
#include "cli/command_registry.hpp"
#include "cli/options.hpp"
#include "cli/stage_progress.hpp"
#include "compiler/compile.hpp"
#include "formats/package.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "io/yaml_reader.hpp"
#include "replay/model_package.hpp"
#include "workload/model_weights.hpp"
#include "workload/weights_file.hpp"
#include "workload/workload.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace build_command_local {}
using namespace build_command_local;
namespace build_command_local {

struct BuildArgs {
  std::string workload;
  std::string output;
  std::string config = "B1024";
  std::string machine;
  std::string weights;  // safetensors file; seeded when empty
  std::string costs;    // --costs FILE: fitted kernel cost parameters steer the lowering
  uint64_t weight_seed = 1;
  uint64_t input_seed = 1;
  size_t jobs = 0;
  bool json = false;
  bool allow_non_finite = false;  // keep NaN and infinities in --weights
};

int build(const BuildArgs& given) {
  const auto start = std::chrono::steady_clock::now();
  const ThreadLimit threads(given.jobs);
  BuildArgs args = given;
  args.workload = resolve_workload(given.workload);
  const workload::Workload workload = workload::load_workload(args.workload);
  const std::string machine_source = args.machine.empty() ? workload.machine : args.machine;
  arch::MachineDescription machine = arch::load_machine(machine_source);
  if (!args.costs.empty()) machine.kernel_costs = calibration::read_kernel_costs(args.costs);
  replay::ModelPackageOptions options;
  options.config = compiler::parse_config(args.config);
  arch::check_output_file(args.output, "-o");
  arch::refuse_overwriting_input(args.output, {args.workload, machine_source, args.weights, args.costs});
  // A build killed while writing leaves OUT.tmp-XXXXXX (hundreds of MB for a large model):
  // removed now, before the build needs the space (the write would remove it too).
  arch::remove_stale_temporaries(args.output);
  // Seeded weights are made and quantised a layer at a time; a file's FP32 weights are freed
  // once quantised, before the lowering.
  const workload::DeviceWeights device =
      args.weights.empty() ? workload::seeded_device_weights(workload, args.weight_seed)
                           : workload::fold_and_quantize(
                                 workload::load_weights_file(args.weights, workload, args.allow_non_finite), workload);
  for (const auto& t : workload::saturated_tensors(device)) {
    spdlog::warn(
        "{}: tensor '{}': {} of {} weights are beyond FP8 (F143) range at the workload's weight scale "
        "and saturate; the package runs the clipped values",
        args.weights.empty() ? "seeded weights" : args.weights, t.name, t.saturated, t.values);
  }
  options.weights = &device;
  options.patches = workload::seeded_patches(workload, args.input_seed);

  StageProgress progress("build");
  options.on_stage = [&](const std::string& text) {
    progress.stage(text);
    spdlog::debug("build: {}", text);
  };
  replay::ModelPackage built = replay::build_model_package(workload, machine, options);
  built.package.workload = arch::read_text_file(args.workload);  // for `run --reference`
  progress.stage("validating");
  arch::validate_package(built.package, machine, args.output);
  progress.stage("writing " + args.output);
  arch::write_package(built.package, args.output);
  progress.finish();

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& p : built.report.phases) {
    spdlog::info("phase {} {}: horizon {} (lower bound {}), largest row {} bytes, x{}", p.phase, p.label, p.horizon,
                 p.lower_bound, p.max_row_bytes, p.execution_count);
  }
  spdlog::info("lowering {:.2f} s, compiling {:.2f} s, merging {:.2f} s", built.lower_seconds, built.compile_seconds,
               built.merge_seconds);
  const replay::MergeSummary& s = built.summary;
  if (args.json) {
    nlohmann::ordered_json j;
    j["output"] = args.output;
    j["workload"] = workload.name;
    j["machine"] = machine.name;
    j["config"] = options.config.name;
    if (!args.costs.empty()) j["costs"] = args.costs;
    j["phases"] = s.phases;
    j["tiles"] = s.tiles;
    j["rows"] = s.rows;
    j["barrier_only_steps"] = s.no_row_steps;
    j["table_bytes"] = s.table_bytes;
    j["segment_bytes"] = s.segment_bytes;
    print_json(j);
    return kExitOk;
  }
  std::printf(
      "%s: %s on %s, %s: %u phases, %u tiles, %llu rows (%llu barrier-only steps), "
      "table %u bytes, segments %llu bytes, %.1f s\n",
      args.output.c_str(), workload.name.c_str(), machine.name.c_str(), options.config.name.c_str(), s.phases, s.tiles,
      static_cast<unsigned long long>(s.rows), static_cast<unsigned long long>(s.no_row_steps), s.table_bytes,
      static_cast<unsigned long long>(s.segment_bytes), seconds);
  return kExitOk;
}

std::function<int()> setup(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("build",
                         "Build one package that runs a whole ViT encoder workload (configs/workloads/*.yaml):\n"
                         "lower it (as `lockstep lower`: the capture of every exchange phase and the program\n"
                         "with weights, kernel steps, one row-less exchange step per phase and tile, the\n"
                         "layers as one Repeat), compile every phase of the capture with the exchange\n"
                         "compiler (--config, default the production policy B1024, rows shared across\n"
                         "phases; no payload proof: the program's own data flows through the exchanges) and\n"
                         "merge the compiled exchange into the program: every exchange step gets its tile's\n"
                         "row and CSR values, the shared-row setup patch and Repeat patch list go right before\n"
                         "it (inside the layer Repeat, one value per layer), and each tile's rows become a\n"
                         "segment in the program's table region [0x4c000, 0x5c000). Tiles without a row in a\n"
                         "phase still take part in its barrier.\n"
                         "The package is validated (every step, kernel operands and scalars included) and\n"
                         "written to -o (temporary name, then rename; .yaml/.yml writes YAML, anything else Cap'n\n"
                         "Proto; the OUT.tmp-XXXXXX files a killed build left beside it are removed first).\n"
                         "Prints one summary line: phases, tiles, rows, the largest table and all segment bytes;\n"
                         "--log-level info adds each phase's horizon. Run it with `lockstep run PACKAGE`; the\n"
                         "package records the workload's text, so `run --reference` can hold its output against\n"
                         "the FP32 reference.\n"
                         "Runs on --jobs threads (default: every core; the same package at any count);\n"
                         "--json prints the summary as one JSON object (without the time).\n"
                         "Exit 0 ok, 2 bad input (unknown workload or machine, a workload that does not fit,\n"
                         "a table that does not fit its region, an output that cannot be written or is an\n"
                         "input; nothing is written), 3 internal.");
  auto args = std::make_shared<BuildArgs>();
  cmd->add_option("WORKLOAD", args->workload,
                  "workload file or embedded name, e.g. vit-tiny or configs/workloads/vit-tiny.yaml")
      ->required();
  cmd->add_option("-o,--output", args->output, "package to write, e.g. model.lkspkg")->required();
  cmd->add_option("--config", args->config,
                  "exchange scheduling configuration: default B1024 (as `compile\n"
                  "--exchange-stream-words 1024`); latency, automatic, S<W>, B<W>, +paired, ...");
  cmd->add_option("--machine", args->machine, "override the workload's machine (name or YAML file)");
  cmd->add_option("--weights", args->weights,
                  "FILE.safetensors: real weights by their SigLIP tensor names (float32 or float16,\n"
                  "[in, out]; docs/reference.md); default: seeded weights (--weight-seed)");
  cmd->add_option("--costs", args->costs,
                  "kernel cost parameters from `lockstep calibrate` (docs/calibration.md): the lowering\n"
                  "ranks its GEMM splits and attention key blocks by the fitted cycles (pass the same\n"
                  "file to `run --costs` to be charged them); default: the built-in cost models");
  add_seed_option(*cmd, "--weight-seed", args->weight_seed, "seed of the generated weights (default 1)");
  add_seed_option(*cmd, "--input-seed", args->input_seed,
                  "seed of the default input image loaded into the `patches` binding (default 1);\n"
                  "`run --input image.npy` replaces it");
  add_jobs_option(*cmd, args->jobs, "threads to build on (default, or 0: every core; same package at any count)");
  cmd->add_flag("--json", args->json, "print the summary as one JSON object");
  cmd->add_flag("--allow-non-finite", args->allow_non_finite,
                "keep NaN and infinite values in --weights (refused by default, naming the tensor and\n"
                "element: one poisons every output)");
  add_common_options(*cmd);
  return [args]() { return build(*args); };
}

const CommandRegistration registration{"build", setup};

}  // namespace build_command_local
}  // namespace lockstep::cli
