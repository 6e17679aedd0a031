#include "model/kernel_registry.hpp"

#include <algorithm>
#include <map>

namespace lockstep::model {
namespace {
std::map<std::string, KernelDefinition>& registry() {
  static std::map<std::string, KernelDefinition> kernels;
  return kernels;
}
}  // namespace

KernelRegistration::KernelRegistration(KernelDefinition definition) {
  auto name = definition.name;
  registry().emplace(std::move(name), std::move(definition));
}

const KernelDefinition* find_kernel(const std::string& name) {
  const auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& [name, def] : registry()) names.push_back(name);
  return names;
}

std::string check_counts(const arch::KernelStep& step, size_t operands, size_t scalars) {
  if (step.operands.size() != operands) {
    return "kernel " + step.name + " takes " + std::to_string(operands) + " operand(s), got " +
           std::to_string(step.operands.size());
  }
  if (step.scalars.size() != scalars) {
    return "kernel " + step.name + " takes " + std::to_string(scalars) + " scalar(s), got " +
           std::to_string(step.scalars.size());
  }
  return "";
}

uint64_t row_kernel_cycles(uint64_t rows, uint64_t columns, uint64_t per_element, uint64_t per_row,
                           const arch::MachineDescription& machine) {
  constexpr uint64_t kLaunchCycles = 11;
  return machine.supervisor_cycles_per_instruction * per_worker(rows, machine) * (per_element * columns + per_row) +
         kLaunchCycles;
}

uint64_t per_worker(uint64_t items, const arch::MachineDescription& machine) {
  const uint64_t workers = std::max<uint32_t>(1, machine.workers);
  return (items + workers - 1) / workers;
}

}  // namespace lockstep::model
