// `lockstep calibrate`'s fit (calibration/fit.hpp) on profiles built sample by sample, and
// the costs file (calibration/costs_file.hpp) it writes and `run --costs` reads.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "arch/amp_cost.hpp"
#include "calibration/costs_file.hpp"
#include "calibration/fit.hpp"
#include "io/errors.hpp"

namespace lockstep::calibration {
namespace {

struct Call {
  std::string spec;  // kernelSpec, "" for none
  std::string kernel;
  uint64_t cycles_per_call = 0;
  uint32_t calls = 1;
  std::optional<uint64_t> call_cycles = 42;
};

// One tile's samples back to back: duration = calls x cycles_per_call + call_cycles.
arch::Profile profile_of(const std::vector<Call>& calls, uint64_t clock_hz = 1500000000) {
  arch::Profile p;
  p.clock_hz = clock_hz;
  p.tiles.resize(1);
  uint64_t at = 0;
  for (const Call& c : calls) {
    arch::ProfileStep step;
    step.kind = arch::ProfileStepKind::Compute;
    step.kernel = c.kernel;
    if (!c.spec.empty()) step.metadata.push_back({"kernelSpec", c.spec});
    step.metadata.push_back({"invocations", std::to_string(c.calls)});
    if (c.call_cycles) step.metadata.push_back({"callCycles", std::to_string(*c.call_cycles)});
    p.steps.push_back(step);
    const uint64_t duration = c.calls * c.cycles_per_call + c.call_cycles.value_or(0);
    p.tiles[0].samples.push_back({at, at + duration, static_cast<uint32_t>(p.steps.size() - 1), 0, 0});
    at += duration;
  }
  return p;
}

const arch::MachineDescription& machine() {
  static const arch::MachineDescription m = arch::load_machine("ipu21-c600");
  return m;
}

Calibration fit(const std::vector<arch::Profile>& profiles) {
  std::vector<std::string> names;
  for (size_t i = 0; i < profiles.size(); ++i) names.push_back("p" + std::to_string(i) + ".lsprof");
  return calibrate(profiles, names, machine());
}

TEST(Calibration, RecoversEveryParameterExactlyFromEnoughShapes) {
  const auto gelu = [](uint64_t e) { return 12 * e + 15; };  // perturbed from 10e + 11
  const Calibration c = fit({profile_of({{"gelu(64)", "gelu", gelu(64), 3}, {"gelu(1000)", "gelu", gelu(1000)}})});
  ASSERT_EQ(c.kernels.size(), 1u);
  const KernelFit& k = c.kernels[0];
  EXPECT_EQ(k.kernel, "gelu");
  EXPECT_EQ(k.samples, 2u);
  EXPECT_EQ(k.shapes, 2u);
  EXPECT_EQ(k.fitted, (std::vector<double>{12, 15}));
  EXPECT_EQ(k.held, (std::vector<bool>{false, false}));
  EXPECT_EQ(k.max_after, 0);
  EXPECT_EQ(k.max_before, 2.0 * 1000 + 4);  // the defaults are off by 2e + 4
  EXPECT_EQ(c.without_call_cycles, 0u);
}

TEST(Calibration, TheAmpCallsThreeParametersComeBackFromThreeShapes) {
  // call 300, row blocks x2, column groups x1 over K 11.2's terms.
  const auto cycles = [](uint64_t rows, uint64_t k, uint64_t n) {
    const auto t = arch::amp_f16_gemm_terms(rows, k, n);
    return static_cast<uint64_t>(300 * t[0] + 2 * t[1] + t[2]);
  };
  const Calibration c = fit({profile_of({{"gemm_fp8(4, 64, 32, 0, 16)", "gemm_fp8", cycles(4, 64, 32)},
                                         {"gemm_fp8(8, 64, 32, 0, 16)", "gemm_fp8", cycles(8, 64, 32)},
                                         {"gemm_fp8(4, 128, 64, 0, 16)", "gemm_fp8", cycles(4, 128, 64)}})});
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels[0].fitted, (std::vector<double>{300, 2, 1}));
  EXPECT_EQ(c.kernels[0].max_after, 0);
}

TEST(Calibration, ParametersTheShapesCannotSeparateKeepTheirDefaultsLastFirst) {
  const Calibration c = fit({profile_of({{"gelu(100)", "gelu", 12 * 100 + 11}, {"gelu(100)", "gelu", 12 * 100 + 11}})});
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels[0].shapes, 1u);
  EXPECT_EQ(c.kernels[0].fitted, (std::vector<double>{12, 11}));
  EXPECT_EQ(c.kernels[0].held, (std::vector<bool>{false, true}));
}

