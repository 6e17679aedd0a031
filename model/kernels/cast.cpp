// cast: operands [out, in], scalars [count, in_bits, out_bits], bits 16 (FP16) or 32 (FP32).
// 16 -> 32 exact (arch::fp16_to_float; a NaN keeps its sign and payload, made quiet);
// 32 -> 16 round to nearest even, once (arch::fp16_from_float; overflow to +-inf, a NaN
// becomes 0x7e00 with its sign); same width: the bits copied unchanged. All of in is read
// before out is written, so out may alias in. Cycles [S] (IPU21-KERNELS.md 11.4):
// ceil((in_bytes + out_bytes) / 8) + 11.
#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "model/kernel_registry.hpp"
#include "model/kernels/tensor_io.hpp"
#include "numerics/fp16.hpp"

namespace lockstep::model {
namespace {

constexpr int64_t kSramBytes = 0x9c000;  // 624 KiB

std::string bits_error(size_t i, const char* name, int64_t bits) {
  if (bits == 16 || bits == 32) return "";
  return "cast: scalars[" + std::to_string(i) + "] " + name + " = " + std::to_string(bits) + " (expected 16 or 32)";
}

std::string check(const arch::KernelStep& step) {
  if (auto e = check_counts(step, 2, 3); !e.empty()) return e;
  const auto& s = step.scalars;
  if (s[0] < 1 || s[0] > kSramBytes / 2) {
    return "cast: scalars[0] count = " + std::to_string(s[0]) + " (expected 1 to " + std::to_string(kSramBytes / 2) +
           ")";
  }
  if (auto e = bits_error(1, "in_bits", s[1]); !e.empty()) return e;
  if (auto e = bits_error(2, "out_bits", s[2]); !e.empty()) return e;
  const int64_t widest = s[0] * std::max(s[1], s[2]) / 8;
  if (widest > kSramBytes) {
    return "cast: a " + std::to_string(std::max(s[1], s[2])) + "-bit span of " + std::to_string(s[0]) +
           " elements is " + std::to_string(widest) + " bytes, more than SRAM's " + std::to_string(kSramBytes);
  }
  return "";
}

void execute(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory) {
  const auto count = static_cast<uint64_t>(scalars[0]);
  const auto in_bits = scalars[1];
  const auto out_bits = scalars[2];
  kernels::require_span(memory, operands[0], count * static_cast<uint64_t>(out_bits) / 8, "cast out");
  if (in_bits == out_bits) {
    const std::vector<uint8_t> bytes =
        kernels::read_bytes(memory, operands[1], count * static_cast<uint64_t>(in_bits) / 8, "cast in");
    kernels::write_array(memory, operands[0], bytes, "cast out");
  } else if (in_bits == 16) {
    const std::vector<uint16_t> in = kernels::read_fp16(memory, operands[1], count, "cast in");
    std::vector<float> out(count);
    for (uint64_t i = 0; i < count; ++i) out[i] = arch::fp16_to_float(in[i]);
    kernels::write_array(memory, operands[0], out, "cast out");
  } else {
    const std::vector<float> in = kernels::read_fp32(memory, operands[1], count, "cast in");
    std::vector<uint16_t> out(count);
    for (uint64_t i = 0; i < count; ++i) out[i] = arch::fp16_from_float(in[i]);
    kernels::write_array(memory, operands[0], out, "cast out");
  }
}

uint64_t cycles(const std::vector<int64_t>& scalars, const arch::MachineDescription&) {
  const auto count = static_cast<uint64_t>(scalars[0]);
  const uint64_t bytes = count * static_cast<uint64_t>(scalars[1] + scalars[2]) / 8;
  return (bytes + 7) / 8 + 11;
}

std::vector<double> terms(const std::vector<int64_t>& scalars, const arch::MachineDescription&) {
  const auto count = static_cast<uint64_t>(scalars[0]);
  const uint64_t bytes = count * static_cast<uint64_t>(scalars[1] + scalars[2]) / 8;
  return {static_cast<double>((bytes + 7) / 8), 1.0};
}

const KernelRegistration registration{
    {"cast", check, execute, cycles, false, CostModel{{"per_8_bytes", "launch"}, {1, 11}, terms}}};

}  // namespace
}  // namespace lockstep::model
