// `lockstep calibrate` end to end (issue 24 item 3): a run with deliberately perturbed kernel
// cost parameters (`run --costs`) writes a profile; calibrating from it recovers exactly the
// perturbed parameters, from Lockstep's compact layout and from the stack's inline layout
// alike; `run --costs` with the fitted file then gives the perturbed run's cycles.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

// One tile running every kernel with a cost model at shapes that determine every parameter.
const char* const kKernels[] = {
    "gelu, operands: [0x60000, 0x70000], scalars: [64]",
    "gelu, operands: [0x60000, 0x70000], scalars: [1000]",
    "add, operands: [0x60000, 0x70000, 0x80000], scalars: [16]",
    "add, operands: [0x60000, 0x70000, 0x80000], scalars: [1000]",
    "cast, operands: [0x60000, 0x70000], scalars: [64, 16, 32]",
    "cast, operands: [0x60000, 0x70000], scalars: [256, 16, 32]",
    "copy, operands: [0x60000, 0x70000], scalars: [64]",
    "copy, operands: [0x60000, 0x70000], scalars: [4096]",
    "reduce_sum, operands: [0x60000, 0x70000, 0x80000], scalars: [2, 4, 32, 16]",
    "reduce_sum, operands: [0x60000, 0x70000, 0x80000], scalars: [4, 8, 32, 16]",
    "reduce_sum, operands: [0x60000, 0x70000, 0x80000], scalars: [2, 8, 32, 16]",
    "gemm_fp8, operands: [0x60000, 0x70000, 0x80000], scalars: [4, 64, 32, 0, 16]",
    "gemm_fp8, operands: [0x60000, 0x70000, 0x80000], scalars: [8, 64, 32, 0, 16]",
    "gemm_fp8, operands: [0x60000, 0x70000, 0x80000], scalars: [4, 128, 64, 0, 16]",
    "gemm_fp8_interleaved, operands: [0x60000, 0x70000, 0x80000], scalars: [4, 64, 32, 0, 16]",
    "gemm_fp8_interleaved, operands: [0x60000, 0x70000, 0x80000], scalars: [8, 64, 32, 0, 16]",
    "gemm_fp8_interleaved, operands: [0x60000, 0x70000, 0x80000], scalars: [4, 128, 64, 0, 16]",
    "gemm_fp16, operands: [0x60000, 0x70000, 0x80000], scalars: [4, 32, 64, 0, 16]",
    "gemm_fp16, operands: [0x60000, 0x70000, 0x80000], scalars: [8, 32, 64, 0, 16]",
    "gemm_fp16, operands: [0x60000, 0x70000, 0x80000], scalars: [4, 64, 128, 0, 16]",
    "layernorm, operands: [0x60000, 0x70000], scalars: [1, 256]",
    "layernorm, operands: [0x60000, 0x70000], scalars: [3, 1152]",
    "softmax, operands: [0x60000, 0x70000], scalars: [4, 64, 64]",
    "softmax, operands: [0x60000, 0x70000], scalars: [1, 729, 72]",
    "attention_softmax, operands: [0x60000, 0x70000, 0x80000], scalars: [6, 64, 72]",
    "attention_softmax, operands: [0x60000, 0x70000, 0x80000], scalars: [12, 64, 72]",
    "attention_softmax, operands: [0x60000, 0x70000, 0x80000], scalars: [6, 16, 72]",
    "attention_merge, operands: [0x60000, 0x70000, 0x80000], scalars: [6, 8, 2]",
    "attention_merge, operands: [0x60000, 0x70000, 0x80000], scalars: [6, 16, 2]",
    "attention_merge, operands: [0x60000, 0x70000, 0x80000], scalars: [6, 8, 3]",
};

