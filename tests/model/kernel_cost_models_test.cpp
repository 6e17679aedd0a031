// Every kernel cost model calibration fits (model/kernel_registry.hpp CostModel) gives the
// kernel's built-in cycles at its default parameters, at several shapes each; and a machine
// that carries fitted parameters (`run --costs`) takes its cycles from them.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "arch/kernel_costs.hpp"
#include "arch/machine.hpp"
#include "model/kernel_registry.hpp"

namespace lockstep::model {
namespace {

// Shapes (scalar lists) per kernel, chosen to cross the models' rounding steps.
const std::map<std::string, std::vector<std::vector<int64_t>>>& shapes() {
  static const std::map<std::string, std::vector<std::vector<int64_t>>> s = {
      {"add", {{1}, {16}, {17}, {1000}}},
      {"attention_merge", {{1, 72, 1}, {9, 72, 12}, {7, 5, 3}}},
      {"attention_softmax", {{1, 1, 72}, {105, 64, 72}, {13, 25, 16}}},
      {"cast", {{1, 16, 32}, {256, 32, 16}, {1001, 8, 16}}},
      {"checksum", {{4}, {4096}}},
      {"checksum_xxh3", {{4}, {4096}}},
      {"copy", {{4}, {100}, {4096}, {65536}}},
      {"fill", {{4, 0}, {4100, 7}}},
      {"gelu", {{2}, {1024}, {4304}}},
      {"gemm_fp16", {{4, 64, 64, 0, 16}, {729, 16, 80, 1, 32}, {3, 17, 33, 0, 16}}},
      {"gemm_fp16_interleaved", {{4, 64, 64, 0, 16}, {53, 112, 72, 1, 16}}},
      {"gemm_fp8", {{64, 128, 32, -4, 16}, {1, 1, 1, 0, 16}, {729, 1152, 36, 2, 16}}},
      {"gemm_fp8_interleaved", {{64, 128, 32, -4, 16}, {243, 128, 80, -4, 16}}},
      {"layernorm", {{1, 256}, {3, 1152}, {7, 25}}},
      {"reduce_sum", {{8, 8, 32, 16}, {1, 1, 2, 32}, {46, 16, 36, 16}}},
      {"softmax", {{4, 64, 64}, {1, 729, 72}, {9, 5, 3}}},
  };
  return s;
}

TEST(KernelCostModels, DefaultsGiveTheBuiltInCyclesAtEveryShape) {
  const arch::MachineDescription machine = arch::load_machine("ipu21-c600");
  size_t modelled = 0;
  for (const std::string& name : kernel_names()) {
    const KernelDefinition* kernel = find_kernel(name);
    if (!kernel->cost) continue;
    ++modelled;
    const CostModel& cost = *kernel->cost;
    ASSERT_EQ(cost.parameters.size(), cost.defaults.size()) << name;
    ASSERT_TRUE(shapes().count(name)) << name << " has a cost model but no shapes in this test";
    for (const auto& scalars : shapes().at(name)) {
      const std::vector<double> terms = cost.terms(scalars, machine);
      ASSERT_EQ(terms.size(), cost.parameters.size()) << name;
      EXPECT_EQ(arch::cost_cycles(cost.defaults, terms), kernel->cycles(scalars, machine)) << name;
    }
  }
  EXPECT_EQ(modelled, shapes().size());
}

TEST(KernelCostModels, FittedParametersOnTheMachineReplaceTheBuiltInCycles) {
  arch::MachineDescription machine = arch::load_machine("ipu21-c600");
  const KernelDefinition* gelu = find_kernel("gelu");
  EXPECT_EQ(gelu->cycles({1024}, machine), 10u * 1024 + 11);
  machine.kernel_costs["gelu"] = {12, 15};
  EXPECT_EQ(gelu->cycles({1024}, machine), 12u * 1024 + 15);
  machine.kernel_costs["gelu"] = {10.25, 0.5};  // a fraction of a cycle rounds up
  EXPECT_EQ(gelu->cycles({2}, machine), 21u);
  // Other kernels keep theirs.
  EXPECT_EQ(find_kernel("add")->cycles({16}, machine), 12u);
}

}  // namespace
}  // namespace lockstep::model
