// fill: operands [dst], scalars [bytes, word value]. Every 32-bit word of dst..dst+bytes
// becomes the value. Cycles: the words split over the workers, one store per word, plus a
// 4-instruction prologue; a worker issues every supervisor_cycles_per_instruction cycles.
#include <bit>
#include <cstring>
#include <vector>

#include "model/kernel_registry.hpp"

namespace lockstep::model {
namespace {

std::string check(const arch::KernelStep& step) {
  if (auto e = check_counts(step, 1, 2); !e.empty()) return e;
  if (step.scalars[0] < 0 || step.scalars[0] % 4 != 0 || step.scalars[0] > 0x100000) {
    return "fill: bytes must be a non-negative multiple of 4 within SRAM";
  }
  if (step.scalars[1] < 0 || step.scalars[1] > 0xffffffffll) return "fill: value must fit 32 bits";
  return "";
}

void execute(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory) {
  const auto bytes = static_cast<uint32_t>(scalars[0]);
  const auto value = static_cast<uint32_t>(scalars[1]);
  if (!memory.contains(operands[0], bytes)) throw std::out_of_range("fill: destination outside SRAM");
  static_assert(std::endian::native == std::endian::little, "SRAM words are little-endian");
  // In place: the payload proof zeroes every destination before every iteration (gigabytes a
  // run), which Sram::zero does at memory speed; a buffer of the words took 10% of such a run.
  if (value == 0) {
    memory.zero(operands[0], bytes);
    return;
  }
  uint8_t* to = memory.mutable_span(operands[0], bytes).data();
  for (uint32_t at = 0; at < bytes; at += 4) std::memcpy(to + at, &value, 4);  // any alignment
}

uint64_t cycles(const std::vector<int64_t>& scalars, const arch::MachineDescription& machine) {
  return machine.supervisor_cycles_per_instruction * (4 + per_worker(static_cast<uint64_t>(scalars[0]) / 4, machine));
}

std::vector<double> terms(const std::vector<int64_t>& scalars, const arch::MachineDescription& machine) {
  const double issue = machine.supervisor_cycles_per_instruction;
  return {issue * static_cast<double>(per_worker(static_cast<uint64_t>(scalars[0]) / 4, machine)), issue};
}

const KernelRegistration registration{
    {"fill", check, execute, cycles, false,
     CostModel{{"instructions_per_worker_word", "instructions_per_call"}, {1, 4}, terms}}};

}  // namespace
}  // namespace lockstep::model