TEST(Calibration, SamplesNoCostModelReadsAreCountedBySymbol) {
  // A stack kernel's sample without Lockstep's kernelSpec, a repeat, and a sample whose
  // profile did not record the call sequence (it stays in the constant term).
  const Calibration c = fit({profile_of({{"", "ipu_stack_gelu_tanh_approx_f16", 500},
                                         {"", "repeat", 10},
                                         {"gelu(2)", "lockstep_kernel_gelu_2", 31, 1, std::nullopt},
                                         {"gelu(4)", "lockstep_kernel_gelu_2", 51, 1, std::nullopt}})});
  EXPECT_EQ(c.skipped, (std::map<std::string, uint64_t>{{"ipu_stack_gelu_tanh_approx_f16", 1}}));
  EXPECT_EQ(c.without_call_cycles, 2u);
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels[0].fitted, (std::vector<double>{10, 11}));
}

TEST(Calibration, ProfilesOfDifferentClocksAreRefused) {
  try {
    fit({profile_of({{"gelu(2)", "gelu", 31}}), profile_of({{"gelu(2)", "gelu", 31}}, 1850000000)});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "p1.lsprof: clockHz 1850000000 differs from p0.lsprof's 1500000000 (IPU21-DEVICE.md 15.5: calibrated "
              "profiles share one clock)");
  }
}

TEST(Calibration, AKernelSpecWithScalarsTheKernelRefusesIsBadInput) {
  EXPECT_THROW(fit({profile_of({{"gelu(2, 3)", "gelu", 31}})}), InputError);
  try {
    fit({profile_of({{"reduce_sum(1, 1, 2, 7)", "reduce_sum", 31}})});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("p0.lsprof: tile 0: kernelSpec 'reduce_sum(1, 1, 2, 7)': "), std::string::npos)
        << e.what();
  }
}

TEST(CostsFile, TheWrittenTextReadsBackAsTheFittedParameters) {
  const Calibration c = fit({profile_of(
      {{"gelu(64)", "gelu", 12 * 64 + 15}, {"gelu(1000)", "gelu", 12 * 1000 + 15}, {"add(16)", "add", 20}})});
  const std::string text = kernel_costs_text(c);
  EXPECT_NE(text.find("  gelu:\n    per_value: 12\n    launch: 15\n"), std::string::npos) << text;
  EXPECT_EQ(parse_kernel_costs(text, "costs.yaml"), fitted_costs(c));
}

struct BadCosts {
  const char* name;
  const char* kernels;
  const char* error;
};

class CostsFileBadInput : public ::testing::TestWithParam<BadCosts> {};

TEST_P(CostsFileBadInput, NamesTheFileLineAndKey) {
  const std::string text = std::string("format: lockstep-costs\nversion: 1\nkernels:\n") + GetParam().kernels;
  try {
    parse_kernel_costs(text, "costs.yaml");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), GetParam().error);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CostsFileBadInput,
    ::testing::Values(BadCosts{"UnknownKernel", "  gelo: {per_value: 1, launch: 2}\n",
                               "costs.yaml:4: kernels.gelo: no kernel of that name"},
                      BadCosts{"MissingParameter", "  gelu: {per_value: 1}\n",
                               "costs.yaml:4: kernels.gelu.launch: missing (gelu takes per_value, launch)"},
                      BadCosts{"UnknownParameter", "  gelu: {per_value: 1, launch: 2, lunch: 3}\n",
                               "costs.yaml:4: kernels.gelu.lunch: unknown key"},
                      BadCosts{"Negative", "  gelu: {per_value: -1, launch: 2}\n",
                               "costs.yaml:4: kernels.gelu.per_value: expected a finite number at least 0, got -1"},
                      BadCosts{"NotANumber", "  gelu: {per_value: .nan, launch: 2}\n",
                               "costs.yaml:4: kernels.gelu.per_value: expected a number, got '.nan'"},
                      BadCosts{"Infinite", "  gelu: {per_value: 1e999, launch: 2}\n",
                               "costs.yaml:4: kernels.gelu.per_value: expected a finite number at least 0, got inf"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(CostsFile, AnotherFormatOrVersionIsRefused) {
  EXPECT_THROW(parse_kernel_costs("format: lockstep-package\nversion: 1\nkernels: {}\n", "c.yaml"), InputError);
  try {
    parse_kernel_costs("format: lockstep-costs\nversion: 2\nkernels: {}\n", "c.yaml");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "c.yaml:2: version: this Lockstep reads version 1, got 2");
  }
}

}  // namespace
}  // namespace lockstep::calibration
