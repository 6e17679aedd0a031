// add: operands [out, a, b] (FP16), scalars [count]. out[i] = fl16(a[i] + b[i]) (nearest
// even, arch::fp16_add: exact sum in double, rounded once; a NaN result is the positive
// 0x7e00). Both inputs are read before the output is written, so out may alias either (the
// residual `add x, x, attn`). Cycles [S] (IPU21-KERNELS.md 11.4): ceil(count / 16) + 11.
#include <bit>
#include <string>
#include <vector>

#include "model/kernel_registry.hpp"
#include "model/kernels/tensor_io.hpp"
#include "numerics/fp16.hpp"

namespace lockstep::model {
namespace {

constexpr int64_t kSramBytes = 0x9c000;  // 624 KiB

// arch::fp16_add(a, b). When the float sum lies in FP16's normal range 2^-14 <= |s| < 65520
// it is rounded here with arch's integer rounding inlined; rounding the float sum instead of
// the exact one is harmless (24 >= 2 x 11 + 1 bits: double rounding is innocuous for a sum of
// two FP16 values), checked for all 2^32 operand pairs (docs/kernels-elementwise.md "add").
// Anything else (subnormal, overflow, NaN) goes to arch::fp16_add.
inline uint16_t add16(uint16_t x, uint16_t y) {
  const float sum = arch::fp16_to_float(x) + arch::fp16_to_float(y);
  const uint32_t bits = std::bit_cast<uint32_t>(sum);
  const uint32_t a = bits & 0x7fffffffu;
  if (a - 0x38800000u < 0x477ff000u - 0x38800000u) {
    return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | ((a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13));
  }
  return arch::fp16_add(x, y);
}

std::string check(const arch::KernelStep& step) {
  if (auto e = check_counts(step, 3, 1); !e.empty()) return e;
  const int64_t count = step.scalars[0];
  if (count < 1 || count > kSramBytes / 2) {
    return "add: scalars[0] count = " + std::to_string(count) + " (expected 1 to " + std::to_string(kSramBytes / 2) +
           ": 2 bytes each within SRAM)";
  }
  return "";
}

void execute(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory) {
  const auto count = static_cast<uint64_t>(scalars[0]);
  kernels::require_span(memory, operands[0], count * 2, "add out");
  std::vector<uint16_t> a = kernels::read_fp16(memory, operands[1], count, "add a");
  const std::vector<uint16_t> b = kernels::read_fp16(memory, operands[2], count, "add b");
  for (uint64_t i = 0; i < count; ++i) a[i] = add16(a[i], b[i]);
  kernels::write_array(memory, operands[0], a, "add out");
}

uint64_t cycles(const std::vector<int64_t>& scalars, const arch::MachineDescription&) {
  return (static_cast<uint64_t>(scalars[0]) + 15) / 16 + 11;
}

std::vector<double> terms(const std::vector<int64_t>& scalars, const arch::MachineDescription&) {
  return {static_cast<double>((static_cast<uint64_t>(scalars[0]) + 15) / 16), 1.0};
}

const KernelRegistration registration{
    {"add", check, execute, cycles, false, CostModel{{"per_16_values", "launch"}, {1, 11}, terms}}};

}  // namespace
}  // namespace lockstep::model
