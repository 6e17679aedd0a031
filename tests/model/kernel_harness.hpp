#pragma once
// What every kernel test needs: the machine, its SRAM's bounds, a registered kernel by name, run
// on an SRAM or costed, and the kernel's check() of a call with every operand at the first SRAM
// byte.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "model/kernel_registry.hpp"
#include "model/sram.hpp"
#include "tests/support/test_support.hpp"

namespace lockstep::model::kernel_harness {

inline const arch::MachineDescription& machine() { return testing::c600_machine(); }

constexpr uint32_t kBase = 0x4c000;  // first SRAM byte of ipu21-c600
constexpr uint32_t kEnd = 0xe8000;   // one past the last

inline const KernelDefinition& kernel(const std::string& name) {
  const KernelDefinition* k = find_kernel(name);
  if (k == nullptr) throw std::runtime_error("kernel " + name + " not registered");
  return *k;
}

inline void run(const std::string& name, const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars,
                Sram& memory) {
  kernel(name).execute(operands, scalars, memory);
}

inline uint64_t cycles(const std::string& name, const std::vector<int64_t>& scalars) {
  return kernel(name).cycles(scalars, machine());
}

inline std::string check(const std::string& name, size_t operands, const std::vector<int64_t>& scalars) {
  arch::KernelStep step;
  step.name = name;
  for (size_t i = 0; i < operands; ++i) step.operands.push_back({kBase, false});
  step.scalars = scalars;
  return kernel(name).check(step);
}

}  // namespace lockstep::model::kernel_harness
