#pragma once
// The IPU21 stack's kernels in the registry: each model/kernels/stack_*.cpp names the families
// of arch/stack_kernels.hpp it runs, with their function and cycles; one family maker parses a
// symbol once, finds the file that runs it and makes the definition (operand and scalar
// counts from the symbol's register ABI).
#include <cstdint>
#include <string>
#include <vector>

#include "arch/stack_kernels.hpp"
#include "model/kernel_registry.hpp"

namespace lockstep::model::kernels {

using Operands = std::vector<uint32_t>;
using Scalars = std::vector<int64_t>;

struct StackFamilies {
  std::vector<arch::StackKernelFamily> families;
  void (*execute)(const std::string& symbol, const arch::StackKernel& kernel, const Operands& operands,
                  const Scalars& scalars, Sram& memory);
  uint64_t (*cycles)(const arch::StackKernel& kernel, const Scalars& scalars, const arch::MachineDescription& machine);
  bool reads_cycle_counter = false;  // KernelDefinition::reads_cycle_counter
};

struct StackFamilyRegistration {
  explicit StackFamilyRegistration(StackFamilies families);
};

// The validator's checks again, before a kernel touches memory (a package that skipped them):
// operand and scalar counts, and the signature's scalar ranges (against the 32-bit address
// space; the kernels check their spans against SRAM). std::out_of_range, so a hazard.
void require_stack_scalars(const std::string& symbol, const arch::StackKernel& kernel, size_t operands,
                           const Scalars& scalars);

}  // namespace lockstep::model::kernels
