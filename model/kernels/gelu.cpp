// gelu: operands [out, in] (FP16), scalars [count]. The tanh form in the nine FP16 steps of
// IPU21-KERNELS.md section 8 (model/kernels/gelu_table.hpp). out may alias in.
// Cycles [S] (IPU21-KERNELS.md 11.4): 10 * count + 11.
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "model/kernel_registry.hpp"
#include "model/kernels/gelu_table.hpp"
#include "model/kernels/tensor_io.hpp"
#include "numerics/fp16.hpp"

namespace lockstep::model {
namespace {

constexpr int64_t kSramBytes = 0x9c000;  // 624 KiB

std::string check(const arch::KernelStep& step) {
  if (auto e = check_counts(step, 2, 1); !e.empty()) return e;
  const int64_t count = step.scalars[0];
  if (count < 1 || count > kSramBytes / 2) {
    return "gelu: scalars[0] count = " + std::to_string(count) + " (expected 1 to " + std::to_string(kSramBytes / 2) +
           ": 2 bytes each within SRAM)";
  }
  return "";
}

void execute(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory) {
  const auto count = static_cast<uint64_t>(scalars[0]);
  kernels::require_span(memory, operands[0], count * 2, "gelu out");
  std::vector<uint16_t> values = kernels::read_fp16(memory, operands[1], count, "gelu in");
  const auto& table = kernels::gelu_table();
  for (uint16_t& v : values) v = table[v];
  kernels::write_array(memory, operands[0], values, "gelu out");
}

uint64_t cycles(const std::vector<int64_t>& scalars, const arch::MachineDescription&) {
  return 10 * static_cast<uint64_t>(scalars[0]) + 11;
}

std::vector<double> terms(const std::vector<int64_t>& scalars, const arch::MachineDescription&) {
  return {static_cast<double>(scalars[0]), 1.0};
}

const KernelRegistration registration{
    {"gelu", check, execute, cycles, false, CostModel{{"per_value", "launch"}, {10, 11}, terms}}};

}  // namespace
}  // namespace lockstep::model
