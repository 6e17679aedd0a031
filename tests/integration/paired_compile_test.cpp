// Paired64 end to end: every synthetic family compiled under paired configurations on the
// 64-tile machine (fixed seeds), packaged with its payload proof and run in the simulator:
// no hazard, every destination word of every iteration as expected. The multicast family
// keeps some partners quiet, so it must really send paired items.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "compiler/compile.hpp"
#include "formats/package.hpp"
#include "support/package_run.hpp"
#include "workload/synth.hpp"

namespace lockstep::compiler {
using namespace workload;  // the synthetic captures and lowered workloads compiled here
namespace {

const std::vector<std::string> kConfigs = {"latency+paired", "S256+paired", "B1024+paired"};

using Case = std::tuple<std::string, size_t>;  // family, configuration index

class PairedCompile : public ::testing::TestWithParam<Case> {};

TEST_P(PairedCompile, PackageRunsAndProvesEveryDestinationWord) {
  const auto& [family_name, config_index] = GetParam();
  const arch::MachineDescription machine = arch::load_machine("ipu21-c600-t64");
  SynthOptions synth;
  synth.family = parse_synth_family(family_name);
  synth.tiles = 64;
  synth.seed = 2000 + config_index;
  synth.phases = synth.family == SynthFamily::Transformer ? 6 : 2;
  const arch::Capture capture = synthesize_capture(synth, machine);

  CompileOptions options;
  options.config = parse_config(kConfigs[config_index]);
  options.token_seed = 5 + config_index;
  const CompileResult result = compile_capture(capture, machine, options);
  arch::validate_package(result.package, machine, "synth");
  ASSERT_EQ(result.report.phases.size(), capture.phases.size());
  size_t paired_phases = 0;
  for (const auto& phase : result.report.phases) {
    EXPECT_GE(phase.horizon, phase.lower_bound);
    if (phase.width == Width::Paired64) ++paired_phases;
  }
  if (synth.family == SynthFamily::Multicast) {
    EXPECT_EQ(paired_phases, capture.phases.size()) << "multicast phases must send paired items";
  }

  testing::expect_package_proves_payload(result.package, machine);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string config = kConfigs[std::get<1>(info.param)];
  for (char& c : config) {
    if (c == '-' || c == '+') c = '_';
  }
  return std::get<0>(info.param) + "_" + config;
}

INSTANTIATE_TEST_SUITE_P(AllFamiliesPairedConfigs, PairedCompile,
                         ::testing::Combine(::testing::Values("permutation", "uniform", "skewed", "multicast",
                                                              "transformer"),
                                            ::testing::Range(size_t{0}, kConfigs.size())),
                         case_name);

}  // namespace
}  // namespace lockstep::compiler
