#include "model/kernels/stack_family.hpp"

#include <algorithm>
#include <stdexcept>

#include "arch/kernel_signatures.hpp"

namespace lockstep::model::kernels {
namespace {

std::vector<StackFamilies>& registered() {
  static std::vector<StackFamilies> files;
  return files;
}

std::optional<KernelDefinition> make(const std::string& name) {
  const auto parsed = arch::parse_stack_kernel(name);
  if (!parsed) return std::nullopt;
  for (const StackFamilies& f : registered()) {
    if (std::find(f.families.begin(), f.families.end(), parsed->family) == f.families.end()) continue;
    const arch::StackKernel kernel = *parsed;
    KernelDefinition d;
    d.name = name;
    d.check = [kernel](const arch::KernelStep& step) {
      return check_counts(step, kernel.pointers(), kernel.scalars());
    };
    d.execute = [name, kernel, execute = f.execute](const Operands& operands, const Scalars& scalars, Sram& memory) {
      execute(name, kernel, operands, scalars, memory);
    };
    d.cycles = [kernel, cycles = f.cycles](const Scalars& scalars, const arch::MachineDescription& machine) {
      return cycles(kernel, scalars, machine);
    };
    d.reads_cycle_counter = f.reads_cycle_counter;
    return d;
  }
  return std::nullopt;
}

const KernelFamilyRegistration registration{make};

}  // namespace

StackFamilyRegistration::StackFamilyRegistration(StackFamilies families) {
  registered().push_back(std::move(families));
}

void require_stack_scalars(const std::string& symbol, const arch::StackKernel& kernel, size_t operands,
                           const Scalars& scalars) {
  if (operands != kernel.pointers() || scalars.size() != kernel.scalars()) {
    throw std::out_of_range(symbol + ": " + std::to_string(operands) + " operands and " +
                            std::to_string(scalars.size()) + " scalars, expected " + std::to_string(kernel.pointers()) +
                            " and " + std::to_string(kernel.scalars()));
  }
  constexpr uint64_t kAddressSpace = 1ull << 32;
  const std::string e = arch::stack_kernel_signature(symbol)->check_scalars(scalars, kAddressSpace);
  if (!e.empty()) throw std::out_of_range(symbol + ": " + e);
}

}  // namespace lockstep::model::kernels
