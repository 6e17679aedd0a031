#pragma once
// Compute kernels by name. A kernel is one file in model/kernels/ that registers its
// argument check, its bit-exact function and its cycle model (docs/timing.md).
#include <cstdint>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "model/sram.hpp"

namespace lockstep::model {

struct KernelDefinition {
  std::string name;
  // "" when the step's operands and scalars fit the kernel, else what is wrong (one line).
  std::string (*check)(const arch::KernelStep& step) = nullptr;
  // Runs on the tile's SRAM with operands already resolved to byte addresses. Throws
  // std::out_of_range when it would touch memory outside SRAM.
  void (*execute)(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars,
                  Sram& memory) = nullptr;
  // Worker cycles from launch to the last worker finishing.
  uint64_t (*cycles)(const std::vector<int64_t>& scalars,
                     const arch::MachineDescription& machine) = nullptr;
};

// nullptr for an unknown name.
const KernelDefinition* find_kernel(const std::string& name);
std::vector<std::string> kernel_names();  // sorted

struct KernelRegistration {
  explicit KernelRegistration(KernelDefinition definition);
};

// Helpers for kernel files.
std::string check_counts(const arch::KernelStep& step, size_t operands, size_t scalars);
// Instructions per worker when `items` are split evenly over the machine's workers.
uint64_t per_worker(uint64_t items, const arch::MachineDescription& machine);
// A row kernel's cycles [decision, docs/kernels-elementwise.md]: rows split over the workers,
// each row `per_element` worker instructions per column plus `per_row`, then the 11-cycle
// launch of the public cost model (IPU21-KERNELS.md 11.1).
uint64_t row_kernel_cycles(uint64_t rows, uint64_t columns, uint64_t per_element, uint64_t per_row,
                           const arch::MachineDescription& machine);

}  // namespace lockstep::model
