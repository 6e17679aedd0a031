// Randomised end-to-end compiles: every synthetic family under every configuration of the
// frontier sweep, small tile counts, fixed seeds. Each package must validate and run in the
// simulator with no hazard and every destination word proven after every iteration.
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

const std::vector<std::string> kConfigs = {"latency", "automatic", "remaining-combined",
                                           "S16",     "S32",       "S64",
                                           "S128",    "S256",      "S512",
                                           "S1024",   "S2048",     "S4096",
                                           "B64",     "B128",      "B256",
                                           "B512",    "B1024",     "B2048",
                                           "B4096"};

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

// What `sweep` relies on to skip a paired point (replay::run_points): a phase without a
// pair-eligible transfer compiles under a Paired64 configuration to its Word32 twin's package
// and report figures, including phases whose transfers allow pairing but are not eligible
// (the multicast family's, which the splitter may cut into groups).
class PairedTwin : public ::testing::TestWithParam<size_t> {};

TEST_P(PairedTwin, PhaseWithoutEligibleTransferCompilesAsItsWord32Twin) {
  const size_t config_index = GetParam();
  const arch::MachineDescription machine = arch::load_machine("ipu21-c600");
  size_t same = 0, applies = 0;
  for (const char* family : {"multicast", "uniform", "transformer"}) {
    SynthOptions synth;
    synth.family = parse_synth_family(family);
    synth.tiles = 64;  // large enough that the splitter wins somewhere (it did in the old rule)
    synth.seed = 2000 + config_index;
    synth.phases = 8;
    const arch::Capture capture = synthesize_capture(synth, machine);
    for (const auto& phase : capture.phases) {
      if (paired_width_applies(phase, machine)) {
        ++applies;
        continue;
      }
      CompileOptions word32, paired;
      word32.config = parse_config(kConfigs[config_index]);
      paired.config = parse_config(kConfigs[config_index] + "+paired");
      word32.phases = paired.phases = std::vector<uint32_t>{phase.id};
      word32.token_seed = paired.token_seed = 5;
      const auto a = compile_capture(capture, machine, word32);
      const auto b = compile_capture(capture, machine, paired);
      EXPECT_TRUE(a.package == b.package) << family << " phase " << phase.id;
      ASSERT_EQ(a.report.phases.size(), 1u);
      ASSERT_EQ(b.report.phases.size(), 1u);
      const auto& x = a.report.phases[0];
      const auto& y = b.report.phases[0];
      EXPECT_EQ(x.width, y.width);
      EXPECT_EQ(x.horizon, y.horizon);
      EXPECT_EQ(x.lower_bound, y.lower_bound);
      EXPECT_EQ(x.max_row_bytes, y.max_row_bytes);
      EXPECT_EQ(x.total_row_bytes, y.total_row_bytes);
      EXPECT_EQ(x.patch_calls, y.patch_calls);
      EXPECT_EQ(x.patch_words, y.patch_words);
      EXPECT_EQ(a.report.table_bytes_shared, b.report.table_bytes_shared);
      EXPECT_EQ(a.report.table_bytes_unshared, b.report.table_bytes_unshared);
      ++same;
    }
  }
  EXPECT_GE(same, 1u);
  EXPECT_GE(applies, 1u);
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, PairedTwin, ::testing::Range(size_t{0}, kConfigs.size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           std::string config = kConfigs[info.param];
                           for (char& c : config) {
                             if (c == '-') c = '_';
                           }
                           return config;
                         });

}  // namespace
}  // namespace lockstep::compiler
