// gemm_fp16: operands [out, a (FP16 [rows][inner]), b], scalars [rows, columns, inner,
// b_transposed, out_bits]. b is FP16 [inner][columns] when b_transposed = 0 and
// [columns][inner] when 1 (out = a x b^T, attention's Q K^T); out is FP16 [rows][columns] when
// out_bits = 16, FP32 when 32. Accumulated as the F16 AMP does (amp_accumulate.hpp): per 16-K
// step an FP32 sum of exact products in K order, added to the FP16 accumulator and rounded
// once to FP16 (nearest even); the FP16 result is stored as FP16 or as FP32 (exact). A NaN
// result is FP16 0x7e00 (FP32 0x7fc00000). All inputs are read before the output is written.
// Cycles [S]: IPU21-KERNELS.md 11.2 in one call of K block ceil16(inner) by C block
// ceil16(columns) (arch/amp_cost.hpp).
// Details: docs/kernels-gemm.md.
#include <array>
#include <string>
#include <vector>

#include "model/kernel_registry.hpp"
#include "model/kernels/amp_accumulate.hpp"
#include "model/kernels/amp_cost_model.hpp"
#include "model/kernels/tensor_io.hpp"
#include "numerics/fp16.hpp"

namespace lockstep::model {
namespace {

constexpr int64_t kSramBytes = 0x9c000;  // 624 KiB

std::string range(size_t i, const char* name, int64_t value, int64_t min, int64_t max) {
  if (value >= min && value <= max) return "";
  return "gemm_fp16: scalars[" + std::to_string(i) + "] " + name + " = " + std::to_string(value) + " outside [" +
         std::to_string(min) + ", " + std::to_string(max) + "]";
}

std::string span(const char* what, int64_t bytes) {
  if (bytes <= kSramBytes) return "";
  return std::string("gemm_fp16: ") + what + " = " + std::to_string(bytes) + " bytes, more than SRAM's " +
         std::to_string(kSramBytes);
}

std::string check(const arch::KernelStep& step) {
  if (auto e = check_counts(step, 3, 5); !e.empty()) return e;
  const auto& s = step.scalars;
  if (auto e = range(0, "rows", s[0], 1, kSramBytes); !e.empty()) return e;
  if (auto e = range(1, "columns", s[1], 1, kSramBytes); !e.empty()) return e;
  if (auto e = range(2, "inner", s[2], 1, kSramBytes); !e.empty()) return e;
  if (auto e = range(3, "b_transposed", s[3], 0, 1); !e.empty()) return e;
  if (s[4] != 16 && s[4] != 32) {
    return "gemm_fp16: scalars[4] out_bits = " + std::to_string(s[4]) + " (expected 16 or 32)";
  }
  if (auto e =
          span(s[4] == 16 ? "out spans rows x columns x 2" : "out spans rows x columns x 4", s[0] * s[1] * (s[4] / 8));
      !e.empty()) {
    return e;
  }
  if (auto e = span("a spans rows x inner x 2", s[0] * s[2] * 2); !e.empty()) return e;
  return span("b spans inner x columns x 2", s[2] * s[1] * 2);
}

void execute(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory) {
  const auto rows = static_cast<uint32_t>(scalars[0]);
  const auto columns = static_cast<uint32_t>(scalars[1]);
  const auto inner = static_cast<uint32_t>(scalars[2]);
  const bool transposed = scalars[3] == 1;
  const bool fp32_out = scalars[4] == 32;
  const uint64_t outputs = uint64_t{rows} * columns;
  kernels::require_span(memory, operands[0], outputs * (fp32_out ? 4 : 2), "gemm_fp16 out");
  const kernels::InputArray<uint16_t> a(memory, operands[1], uint64_t{rows} * inner, "gemm_fp16 a");
  const kernels::InputArray<uint16_t> b(memory, operands[2], uint64_t{inner} * columns, "gemm_fp16 b");

  const std::array<arch::SramRange, 2> inputs{a.range(), b.range()};
  if (fp32_out) {
    kernels::OutputArray<float> out(memory, operands[0], outputs, inputs, "gemm_fp16 out");
    kernels::amp::gemm_fp16(a.data(), b.data(), rows, inner, columns, transposed,
                            kernels::amp::Fp32Rows{out.data(), columns});
    out.commit();
  } else {
    kernels::OutputArray<uint16_t> out(memory, operands[0], outputs, inputs, "gemm_fp16 out");
    const kernels::amp::Isa isa = kernels::amp::best_isa();
    kernels::amp::gemm_fp16(a.data(), b.data(), rows, inner, columns, transposed,
                            kernels::amp::Fp16Rows{out.data(), columns, isa}, isa);
    out.commit();
  }
}

// scalars -> the AMP call's (rows, inner (K), columns); the b operand's bytes.
kernels::amp::AmpShape shape(const std::vector<int64_t>& s) { return {s[0], s[2], s[1]}; }
uint64_t weight_bytes(const std::vector<int64_t>& s) {
  return 2 * static_cast<uint64_t>(s[1]) * static_cast<uint64_t>(s[2]);
}

// gemm_fp16 and gemm_fp16_interleaved (b in interleaved memory: K 11.1's column group 940).
const KernelRegistration registration{
    kernels::amp::amp_gemm_definition("gemm_fp16", check, execute, shape, weight_bytes, false)};
const KernelRegistration interleaved_registration{
    kernels::amp::amp_gemm_definition("gemm_fp16", check, execute, shape, weight_bytes, true)};

}  // namespace
}  // namespace lockstep::model
