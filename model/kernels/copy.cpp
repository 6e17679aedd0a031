// copy: operands [dst, src], scalars [bytes]. Copies as if through a temporary, so
// overlapping spans behave like memmove. Cycles: words split over the workers, a load and
// a store per word, plus a 4-instruction prologue.
#include <vector>

#include "arch/kernel_costs.hpp"
#include "model/kernel_registry.hpp"

namespace lockstep::model {
namespace {

std::string check(const arch::KernelStep& step) {
  if (auto e = check_counts(step, 2, 1); !e.empty()) return e;
  if (step.scalars[0] < 0 || step.scalars[0] % 4 != 0 || step.scalars[0] > 0x100000) {
    return "copy: bytes must be a non-negative multiple of 4 within SRAM";
  }
  return "";
}

void execute(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory) {
  const auto bytes = static_cast<uint32_t>(scalars[0]);
  if (!memory.contains(operands[0], bytes) || !memory.contains(operands[1], bytes)) {
    throw std::out_of_range("copy: span outside SRAM");
  }
  memory.copy_from(memory, operands[1], operands[0], bytes);  // overlapping spans as through a buffer
}

uint64_t cycles(const std::vector<int64_t>& scalars, const arch::MachineDescription& machine) {
  return arch::copy_cycles(static_cast<uint64_t>(scalars[0]), machine);
}

std::vector<double> terms(const std::vector<int64_t>& scalars, const arch::MachineDescription& machine) {
  return arch::copy_terms(static_cast<uint64_t>(scalars[0]), machine);
}

const KernelRegistration registration{
    {"copy", check, execute, cycles, false,
     CostModel{{"instructions_per_worker_word", "instructions_per_call"}, {2, 4}, terms}}};

}  // namespace
}  // namespace lockstep::model
