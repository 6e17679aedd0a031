// gemm_fp8: operands [out ([rows][n], FP16 when out_bits = 16, FP32 when 32), input (FP16
// [rows][k]), weights (F143 bytes [k][n])], scalars [rows, k, n, weight_scale, out_bits].
// out = input x weights with the weights
// decode(byte) x 2^weight_scale, decoded to FP16 first (exact for weight_scale in [-14, 8],
// docs/numerics.md), accumulated as the F16 AMP does (model/kernels/amp_accumulate.hpp): per
// 16-K step an FP32 sum of exact products in K order, added to the FP16 accumulator and
// rounded once to FP16 (nearest even). The FP16 result is written as FP16, or as FP32 (exact;
// a NaN is 0x7fc00000, FP16 0x7e00): the same values either way. All inputs are read before the output is written.
// Cycles [decision]: the F16 AMP call formula of IPU21-KERNELS.md 11.2 (no F8 formula there;
// the weights are decoded per AMP step), in one call of K block ceil16(k) by C block
// ceil16(n) (arch/amp_cost.hpp).
// Details: docs/kernels-gemm.md.
#include <array>
#include <string>
#include <vector>

#include "model/kernel_registry.hpp"
#include "model/kernels/amp_accumulate.hpp"
#include "model/kernels/amp_cost_model.hpp"
#include "model/kernels/tensor_io.hpp"
#include "numerics/fp16.hpp"
#include "numerics/fp8.hpp"

namespace lockstep::model {
namespace {

constexpr int64_t kSramBytes = 0x9c000;  // 624 KiB

std::string range(size_t i, const char* name, int64_t value, int64_t min, int64_t max, const char* why) {
  if (value >= min && value <= max) return "";
  return "gemm_fp8: scalars[" + std::to_string(i) + "] " + name + " = " + std::to_string(value) + " outside [" +
         std::to_string(min) + ", " + std::to_string(max) + "]" + why;
}

std::string span(const char* what, int64_t bytes) {
  if (bytes <= kSramBytes) return "";
  return std::string("gemm_fp8: ") + what + " = " + std::to_string(bytes) + " bytes, more than SRAM's " +
         std::to_string(kSramBytes);
}

std::string check(const arch::KernelStep& step) {
  if (auto e = check_counts(step, 3, 5); !e.empty()) return e;
  const auto& s = step.scalars;
  if (auto e = range(0, "rows", s[0], 1, kSramBytes, ""); !e.empty()) return e;
  if (auto e = range(1, "k", s[1], 1, kSramBytes, ""); !e.empty()) return e;
  if (auto e = range(2, "n", s[2], 1, kSramBytes, ""); !e.empty()) return e;
  if (auto e = range(3, "weight_scale", s[3], -14, 8, " (F143 x 2^scale must be exact in FP16)"); !e.empty()) {
    return e;
  }
  if (s[4] != 16 && s[4] != 32) {
    return "gemm_fp8: scalars[4] out_bits = " + std::to_string(s[4]) + " (expected 16 or 32)";
  }
  if (auto e = span(s[4] == 32 ? "out spans rows x n x 4" : "out spans rows x n x 2", s[0] * s[2] * s[4] / 8);
      !e.empty()) {
    return e;
  }
  if (auto e = span("input spans rows x k x 2", s[0] * s[1] * 2); !e.empty()) return e;
  return span("weights span k x n", s[1] * s[2]);
}

void execute(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory) {
  const auto rows = static_cast<uint32_t>(scalars[0]);
  const auto k = static_cast<uint32_t>(scalars[1]);
  const auto n = static_cast<uint32_t>(scalars[2]);
  const auto scale = static_cast<int8_t>(scalars[3]);
  const bool fp32_out = scalars[4] == 32;
  kernels::require_span(memory, operands[0], uint64_t{rows} * n * (fp32_out ? 4 : 2), "gemm_fp8 out");
  const kernels::InputArray<uint16_t> input(memory, operands[1], uint64_t{rows} * k, "gemm_fp8 input");
  const kernels::InputArray<uint8_t> weights(memory, operands[2], uint64_t{k} * n, "gemm_fp8 weights");

  // F143 -> FP16 (exact in the checked scale range) -> float (exact).
  const std::array<uint16_t, 256> fp16 = arch::f143_fp16_table(scale);
  std::array<float, 256> decode{};
  for (size_t c = 0; c < decode.size(); ++c) decode[c] = arch::fp16_to_float(fp16[c]);

  const std::array<arch::SramRange, 2> inputs{input.range(), weights.range()};
  if (fp32_out) {
    kernels::OutputArray<float> out(memory, operands[0], uint64_t{rows} * n, inputs, "gemm_fp8 out");
    kernels::amp::gemm_f143(input.data(), weights.data(), decode.data(), rows, k, n,
                            kernels::amp::Fp32Rows{out.data(), n});
    out.commit();
  } else {
    kernels::OutputArray<uint16_t> out(memory, operands[0], uint64_t{rows} * n, inputs, "gemm_fp8 out");
    const kernels::amp::Isa isa = kernels::amp::best_isa();
    kernels::amp::gemm_f143(input.data(), weights.data(), decode.data(), rows, k, n,
                            kernels::amp::Fp16Rows{out.data(), n, isa}, isa);
    out.commit();
  }
}

// scalars -> the AMP call's (rows, k, n); the weights operand's bytes.
kernels::amp::AmpShape shape(const std::vector<int64_t>& s) { return {s[0], s[1], s[2]}; }
uint64_t weight_bytes(const std::vector<int64_t>& s) {
  return static_cast<uint64_t>(s[1]) * static_cast<uint64_t>(s[2]);
}

// gemm_fp8 and gemm_fp8_interleaved (weights in interleaved memory: K 11.1's column group 940).
const KernelRegistration registration{
    kernels::amp::amp_gemm_definition("gemm_fp8", check, execute, shape, weight_bytes, false)};
const KernelRegistration interleaved_registration{
    kernels::amp::amp_gemm_definition("gemm_fp8", check, execute, shape, weight_bytes, true)};

}  // namespace
}  // namespace lockstep::model
