// gelu: operands [out, in] (FP16), scalars [count]. The tanh form in the nine FP16 steps of
// IPU21-KERNELS.md section 8, each rounded to FP16 (nearest even):
//   t = x*x; t = t*x; t = beta*t (beta 0x29b9); t = x+t; t = alpha*t (alpha 0x3a62);
//   t = tanh16(t) = fl16(tanh(t) in double); t = 1+t; t = 0.5*t; y = x*t
// A pure function of the input's 16 bits, so it is a 65,536-entry table built once from that
// definition. NaN results are the positive 0x7e00 (arch::fp16_add / fp16_mul). out may alias
// in. Cycles [S] (IPU21-KERNELS.md 11.4): 10 * count + 11.
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "numerics/fp16.hpp"
#include "model/kernel_registry.hpp"
#include "model/kernels/tensor_io.hpp"

namespace lockstep::model {
namespace {

constexpr int64_t kSramBytes = 0x9c000;  // 624 KiB
constexpr uint16_t kBeta = 0x29b9;       // 0.044708251953125
constexpr uint16_t kAlpha = 0x3a62;      // 0.7978515625
constexpr uint16_t kOne = 0x3c00;
constexpr uint16_t kHalf = 0x3800;

uint16_t tanh16(uint16_t t) {
  const double v = arch::fp16_to_float(t);
  return std::isnan(v) ? arch::kFp16CanonicalNaN : arch::fp16_from_double(std::tanh(v));
}

uint16_t gelu16(uint16_t x) {
  using arch::fp16_add;
  using arch::fp16_mul;
  uint16_t t = fp16_mul(x, x);  // 1
  t = fp16_mul(t, x);           // 2
  t = fp16_mul(kBeta, t);       // 3
  t = fp16_add(x, t);           // 4
  t = fp16_mul(kAlpha, t);      // 5
  t = tanh16(t);                // 6
  t = fp16_add(kOne, t);        // 7
  t = fp16_mul(kHalf, t);       // 8
  return fp16_mul(x, t);        // 9
}

const std::array<uint16_t, 65536>& gelu_table() {
  static const auto table = [] {
    auto t = std::make_unique<std::array<uint16_t, 65536>>();
    for (uint32_t x = 0; x < 65536; ++x) (*t)[x] = gelu16(static_cast<uint16_t>(x));
    return t;
  }();
  return *table;
}

std::string check(const arch::KernelStep& step) {
  if (auto e = check_counts(step, 2, 1); !e.empty()) return e;
  const int64_t count = step.scalars[0];
  if (count < 1 || count > kSramBytes / 2) {
    return "gelu: scalars[0] count = " + std::to_string(count) + " (expected 1 to " +
           std::to_string(kSramBytes / 2) + ": 2 bytes each within SRAM)";
  }
  return "";
}

void execute(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars,
             Sram& memory) {
  const auto count = static_cast<uint64_t>(scalars[0]);
  kernels::require_span(memory, operands[0], count * 2, "gelu out");
  std::vector<uint16_t> values = kernels::read_fp16(memory, operands[1], count, "gelu in");
  const auto& table = gelu_table();
  for (uint16_t& v : values) v = table[v];
  kernels::write_array(memory, operands[0], values, "gelu out");
}

uint64_t cycles(const std::vector<int64_t>& scalars, const arch::MachineDescription&) {
  return 10 * static_cast<uint64_t>(scalars[0]) + 11;
}

const KernelRegistration registration{{"gelu", check, execute, cycles}};

}  // namespace
}  // namespace lockstep::model
