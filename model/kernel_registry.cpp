#include "model/kernel_registry.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>

#include "arch/kernel_costs.hpp"

namespace lockstep::model {
namespace {
std::map<std::string, KernelDefinition>& registry() {
  static std::map<std::string, KernelDefinition> kernels;
  return kernels;
}
}  // namespace

KernelRegistration::KernelRegistration(KernelDefinition definition) {
  if (definition.cost) {
    // Fitted parameters, when the machine carries them, replace the built-in cycles.
    definition.cycles = [name = definition.name, builtin = definition.cycles, cost = *definition.cost](
                            const std::vector<int64_t>& scalars, const arch::MachineDescription& machine) {
      const auto fitted = machine.kernel_costs.find(name);
      if (fitted == machine.kernel_costs.end()) return builtin(scalars, machine);
      return arch::cost_cycles(fitted->second, cost.terms(scalars, machine));
    };
  }
  auto name = definition.name;
  registry().emplace(std::move(name), std::move(definition));
}

using FamilyMaker = std::optional<KernelDefinition> (*)(const std::string&);
static std::vector<FamilyMaker>& families() {
  static std::vector<FamilyMaker> makers;
  return makers;
}

KernelFamilyRegistration::KernelFamilyRegistration(FamilyMaker make) { families().push_back(make); }

const KernelDefinition* find_kernel(const std::string& name) {
  const auto it = registry().find(name);
  if (it != registry().end()) return &it->second;
  // Simulations of several packages run on threads of their own, so the made definitions are
  // kept under a lock; each is made once.
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<KernelDefinition>> made;
  const std::lock_guard lock(mutex);
  if (const auto m = made.find(name); m != made.end()) return m->second.get();
  std::unique_ptr<KernelDefinition> definition;
  for (FamilyMaker make : families()) {
    if (auto d = make(name)) {
      definition = std::make_unique<KernelDefinition>(std::move(*d));
      break;
    }
  }
  return made.emplace(name, std::move(definition)).first->second.get();
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

uint64_t per_worker(uint64_t items, const arch::MachineDescription& machine) {
  const uint64_t workers = std::max<uint32_t>(1, machine.workers);
  return (items + workers - 1) / workers;
}

}  // namespace lockstep::model
