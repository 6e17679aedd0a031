// compile_capture as a whole: phase selection, determinism whatever the thread count,
// sharing on and off, and a proof that covers every destination byte.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <map>

#include "compiler/compile.hpp"
#include "compiler/proof_plan.hpp"
#include "formats/package.hpp"
#include "io/errors.hpp"
#include "sim/backend.hpp"
#include "workload/synth.hpp"

namespace lockstep::compiler {
using namespace workload;  // the synthetic captures and lowered workloads compiled here
namespace {

// Hazards and expectation failures of a run, one line each (first few), for test output.
std::string describe(const sim::RunResult& run) {
  std::string text;
  for (size_t i = 0; i < run.hazards.size() && i < 3; ++i) {
    text += "hazard " + sim::hazard_name(run.hazards[i].kind) + " tile " + std::to_string(run.hazards[i].tile) +
            " phase " + std::to_string(run.hazards[i].phase) + ": " + run.hazards[i].detail + "\n";
  }
  for (size_t i = 0; i < run.expectation_failures.size() && i < 3; ++i) {
    text += "expectation tile " + std::to_string(run.expectation_failures[i].tile) + " address " +
            std::to_string(run.expectation_failures[i].address) + "\n";
  }
  return text;
}

class CompileCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    SynthOptions synth;
    synth.family = SynthFamily::Transformer;
    synth.tiles = 16;
    synth.seed = 11;
    synth.phases = 8;
    capture = synthesize_capture(synth, machine);
    options.config = parse_config("B1024");
  }
  // The full chip: tiles 0..15 of it take part.
  arch::MachineDescription machine = arch::load_machine("ipu21-c600");
  arch::Capture capture;
  CompileOptions options;
};

TEST_F(CompileCapture, SelectedPhasesRunInCaptureOrder) {
  options.phases = std::vector<uint32_t>{capture.phases[3].id, capture.phases[1].id};
  const CompileResult result = compile_capture(capture, machine, options);
  ASSERT_EQ(result.package.phases.size(), 2u);
  EXPECT_EQ(result.package.phases[0].id, capture.phases[1].id);
  EXPECT_EQ(result.package.phases[1].id, capture.phases[3].id);
  EXPECT_EQ(result.report.phases[1].label, capture.phases[3].label);
  const sim::RunResult run = sim::make_systemc_backend(machine)->run(result.package, {});
  EXPECT_TRUE(run.ok()) << describe(run);
}

TEST_F(CompileCapture, UnknownPhaseIsBadInput) {
  options.phases = std::vector<uint32_t>{123456};
  EXPECT_THROW(compile_capture(capture, machine, options), InputError);
}

TEST_F(CompileCapture, CaptureForAnotherMachineIsBadInput) {
  capture.machine_name = "ipu21-c600-t16";
  EXPECT_THROW(compile_capture(capture, machine, options), InputError);
}

TEST_F(CompileCapture, SameBytesWhateverTheThreadCount) {
  std::string one_thread;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    one_thread = arch::package_to_yaml(compile_capture(capture, machine, options).package);
  }
  const std::string many = arch::package_to_yaml(compile_capture(capture, machine, options).package);
  EXPECT_EQ(one_thread, many);
}

TEST_F(CompileCapture, SharingShrinksTheTableAndBothPackagesRun) {
  const CompileResult shared = compile_capture(capture, machine, options);
  options.share_rows = false;
  const CompileResult unshared = compile_capture(capture, machine, options);
  EXPECT_EQ(shared.report.table_bytes_shared, unshared.report.table_bytes_shared);
  EXPECT_EQ(shared.report.table_bytes_unshared, unshared.report.table_bytes_unshared);
  EXPECT_LE(shared.report.table_bytes_shared, shared.report.table_bytes_unshared);
  // Each tile's table region holds its own rows; the report's figure is the largest.
  const auto largest_table = [](const arch::Package& package) {
    uint32_t largest = 0;
    for (const auto& program : package.tiles) largest = std::max(largest, program.table.size);
    return largest;
  };
  EXPECT_EQ(largest_table(shared.package), (shared.report.table_bytes_shared + 7) / 8 * 8);
  EXPECT_EQ(largest_table(unshared.package), (unshared.report.table_bytes_unshared + 7) / 8 * 8);
  for (const auto* result : {&shared, &unshared}) {
    const sim::RunResult run = sim::make_systemc_backend(machine)->run(result->package, {});
    EXPECT_TRUE(run.ok()) << describe(run);
  }
}

TEST_F(CompileCapture, ExpectationsCoverEveryDestinationByte) {
  const CompileResult result = compile_capture(capture, machine, options);
  std::map<uint32_t, std::vector<Span>> expected, written;
  for (const auto& e : result.package.expectations) expected[e.tile].push_back(Span{e.address, e.size});
  for (const auto& phase : capture.phases) {
    for (const auto& transfer : phase.transfers) {
      for (const auto& d : transfer.destinations) written[d.tile].push_back(Span{d.address, transfer.words * 4});
    }
  }
  for (auto& [tile, ranges] : written) {
    const std::vector<Span> covered = merge_spans(expected[tile]);
    for (const Span& range : merge_spans(ranges)) {
      const bool inside = std::any_of(covered.begin(), covered.end(), [&](const Span& c) {
        return c.address <= range.address && range.address + range.bytes <= c.address + c.bytes;
      });
      EXPECT_TRUE(inside) << "tile " << tile << " 0x" << std::hex << range.address;
    }
  }
}

TEST_F(CompileCapture, IteratedPhasesReportTheirPatchLists) {
  const CompileResult result = compile_capture(capture, machine, options);
  bool any_iterated = false;
  for (size_t i = 0; i < capture.phases.size(); ++i) {
    const auto& report = result.report.phases[i];
    EXPECT_LE(report.max_patch_words_per_tile, report.patch_words);
    if (capture.phases[i].iterations > 1) {
      any_iterated = true;
    } else {
      EXPECT_EQ(report.patch_words, 0u) << "phase " << report.phase;
    }
  }
  EXPECT_TRUE(any_iterated);
}

TEST_F(CompileCapture, WithoutProofThereAreNoExpectationsOrKernels) {
  options.with_proof = false;
  const CompileResult result = compile_capture(capture, machine, options);
  EXPECT_TRUE(result.package.expectations.empty());
}

}  // namespace
}  // namespace lockstep::compiler
