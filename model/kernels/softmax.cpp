// softmax: operands [out (FP16 [rows][columns]), in (FP32 [rows][columns])], scalars [rows,
// columns, head_dim]. Each row of attention scores becomes its normalised probabilities at
// scale s = 1/sqrt(head_dim), in the order of IPU21-KERNELS.md section 9.2 followed by a
// division by the row sum (docs/kernels-elementwise.md "softmax"):
//   s  = fl32(1 / sqrt(head_dim))            (double, rounded once)
//   mx = max(-65504, max of the row)         (FP32 compares; NaN scores never raise it)
//   sm = fl32(mx * s)
//   z  = fl32(fl32(S * s) - sm)              (two FP32 roundings, no fused multiply-add)
//   e  = fl16(exp(fl16(z)))                  (z to FP16 first; exp in double, rounded once)
//   l  = sum of e in FP32 in the work split's order: six worker slices of 2 x ceil(C / 12)
//        values, each an even and an odd f32v2 lane in column order, P_w = fl32(even + odd),
//        the P_w added in worker order
//   out = fl16(e / l)                        (double quotient, rounded once to FP16)
// A NaN result is the positive 0x7e00. All inputs are read before any output is written, so
// out may alias in. Cycles: the slowest worker's instructions (below) x 6 plus a launch per
// wave (docs/kernels-elementwise.md).
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "model/kernel_registry.hpp"
#include "model/kernels/exp_table.hpp"
#include "model/kernels/row_split.hpp"
#include "model/kernels/tensor_io.hpp"
#include "numerics/fp16.hpp"

namespace lockstep::model {
namespace {

constexpr int64_t kSramBytes = 0x9c000;  // 624 KiB
// The written schedule [decision] (docs/kernels-elementwise.md "softmax"). Per row, three waves
// of the six workers, worker w on the w-th slice of whole f32v2 pairs (worker 0's, a full
// one, is the slowest), the partial maxima and sums combined between waves. Per pair:
//   max        2: ld64, f32v2max
//   exp        8: ld64, f32v2mul, f32v2sub, f32v2 -> f16v2, f16v2exp, f16v2 -> f32v2,
//                 f32v2add, st32
//   normalise  5: ld32, f16v2 -> f32v2, f32v2mul by 1/l, f32v2 -> f16v2, st32
// and per row: max 4 (set-up 3, store), exp 17 (set-up 3, six maxima 11, sm 1, lane add,
// store), normalise 22 (set-up 3, six sums 11, reciprocal 8).
constexpr kernels::RowSplit kSplit{2, 2 + 8 + 5, 4 + 17 + 22, 3};

// fl16(q) for a double 0 <= q <= 1, bit for bit arch::fp16_from_double, without branches.
// Normal results (q >= 2^-14): arch's integer rounding inlined (the double's exponent field
// minus 1008 is FP16's). Subnormal ones: q + 2^28 rounds q to a multiple of 2^-24 (the ulp of
// doubles in [2^28, 2^29)) to nearest even, the FPU's default mode that all of this kernel's
// FP32 arithmetic already assumes, and the bits above 2^28's count those multiples: the code.
inline uint16_t unit_to_fp16(double q) {
  const uint64_t bits = std::bit_cast<uint64_t>(q);
  const uint64_t normal = (bits - 0x3f00000000000000ull + 0x1ffffffffffull + ((bits >> 42) & 1u)) >> 42;
  const uint64_t sub = std::bit_cast<uint64_t>(q + 0x1p28) - std::bit_cast<uint64_t>(0x1p28);
  const uint64_t is_normal = uint64_t{0} - static_cast<uint64_t>(bits >= 0x3f10000000000000ull);
  return static_cast<uint16_t>((normal & is_normal) | (sub & ~is_normal));  // a mask, not a branch
}

std::string scalar_range(size_t i, const char* name, int64_t value) {
  if (value >= 1 && value <= kSramBytes) return "";
  return "softmax: scalars[" + std::to_string(i) + "] " + name + " = " + std::to_string(value) + " (expected 1 to " +
         std::to_string(kSramBytes) + ")";
}

std::string check(const arch::KernelStep& step) {
  if (auto e = check_counts(step, 2, 3); !e.empty()) return e;
  const auto& s = step.scalars;
  if (auto e = scalar_range(0, "rows", s[0]); !e.empty()) return e;
  if (auto e = scalar_range(1, "columns", s[1]); !e.empty()) return e;
  if (auto e = scalar_range(2, "head_dim", s[2]); !e.empty()) return e;
  const int64_t bytes = s[0] * s[1] * 4;  // the FP32 input; the FP16 output is half of it
  if (bytes > kSramBytes) {
    return "softmax: in spans rows x columns x 4 = " + std::to_string(bytes) + " bytes, more than SRAM's " +
           std::to_string(kSramBytes);
  }
  return "";
}

void execute(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory) {
  const auto rows = static_cast<uint64_t>(scalars[0]);
  const auto columns = static_cast<uint64_t>(scalars[1]);
  const auto head_dim = static_cast<uint64_t>(scalars[2]);
  kernels::require_span(memory, operands[0], rows * columns * 2, "softmax out");
  const std::vector<float> in = kernels::read_fp32(memory, operands[1], rows * columns, "softmax in");
  const auto& exp16 = kernels::fp16_exp_table();

  const auto s = static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  std::vector<uint16_t> out(rows * columns);
  std::vector<float> e(columns);
  for (uint64_t r = 0; r < rows; ++r) {
    const float* row = in.data() + r * columns;
    float mx = -65504.0f;
    for (uint64_t c = 0; c < columns; ++c) mx = row[c] > mx ? row[c] : mx;
    const float sm = mx * s;
    for (uint64_t c = 0; c < columns; ++c) {
      const float scaled = row[c] * s;
      const float z = scaled - sm;
      e[c] = exp16[arch::fp16_from_float(z)];
    }
    const float l = kSplit.sum(e.data(), columns);
    uint16_t* o = out.data() + r * columns;
    const double sum = l;
    if (l > 0.0f && l <= std::numeric_limits<float>::max()) {
      // Every e is finite, 0 <= e <= l (a sum of non-negative terms is at least each term).
      for (uint64_t c = 0; c < columns; ++c) o[c] = unit_to_fp16(static_cast<double>(e[c]) / sum);
    } else {
      // A NaN or +inf score (so a NaN e), or l = 0 (every score below -65504): NaN results.
      for (uint64_t c = 0; c < columns; ++c) {
        const double q = static_cast<double>(e[c]) / sum;
        o[c] = std::isnan(q) ? arch::kFp16CanonicalNaN : arch::fp16_from_double(q);
      }
    }
  }
  kernels::write_array(memory, operands[0], out, "softmax out");
}

const KernelRegistration registration{kSplit.definition("softmax", check, execute)};

}  // namespace
}  // namespace lockstep::model
