// `lockstep build`: the lowering's program with the compiled exchange merged in, on the
// shipped small workload (vit-tiny, 2 layers, ipu21-c600-t64). The package validates,
// every exchange step of a tile that sends or receives in its phase has a row, and once
// every kernel of the lowering exists the whole model runs without a hazard, with the same
// output bytes twice.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "arch/machine.hpp"
#include "compiler/compile.hpp"
#include "formats/capture.hpp"
#include "formats/package.hpp"
#include "io/errors.hpp"
#include "model/kernel_registry.hpp"
#include "replay/model_package.hpp"
#include "sim/backend.hpp"
#include "support/test_support.hpp"
#include "workload/lower.hpp"
#include "workload/workload.hpp"

namespace lockstep::testing {
namespace {

const char* const kWorkload = "configs/workloads/vit-tiny.yaml";

// The tiny model's package, built once by the command for the whole suite.
const std::string& built_package() {
  static const std::string path = [] {
    const std::string dir = temp_dir("build_command");
    const std::string package = dir + "/tiny.lkspkg";
    const auto r = run_lockstep({"build", source_path(kWorkload), "-o", package});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return package;
  }();
  return path;
}

const workload::Lowered& lowered() {
  static const workload::Lowered value = [] {
    const workload::Workload w = workload::load_workload(source_path(kWorkload));
    return workload::lower_workload(w, arch::load_machine(w.machine));
  }();
  return value;
}

struct ExchangeUse {
  const arch::ExchangeStep* step = nullptr;
  uint32_t repeat_count = 1;
  std::vector<const arch::PatchStep*> patches;  // right before the exchange
};

void collect(const std::vector<arch::Step>& steps, uint32_t repeat_count,
             std::map<uint32_t, std::vector<ExchangeUse>>& out) {
  std::vector<const arch::PatchStep*> pending;
  for (const arch::Step& step : steps) {
    if (const auto* patch = std::get_if<arch::PatchStep>(&step.kind)) {
      pending.push_back(patch);
    } else if (const auto* exchange = std::get_if<arch::ExchangeStep>(&step.kind)) {
      out[exchange->phase].push_back(ExchangeUse{exchange, repeat_count, pending});
      pending.clear();
    } else if (const auto* repeat = std::get_if<arch::RepeatStep>(&step.kind)) {
      collect(repeat->body, repeat->count, out);
    }
    ASSERT_TRUE(pending.empty() || std::holds_alternative<arch::PatchStep>(step.kind))
        << "a patch step is not followed by an exchange step";
  }
}

std::vector<std::string> missing_kernels() {
  std::vector<std::string> missing;
  for (const char* name :
       {"gemm_fp8", "gemm_fp16", "reduce_sum", "softmax", "layernorm", "gelu", "add", "cast", "copy"}) {
    if (model::find_kernel(name) == nullptr) missing.push_back(name);
  }
  return missing;
}

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

TEST(BuildCommand, BuildsVitTinyAndValidates) {
  const std::string dir = temp_dir("build_summary");
  const std::string package_path = dir + "/tiny.lkspkg";
  const auto r = run_lockstep({"build", source_path(kWorkload), "-o", package_path});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // One summary line.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find("18 phases, 64 tiles"), std::string::npos) << r.out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename(), "tiny.lkspkg") << "left behind: " << entry.path();
  }

