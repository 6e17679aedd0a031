#pragma once
// Compute kernels by name. A kernel is one file in model/kernels/ that registers its
// argument check, its bit-exact function and its cycle model (docs/timing.md).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "model/sram.hpp"

namespace lockstep::model {

// A kernel's cycle model as named parameters times terms of its scalars: cycles =
// ceil(sum of parameter x term). Linear in the parameters, so `lockstep calibrate` fits
// them to measured samples by least squares (docs/calibration.md). At `defaults` it gives
// the kernel's built-in cycles at every shape (tested).
struct CostModel {
  std::vector<std::string> parameters;
  std::vector<double> defaults;
  std::function<std::vector<double>(const std::vector<int64_t>& scalars, const arch::MachineDescription& machine)>
      terms;
};

struct KernelDefinition {
  std::string name;
  // "" when the step's operands and scalars fit the kernel, else what is wrong (one line).
  std::function<std::string(const arch::KernelStep& step)> check;
  // Runs on the tile's SRAM with operands already resolved to byte addresses. Throws
  // std::out_of_range when it would touch memory outside SRAM.
  std::function<void(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory)> execute;
  // Worker cycles from launch to the last worker finishing.
  std::function<uint64_t(const std::vector<int64_t>& scalars, const arch::MachineDescription& machine)> cycles;
  // The tile appends the low 32 bits of its cycle counter at the call (plus the kernel's
  // reading delay, docs/timing.md) as one more scalar: the runtime's $COUNT_L sample.
  bool reads_cycle_counter = false;
  // When set, machine.kernel_costs[name] replaces the built-in cycles (registration wraps
  // `cycles`), and calibration can fit the kernel.
  std::optional<CostModel> cost;
};

// nullptr for an unknown name. A name no kernel registered is offered to the families (the
// IPU21 stack's kernels, whose names carry their shapes); the definition a family makes is
// kept, so the pointer stays valid.
const KernelDefinition* find_kernel(const std::string& name);
std::vector<std::string> kernel_names();  // the registered names, sorted (no family members)

struct KernelRegistration {
  explicit KernelRegistration(KernelDefinition definition);
};

// A family of kernels named by pattern: `make` returns the definition for a name of the
// family, or nullopt.
struct KernelFamilyRegistration {
  explicit KernelFamilyRegistration(std::optional<KernelDefinition> (*make)(const std::string& name));
};

// Helpers for kernel files.
std::string check_counts(const arch::KernelStep& step, size_t operands, size_t scalars);
// Instructions per worker when `items` are split evenly over the machine's workers.
uint64_t per_worker(uint64_t items, const arch::MachineDescription& machine);

}  // namespace lockstep::model
