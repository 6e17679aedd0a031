// Randomised end-to-end compiles: every synthetic family under every configuration of the
// frontier sweep, small tile counts, fixed seeds. Each package must validate and run in the
// simulator with no hazard and every destination word proven after every iteration.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "arch/package.hpp"
#include "compiler/compile.hpp"
#include "compiler/synth.hpp"
#include "sim/backend.hpp"

namespace lockstep::compiler {
namespace {

const std::vector<std::string> kConfigs = {"latency", "automatic", "remaining-combined", "S16",  "S32",
                                           "S64",     "S128",      "S256",               "S512", "S1024",
                                           "S2048",   "S4096",     "B64",                "B128", "B256",
                                           "B512",    "B1024",     "B2048",              "B4096"};

using Case = std::tuple<std::string, size_t>;  // family, configuration index

class CompileSynth : public ::testing::TestWithParam<Case> {};

TEST_P(CompileSynth, PackageRunsAndProvesEveryDestinationWord) {
  const auto& [family_name, config_index] = GetParam();
  const arch::MachineDescription machine = arch::load_machine("ipu21-c600");
  SynthOptions synth;
  synth.family = parse_synth_family(family_name);
  synth.tiles = std::vector<uint32_t>{16, 32, 64}[config_index % 3];
  synth.seed = 1000 + config_index;
  synth.phases = synth.family == SynthFamily::Transformer ? 6 : 2;
  const arch::Capture capture = synthesize_capture(synth, machine);

  CompileOptions options;
  options.config = parse_config(kConfigs[config_index]);
  options.token_seed = 3 + config_index;
  const CompileResult result = compile_capture(capture, machine, options);
  arch::validate_package(result.package, machine, "synth");
  ASSERT_EQ(result.report.phases.size(), capture.phases.size());
  for (const auto& phase : result.report.phases) EXPECT_GE(phase.horizon, phase.lower_bound);

  // keep_going: a hazard must not hide whether the payload arrived, so both are reported.
  sim::RunOptions run_options;
  run_options.keep_going = true;
  const sim::RunResult run = sim::make_systemc_backend(machine)->run(result.package, run_options);
  EXPECT_TRUE(run.expectation_failures.empty()) << run.expectation_failures.size() << " expectations failed";
  for (const auto& hazard : run.hazards) {
    ADD_FAILURE() << sim::hazard_name(hazard.kind) << " tile " << hazard.tile << " phase " << hazard.phase << ": "
                  << hazard.detail;
    break;
  }
  size_t shown = 0;
  for (const auto& failure : run.expectation_failures) {
    if (shown++ == 3) break;
    ADD_FAILURE() << "tile " << failure.tile << " 0x" << std::hex << failure.address << ": expected "
                  << failure.expected << " found " << failure.found;
  }
  EXPECT_TRUE(run.ok());
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string config = kConfigs[std::get<1>(info.param)];
  for (char& c : config) {
    if (c == '-') c = '_';
  }
  return std::get<0>(info.param) + "_" + config;
}

INSTANTIATE_TEST_SUITE_P(AllFamiliesAllConfigs, CompileSynth,
                         ::testing::Combine(::testing::Values("permutation", "uniform", "skewed", "multicast",
                                                              "transformer"),
                                            ::testing::Range(size_t{0}, kConfigs.size())),
                         case_name);

}  // namespace
}  // namespace lockstep::compiler
