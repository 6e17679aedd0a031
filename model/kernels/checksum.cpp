// checksum: operands [src, dst], scalars [bytes]. Writes fnv1a64(src..src+bytes) as 8
// little-endian bytes at dst. FNV-1a is sequential, so it runs on one worker: an xor and a
// multiply per byte plus a 6-instruction prologue and epilogue (the two stores).
#include <vector>

#include "model/kernel_registry.hpp"

namespace lockstep::model {
namespace {

std::string check(const arch::KernelStep& step) {
  if (auto e = check_counts(step, 2, 1); !e.empty()) return e;
  if (step.scalars[0] < 0 || step.scalars[0] > 0x100000) {
    return "checksum: bytes must be non-negative and within SRAM";
  }
  return "";
}

void execute(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars,
             Sram& memory) {
  const auto bytes = static_cast<uint32_t>(scalars[0]);
  if (!memory.contains(operands[0], bytes) || !memory.contains(operands[1], 8)) {
    throw std::out_of_range("checksum: span outside SRAM");
  }
  std::vector<uint8_t> buffer(bytes);
  memory.read(operands[0], bytes, buffer.data());
  const uint64_t digest = arch::fnv1a64(buffer.data(), buffer.size());
  uint8_t out[8];
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(digest >> (8 * i));
  memory.write(operands[1], 8, out);
}

uint64_t cycles(const std::vector<int64_t>& scalars, const arch::MachineDescription& machine) {
  return machine.supervisor_cycles_per_instruction * (6 + 2 * static_cast<uint64_t>(scalars[0]));
}

std::vector<double> terms(const std::vector<int64_t>& scalars, const arch::MachineDescription& machine) {
  const double issue = machine.supervisor_cycles_per_instruction;
  return {issue * static_cast<double>(scalars[0]), issue};
}

const KernelRegistration registration{
    {"checksum", check, execute, cycles, false, CostModel{{"instructions_per_byte", "instructions_per_call"}, {2, 6}, terms}}};

}  // namespace
}  // namespace lockstep::model
