// Randomised end-to-end compiles: every synthetic family under every configuration of the
// frontier sweep, small tile counts, fixed seeds. Each package must validate and run in the
// simulator with no hazard and every destination word proven after every iteration.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "formats/package.hpp"
#include "compiler/compile.hpp"
#include "workload/synth.hpp"
#include "support/package_run.hpp"

namespace lockstep::compiler {
using namespace workload;  // the synthetic captures and lowered workloads compiled here
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

  testing::expect_package_proves_payload(result.package, machine);
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