  const arch::Package package = arch::read_package(package_path);
  const arch::MachineDescription machine = arch::load_machine(package.machine_name);
  EXPECT_EQ(package.machine_name, "ipu21-c600-t64");
  EXPECT_NO_THROW(arch::validate_package(package, machine, package_path));
  EXPECT_TRUE(package.expectations.empty()) << "no payload proof: the program's data flows";
  EXPECT_EQ(package.phases, lowered().program.phases);
  EXPECT_EQ(package.bindings, lowered().program.bindings);
}

TEST(BuildCommand, EveryExchangeStepGetsItsRowOrStaysBarrierOnly) {
  const arch::Package package = arch::read_package(built_package());
  const arch::Capture& capture = lowered().capture;
  const uint32_t layers = 2;
  // Tiles that send or receive in each phase.
  std::map<uint32_t, std::set<uint32_t>> active;
  std::map<uint32_t, uint32_t> iterations;
  for (const arch::CapturePhase& phase : capture.phases) {
    iterations[phase.id] = phase.iterations;
    for (const arch::Transfer& t : phase.transfers) {
      active[phase.id].insert(t.source_tile);
      for (const arch::Destination& d : t.destinations) active[phase.id].insert(d.tile);
    }
  }
  ASSERT_EQ(package.tiles.size(), 64u);
  size_t rows = 0, barrier_only = 0;
  for (const arch::TileProgram& tile : package.tiles) {
    std::map<uint32_t, std::vector<ExchangeUse>> uses;
    collect(tile.steps, 1, uses);
    ASSERT_EQ(uses.size(), capture.phases.size()) << "tile " << tile.tile;
    for (const auto& [phase, list] : uses) {
      ASSERT_EQ(list.size(), 1u) << "tile " << tile.tile << " phase " << phase;
      const ExchangeUse& use = list.front();
      EXPECT_EQ(use.repeat_count, iterations[phase]) << "tile " << tile.tile << " phase " << phase;
      if (active[phase].count(tile.tile)) {
        ASSERT_TRUE(use.step->row_address.has_value()) << "tile " << tile.tile << " phase " << phase;
        const uint32_t row = *use.step->row_address;
        EXPECT_GE(row, arch::kTableReservedBegin);
        EXPECT_LT(row, arch::kTableReservedEnd);
        bool in_segment = false;
        for (const arch::Segment& s : tile.segments) {
          in_segment =
              in_segment || (row >= s.address && row + 4 <= s.address + s.size && s.fill == arch::FillKind::Bytes);
        }
        EXPECT_TRUE(in_segment) << "tile " << tile.tile << " phase " << phase << ": row outside its table segment";
        ++rows;
      } else {
        EXPECT_FALSE(use.step->row_address.has_value())
            << "tile " << tile.tile << " phase " << phase << ": a row on a tile without a transfer";
        EXPECT_TRUE(use.patches.empty());
        ++barrier_only;
      }
      for (const arch::PatchStep* patch : use.patches) {
        for (const arch::PatchEntry& entry : patch->entries) {
          EXPECT_TRUE(entry.values.size() == 1 || entry.values.size() == use.repeat_count);
          EXPECT_GE(entry.word_address, arch::kTableReservedBegin);
          EXPECT_LT(entry.word_address, arch::kTableReservedEnd);
        }
      }
    }
    // The program's own parts are untouched: the layer Repeat with its pointers.
    const arch::RepeatStep* repeat = nullptr;
    for (const arch::Step& s : tile.steps) {
      if (const auto* r = std::get_if<arch::RepeatStep>(&s.kind)) repeat = r;
    }
    const arch::RepeatStep* program_repeat = nullptr;
    for (const arch::Step& s : lowered().program.tiles[tile.tile].steps) {
      if (const auto* r = std::get_if<arch::RepeatStep>(&s.kind)) program_repeat = r;
    }
    ASSERT_NE(repeat, nullptr);
    ASSERT_NE(program_repeat, nullptr);
    EXPECT_EQ(repeat->count, layers);
    EXPECT_EQ(repeat->pointers, program_repeat->pointers);
  }
  // On 64 tiles every tile owns token rows and holds GEMM blocks, so every tile takes part in
  // every phase; a tile without a transfer in a phase would keep a barrier-only step.
  EXPECT_GT(rows, 0u);
  EXPECT_EQ(rows + barrier_only, package.tiles.size() * capture.phases.size());
}

// The merge maps per-iteration patch values onto the program's layer Repeat: a capture
// whose layer transfer reads a different address in each layer gives a Repeat patch list,
// which must land right before that exchange inside the program's Repeat.
TEST(BuildCommand, RepeatPatchListsLandInsideTheLayerRepeat) {
  const workload::Workload w = workload::load_workload(source_path(kWorkload));
  const arch::MachineDescription machine = arch::load_machine(w.machine);
  workload::Lowered l = workload::lower_workload(w, machine);
  // The first layer phase: its first transfer reads one word further on in layer 1.
  arch::CapturePhase* phase = nullptr;
  for (auto& p : l.capture.phases) {
    if (p.iterations > 1 && !p.transfers.empty()) {
      phase = &p;
      break;
    }
  }
  ASSERT_NE(phase, nullptr);
  arch::Transfer& t = phase->transfers.front();
  ASSERT_GT(t.words, 1u);
  t.words -= 1;
  t.source_addresses[1] += 4;
  compiler::CompileOptions options;
  options.config = compiler::parse_config("B1024");
  options.with_proof = false;
  const compiler::CompileResult compiled = compiler::compile_capture(l.capture, machine, options);
  replay::MergeSummary summary;
  const arch::Package merged = replay::merge_exchange(l.program, l.capture, compiled.package, machine, &summary);
  EXPECT_GE(summary.repeat_patch_steps, 1u);
  const arch::TileProgram& tile = merged.tiles[t.source_tile];
  std::map<uint32_t, std::vector<ExchangeUse>> uses;
  collect(tile.steps, 1, uses);
  const ExchangeUse& use = uses.at(phase->id).front();
  ASSERT_TRUE(use.step->row_address.has_value());
  EXPECT_EQ(use.repeat_count, 2u);
  bool per_layer = false;
  for (const arch::PatchStep* patch : use.patches) {
    if (patch->method == arch::PatchMethod::Setup) continue;
    for (const arch::PatchEntry& entry : patch->entries) per_layer = per_layer || entry.values.size() == 2;
  }
  EXPECT_TRUE(per_layer) << "no per-layer patch values before phase " << phase->id << " on tile " << t.source_tile;
  EXPECT_NO_THROW(arch::validate_package(merged, machine, "merged"));

  // Run it: in layer l the destination receives from source_addresses[l].
  const std::vector<std::string> missing = missing_kernels();
  if (!missing.empty()) GTEST_SKIP() << "kernels not in the model yet: " << join(missing);
  sim::RunOptions run_options;
  run_options.record_tiles = true;
  const sim::RunResult run = sim::make_systemc_backend(machine)->run(merged, run_options);
  EXPECT_TRUE(run.hazards.empty()) << (run.hazards.empty() ? "" : sim::describe(run.hazards.front()));
  const uint32_t receiver = t.destinations.front().tile;
  uint32_t checked = 0;
  for (const sim::PhaseExecution& e : run.executions) {
    if (e.phase != phase->id) continue;
    for (const auto& record : e.tiles) {
      if (record.tile != receiver) continue;
      bool found = false;
      for (const auto& received : record.received) {
        if (received.sender != t.source_tile || received.address != t.destinations.front().address) continue;
        found = true;
        EXPECT_EQ(received.source_address, t.source_addresses[e.iteration]) << "layer " << e.iteration;
        EXPECT_EQ(received.bytes, t.words * 4) << "layer " << e.iteration;
      }
      EXPECT_TRUE(found) << "layer " << e.iteration << ": tile " << receiver << " received nothing from tile "
                         << t.source_tile << " at " << t.destinations.front().address;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2u);
}

// Every word of every transfer of every phase execution lands where the capture says,
// from the source address of that layer: rows, CSR values, setup patches where rows are
// shared, and Repeat patches all took effect in the merged program. (Until the lowering's
// FP16 partials, vit-tiny on 16 tiles shared rows between phases and this test also
// asserted setup patches there; its rows now fit unshared, so no setup patch runs.)
class BuildOnMachine : public ::testing::TestWithParam<std::string> {};

TEST_P(BuildOnMachine, EveryTransferArrivesAsTheCaptureSays) {
  const std::vector<std::string> missing = missing_kernels();
  if (!missing.empty()) GTEST_SKIP() << "kernels not in the model yet: " << join(missing);
  const workload::Workload w = workload::load_workload(source_path(kWorkload));
  const arch::MachineDescription machine = arch::load_machine(GetParam());
  const replay::ModelPackage built = replay::build_model_package(w, machine, replay::ModelPackageOptions{});
  const workload::Lowered l = workload::lower_workload(w, machine);
  sim::RunOptions run_options;
  run_options.record_tiles = true;
  const sim::RunResult run = sim::make_systemc_backend(machine)->run(built.package, run_options);
  ASSERT_TRUE(run.hazards.empty()) << sim::describe(run.hazards.front());
  std::map<uint32_t, const arch::CapturePhase*> phases;
  for (const auto& p : l.capture.phases) phases[p.id] = &p;
  size_t executions = 0, checked = 0;
  for (const sim::PhaseExecution& e : run.executions) {
    ++executions;
    const arch::CapturePhase& phase = *phases.at(e.phase);
    std::map<uint32_t, const sim::TileExecution*> records;
    for (const auto& record : e.tiles) records[record.tile] = &record;
    for (const arch::Transfer& t : phase.transfers) {
      const uint32_t source = t.source_addresses[e.iteration];
      for (const arch::Destination& d : t.destinations) {
        ASSERT_TRUE(records.count(d.tile)) << "phase " << e.phase << ": no record of tile " << d.tile;
        uint64_t covered = 0;
        for (const auto& r : records[d.tile]->received) {
          if (r.sender != t.source_tile) continue;
          const uint64_t begin = std::max<uint64_t>(r.address, d.address);
          const uint64_t end = std::min<uint64_t>(uint64_t{r.address} + r.bytes, uint64_t{d.address} + t.words * 4);
          if (begin >= end) continue;
          EXPECT_EQ(int64_t{r.source_address} - r.address, int64_t{source} - d.address)
              << "phase " << e.phase << " iteration " << e.iteration << ": tile " << d.tile << " from tile "
              << t.source_tile;
          covered += end - begin;
        }
        EXPECT_EQ(covered, uint64_t{t.words} * 4) << "phase " << e.phase << " iteration " << e.iteration << ": tile "
                                                  << d.tile << " from tile " << t.source_tile;
        ++checked;
      }
    }
  }
  EXPECT_EQ(executions, 3u + 15u * 2u);
  EXPECT_GT(checked, 0u);
}

INSTANTIATE_TEST_SUITE_P(Machines, BuildOnMachine, ::testing::Values("ipu21-c600-t64", "ipu21-c600-t16"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

// A tile the compiler gives rows but the program does not list runs the program's barrier
// structure (exchange steps and the layer Repeat, no kernels) with its rows.
TEST(BuildCommand, ATileMissingFromTheProgramGetsItsBarriersAndRows) {
  const workload::Workload w = workload::load_workload(source_path(kWorkload));
  const arch::MachineDescription machine = arch::load_machine(w.machine);
  workload::Lowered l = workload::lower_workload(w, machine);
  compiler::CompileOptions options;
  options.config = compiler::parse_config("B1024");
  options.with_proof = false;
  const compiler::CompileResult compiled = compiler::compile_capture(l.capture, machine, options);
  const uint32_t dropped = 5;
  // The phases in which the capture has the tile send or receive: those give it rows.
  std::set<uint32_t> active;
  for (uint32_t p = 0; p < l.capture.phases.size(); ++p) {
    for (const arch::Transfer& t : l.capture.phases[p].transfers) {
      if (t.source_tile == dropped || std::any_of(t.destinations.begin(), t.destinations.end(),
                                                  [&](const arch::Destination& d) { return d.tile == dropped; })) {
        active.insert(l.capture.phases[p].id);
      }
    }
  }
  ASSERT_GT(active.size(), l.capture.phases.size() / 2);
  l.program.tiles.erase(l.program.tiles.begin() + dropped);
  replay::MergeSummary summary;
  const arch::Package merged = replay::merge_exchange(l.program, l.capture, compiled.package, machine, &summary);
  EXPECT_EQ(summary.tiles_added, 1u);
  ASSERT_EQ(merged.tiles.size(), 64u);
  const arch::TileProgram& tile = merged.tiles[dropped];
  ASSERT_EQ(tile.tile, dropped);
  std::map<uint32_t, std::vector<ExchangeUse>> uses;
  collect(tile.steps, 1, uses);
  EXPECT_EQ(uses.size(), l.capture.phases.size());
  for (const auto& [phase, list] : uses) {
    EXPECT_EQ(list.front().step->row_address.has_value(), active.count(phase) == 1) << "phase " << phase;
  }
  for (const arch::Step& step : tile.steps) {
    EXPECT_FALSE(std::holds_alternative<arch::KernelStep>(step.kind));
  }
  EXPECT_NO_THROW(arch::validate_package(merged, machine, "merged"));
}

TEST(BuildCommand, RefusesATableThatDoesNotFitTheProgramsRegion) {
  const workload::Workload w = workload::load_workload(source_path(kWorkload));
  const arch::MachineDescription machine = arch::load_machine(w.machine);
  workload::Lowered l = workload::lower_workload(w, machine);
  compiler::CompileOptions options;
  options.config = compiler::parse_config("B1024");
  options.with_proof = false;
  const compiler::CompileResult compiled = compiler::compile_capture(l.capture, machine, options);
  for (auto& tile : l.program.tiles) tile.table.size = 64;
  try {
    replay::merge_exchange(l.program, l.capture, compiled.package, machine);
    FAIL() << "a table larger than its region was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bytes missing"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("table region"), std::string::npos) << e.what();
  }
}

TEST(BuildCommand, TheWholeModelRunsWithoutHazardsAndDeterministically) {
  const std::vector<std::string> missing = missing_kernels();
  if (!missing.empty()) GTEST_SKIP() << "kernels not in the model yet: " << join(missing);
  const std::string& package = built_package();
  const std::string dir = temp_dir("build_run");
  std::vector<std::string> outputs;
  for (int run = 0; run < 2; ++run) {
    const std::string out = dir + "/out" + std::to_string(run);
    std::filesystem::create_directories(out);
    const auto r = run_lockstep({"run", package, "--json", "--output-dir", out});
    ASSERT_EQ(r.exit_code, 0) << r.out.substr(0, 4000) << r.err;
    const nlohmann::json result = nlohmann::json::parse(r.out);
    EXPECT_TRUE(result["hazards"].empty()) << result["hazards"].dump();
    EXPECT_TRUE(result["ok"].get<bool>());
    EXPECT_GT(result["total_cycles"].get<uint64_t>(), 0u);
    // 3 embedding phases once, 15 layer phases once per layer.
    EXPECT_EQ(result["executions"].size(), 3u + 15u * 2u);
    outputs.push_back(read_file(out + "/output.bin"));
  }
  // 64 tokens x 256 hidden, FP32.
  EXPECT_EQ(outputs[0].size(), 64u * 256u * 4u);
  EXPECT_EQ(outputs[0], outputs[1]) << "two runs of one package wrote different output bytes";
}

TEST(BuildCommand, BadInputIsOneLineExitTwoAndWritesNothing) {
  const std::string dir = temp_dir("build_bad");
  const std::string workload = source_path(kWorkload);
  const std::string copy = dir + "/tiny.yaml";
  std::filesystem::copy_file(workload, copy);
  const std::string original = read_file(copy);
  std::filesystem::create_directories(dir + "/a_directory");
  // Two tiles cannot hold vit-tiny's weights.
  const std::string two_tiles = dir + "/two-tiles.yaml";
  write_file(two_tiles, "base: ipu21-c600\nname: ipu21-c600-t2\ntiles: 2\n");
  struct Case {
    std::vector<std::string> args;
    std::string says;
    std::string written;  // a path that must not exist afterwards ("" = none)
  };
  const std::vector<Case> cases = {
      {{"build", dir + "/no-such-workload.yaml", "-o", dir + "/x.lkspkg"}, "no-such-workload", dir + "/x.lkspkg"},
      {{"build", workload, "--machine", "no-such-machine", "-o", dir + "/m.lkspkg"},
       "no-such-machine",
       dir + "/m.lkspkg"},
      {{"build", workload, "--config", "Q7", "-o", dir + "/c.lkspkg"}, "Q7", dir + "/c.lkspkg"},
      {{"build", workload, "-o", dir + "/missing/dir/p.lkspkg"}, "does not exist", dir + "/missing"},
      {{"build", workload, "-o", dir + "/a_directory"}, "is a directory", ""},
      {{"build", copy, "-o", copy}, "is the input", ""},
      {{"build", workload, "--machine", two_tiles, "-o", dir + "/t2.lkspkg"}, "bytes missing", dir + "/t2.lkspkg"},
      {{"build", workload, "--machine", two_tiles, "-o", two_tiles}, "is the input", ""},
  };
  for (const Case& c : cases) {
    const auto r = run_lockstep(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[1] << " " << c.args.back() << ": " << r.out << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    if (!c.written.empty()) {
      EXPECT_FALSE(std::filesystem::exists(c.written)) << c.written;
    }
  }
  EXPECT_EQ(read_file(copy), original) << "the input was overwritten";
  EXPECT_NE(read_file(two_tiles).find("tiles: 2"), std::string::npos) << "the machine file was overwritten";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == "tiny.yaml" || name == "a_directory" || name == "two-tiles.yaml") << "left behind: " << name;
  }
}

}  // namespace
}  // namespace lockstep::testing