const char* const kPerturbed =
    "format: lockstep-costs\nversion: 1\nclock_hz: 1500000000\nkernels:\n"
    "  gelu: {per_value: 12, launch: 15}\n"
    "  add: {per_16_values: 2, launch: 20}\n"
    "  cast: {per_8_bytes: 3, launch: 7}\n"
    "  copy: {instructions_per_worker_word: 3, instructions_per_call: 5}\n"
    "  reduce_sum: {instructions_per_part: 5, instructions_per_chunk: 9, launch: 30}\n"
    "  gemm_fp8: {call: 300, row_blocks: 2, column_groups: 1}\n"
    "  gemm_fp16: {call: 250, row_blocks: 3, column_groups: 2}\n"
    "  gemm_fp8_interleaved: {call: 280, row_blocks: 2, column_groups: 3}\n"
    "  layernorm: {instructions_per_vector: 20, cycles_per_row: 500}\n"
    "  softmax: {instructions_per_vector: 12, cycles_per_row: 300}\n"
    "  attention_softmax: {instructions_per_pair: 14, instructions_per_row: 20, launch: 30}\n"
    "  attention_merge: {instructions_per_quad: 15, instructions_per_row: 16, launch: 25}\n";

std::string kernel_package() {
  std::string text =
      "version: 1\nmachine: {name: ipu21-c600-t16, digest: \"ec84217a6976797c\"}\nphases: []\ntiles:\n"
      "  - tile: 0\n    steps:\n";
  for (const char* k : kKernels) text += std::string("      - kernel: {name: ") + k + "}\n";
  return text;
}

TEST(CalibrateCommand, RecoversThePerturbedParametersOfARunFromEitherLayout) {
  const std::string dir = temp_dir("calibrate_command");
  write_file(dir + "/k.yaml", kernel_package());
  write_file(dir + "/perturbed.yaml", kPerturbed);
  auto r = run_lockstep(
      {"run", dir + "/k.yaml", "--costs", dir + "/perturbed.yaml", "--profile", dir + "/k.lsprof", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const uint64_t perturbed_cycles = nlohmann::json::parse(r.out)["total_cycles"].get<uint64_t>();
  ASSERT_EQ(run_lockstep({"profile", "export", dir + "/k.lsprof", "--stack", dir + "/k-stack.lsprof"}).exit_code, 0);

  for (const std::string layout : {"k.lsprof", "k-stack.lsprof"}) {
    r = run_lockstep({"calibrate", dir + "/" + layout, "-o", dir + "/fitted-" + layout + ".yaml", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["kernels"].size(), 12u) << r.out;
    EXPECT_EQ(j["without_call_cycles"], 0);
    for (const auto& k : j["kernels"]) {
      EXPECT_EQ(k["residual_after"]["max"], 0) << k.dump();
      EXPECT_GT(k["residual_before"]["max"].get<double>(), 0) << k.dump();
      for (const auto& [name, p] : k["parameters"].items())
        EXPECT_FALSE(p["held"].get<bool>()) << k["kernel"] << " " << name;
    }
    const std::string fitted = read_file(dir + "/fitted-" + layout + ".yaml");
    for (const char* line :
         {"  gelu:\n    per_value: 12\n    launch: 15\n",
          "  gemm_fp8:\n    call: 300\n    row_blocks: 2\n    column_groups: 1\n",
          "  gemm_fp16:\n    call: 250\n    row_blocks: 3\n    column_groups: 2\n",
          "  gemm_fp8_interleaved:\n    call: 280\n    row_blocks: 2\n    column_groups: 3\n",
          "  layernorm:\n    instructions_per_vector: 20\n    cycles_per_row: 500\n",
          "  copy:\n    instructions_per_worker_word: 3\n    instructions_per_call: 5\n",
          "  attention_merge:\n    instructions_per_quad: 15\n    instructions_per_row: 16\n    launch: 25\n"}) {
      EXPECT_NE(fitted.find(line), std::string::npos) << layout << ":\n" << fitted;
    }
  }
  // The fitted file runs the package as the perturbed one did.
  r = run_lockstep({"run", dir + "/k.yaml", "--costs", dir + "/fitted-k.lsprof.yaml", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["total_cycles"].get<uint64_t>(), perturbed_cycles);
  EXPECT_EQ(nlohmann::json::parse(r.out)["costs"], dir + "/fitted-k.lsprof.yaml");
}

// The loop a site runs: a device's result folder (here a simulation under perturbed costs
// stands in for the chip) is calibrated; simulating with the fitted costs, crosscheck's
// kernel rows go from their error under the built-in models to none.
TEST(CalibrateCommand, CrosscheckKernelErrorsBeforeAndAfterCalibration) {
  const std::string dir = temp_dir("calibrate_crosscheck");
  write_file(dir + "/k.yaml", kernel_package());
  write_file(dir + "/perturbed.yaml", kPerturbed);
  ASSERT_EQ(
      run_lockstep({"device", "simulate", dir + "/k.yaml", "-o", dir + "/device", "--costs", dir + "/perturbed.yaml"})
          .exit_code,
      0);
  ASSERT_EQ(run_lockstep({"device", "simulate", dir + "/k.yaml", "-o", dir + "/before"}).exit_code, 0);
  auto r = run_lockstep({"calibrate", dir + "/device", "-o", dir + "/fitted.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run_lockstep({"device", "simulate", dir + "/k.yaml", "-o", dir + "/after", "--costs", dir + "/fitted.yaml"})
                .exit_code,
            0);
  for (const std::string side : {"before", "after"}) {
    r = run_lockstep(
        {"crosscheck", "--simulated", dir + "/" + side, "--device", dir + "/device", "-o", dir + "/cc-" + side});
    const std::string csv = read_file(dir + "/cc-" + side + "/crosscheck.csv");
    size_t kernels = 0, exact = 0;
    for (size_t at = csv.find("\nkernel,"); at != std::string::npos; at = csv.find("\nkernel,", at + 1)) {
      ++kernels;
      const std::string line = csv.substr(at + 1, csv.find('\n', at + 1) - at - 1);
      if (line.find(",0.0000") != std::string::npos) ++exact;
    }
    EXPECT_EQ(kernels, 12u) << csv;
    EXPECT_EQ(exact, side == "after" ? 12u : 0u) << side << ":\n" << csv;
  }
}

TEST(CalibrateCommand, BadInputIsOneLineAndWritesNothing) {
  const std::string dir = temp_dir("calibrate_command_bad");
  write_file(dir + "/k.yaml", kernel_package());
  write_file(dir + "/bad.yaml", "format: lockstep-costs\nversion: 1\nkernels:\n  gelu: {per_value: 1}\n");
  auto r = run_lockstep({"run", dir + "/k.yaml", "--costs", dir + "/bad.yaml"});
  expect_bad_input(r, dir + "/bad.yaml:4: kernels.gelu.launch: missing (gelu takes per_value, launch)");
  // A profile without kernel samples has nothing to fit.
  ASSERT_EQ(run_lockstep({"run", integration_package("p2p_3w"), "--profile", dir + "/x.lsprof"}).exit_code, 0);
  r = run_lockstep({"calibrate", dir + "/x.lsprof", "-o", dir + "/costs.yaml"});
  expect_bad_input(r, "no compute sample names a kernel with a cost model");
  expect_nothing_written(dir, "costs.yaml");
  r = run_lockstep({"calibrate", dir + "/missing.lsprof"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  // build --costs reads the file as run does.
  r = run_lockstep({"build", "vit-tiny", "-o", dir + "/m.lkspkg", "--costs", dir + "/bad.yaml"});
  expect_bad_input(r, dir + "/bad.yaml:4: kernels.gelu.launch: missing (gelu takes per_value, launch)");
  expect_nothing_written(dir, "m.lkspkg");
}

// build --costs steers the lowering by the fitted cycles (tests/workload/lower_test.cpp holds
// which choices move) and names the file in its JSON; the package differs from the default's.
TEST(CalibrateCommand, BuildWithCostsRanksItsChoicesByThem) {
  const std::string dir = temp_dir("calibrate_build");
  write_file(dir + "/dear.yaml",
             "format: lockstep-costs\nversion: 1\nkernels:\n  reduce_sum: {instructions_per_part: 40, "
             "instructions_per_chunk: 6, launch: 11}\n");
  auto r = run_lockstep({"build", "vit-tiny", "-o", dir + "/fitted.lkspkg", "--costs", dir + "/dear.yaml", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["costs"], dir + "/dear.yaml");
  ASSERT_EQ(run_lockstep({"build", "vit-tiny", "-o", dir + "/builtin.lkspkg"}).exit_code, 0);
  EXPECT_NE(read_file(dir + "/fitted.lkspkg"), read_file(dir + "/builtin.lkspkg"));
}

}  // namespace
}  // namespace lockstep::testing
