// layernorm: operands [out, in] (no affine) or [out, in, gamma, beta] (affine), all FP16;
// out and in are [rows][columns], gamma and beta [columns]; scalars [rows, columns]. There is
// no public kernel (IPU21-KERNELS.md section 0), so the order is Lockstep's definition
// (docs/kernels-elementwise.md "layernorm"), which follows its work split: each row's H values
// are cut into six slices of 4 x ceil(H / 24) values (one per worker, the last ones shorter or
// empty), read as f16v4 and summed in f32v2 lanes, one lane for even and one for odd columns:
//   partial = fl32(even lane + odd lane) per slice;  S(v) = partials summed in slice order
//   mean = fl32(S(x) / H)
//   d    = fl32(x - mean)
//   var  = fl32(S(fl32(d * d)) / H)
//   rstd = fl32(1 / sqrt(var + 1e-6))     (double, rounded once; epsilon as in SigLIP)
//   y    = fl32(d * rstd);  affine: y = fl32(fl32(y * gamma) + beta)
//   out  = fl16(y)
// A NaN result is the positive 0x7e00. All inputs are read before any output is written, so
// out may alias in. Cycles: the slowest worker's instructions (layernorm_schedule) x 6 plus a
// launch per pass (docs/kernels-elementwise.md).
#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "model/kernel_registry.hpp"
#include "model/kernels/row_split.hpp"
#include "model/kernels/tensor_io.hpp"
#include "numerics/fp16.hpp"

namespace lockstep::model {
namespace {

constexpr int64_t kSramBytes = 0x9c000;  // 624 KiB
constexpr double kEpsilon = 1e-6;

// The written schedule [decision] (docs/kernels-elementwise.md "layernorm"). Per row, three
// launches of the six workers (the partials are combined between them); worker w takes the
// w-th slice, so worker 0's (a full one) is the slowest. Instructions per f16v4 quad:
//   sum        5: ld64, 2 f16v2 -> f32v2, 2 f32v2add
//   squares    9: ld64, 2 convert, 2 f32v2sub, 2 f32v2mul, 2 f32v2add
//   normalise  9: ld64, 2 convert, 2 f32v2sub, 2 f32v2mul, f32v4 -> f16v4, st64
// and per row: sum 5 (set-up 3, lane add, store), squares 24 (set-up 3, six partials loaded
// and added 11, the division 8, lane add, store), normalise 39 (set-up 3, partials 11, the
// division 8, epsilon 1, square root 8, reciprocal 8). A division, square root or reciprocal
// counts 8 slots: the facts give no latency (IPU21-KERNELS.md 11.1 gives none).
constexpr kernels::RowSplit kSplit{4, 5 + 9 + 9, 5 + 24 + 39, 3};

std::string scalar_range(size_t i, const char* name, int64_t value) {
  if (value >= 1 && value <= kSramBytes) return "";
  return "layernorm: scalars[" + std::to_string(i) + "] " + name + " = " + std::to_string(value) + " (expected 1 to " +
         std::to_string(kSramBytes) + ")";
}

std::string check(const arch::KernelStep& step) {
  if (step.operands.size() != 2 && step.operands.size() != 4) {
    return "kernel layernorm takes 2 or 4 operand(s), got " + std::to_string(step.operands.size());
  }
  if (auto e = check_counts(step, step.operands.size(), 2); !e.empty()) return e;
  const auto& s = step.scalars;
  if (auto e = scalar_range(0, "rows", s[0]); !e.empty()) return e;
  if (auto e = scalar_range(1, "columns", s[1]); !e.empty()) return e;
  const int64_t bytes = s[0] * s[1] * 2;
  if (bytes > kSramBytes) {
    return "layernorm: in spans rows x columns x 2 = " + std::to_string(bytes) + " bytes, more than SRAM's " +
           std::to_string(kSramBytes);
  }
  return "";
}

// fl16(y), a NaN as the positive 0x7e00 (arch keeps the NaN's sign).
inline uint16_t to_fp16(float y) { return std::isnan(y) ? arch::kFp16CanonicalNaN : arch::fp16_from_float(y); }

void execute(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory) {
  const auto rows = static_cast<uint64_t>(scalars[0]);
  const auto columns = static_cast<uint64_t>(scalars[1]);
  const bool affine = operands.size() == 4;
  kernels::require_span(memory, operands[0], rows * columns * 2, "layernorm out");
  const kernels::InputArray<uint16_t> in(memory, operands[1], rows * columns, "layernorm in");
  std::vector<float> gamma;
  std::vector<float> beta;
  if (affine) {
    for (const uint16_t g : kernels::read_fp16(memory, operands[2], columns, "layernorm gamma")) {
      gamma.push_back(arch::fp16_to_float(g));
    }
    for (const uint16_t b : kernels::read_fp16(memory, operands[3], columns, "layernorm beta")) {
      beta.push_back(arch::fp16_to_float(b));
    }
  }

  const auto h = static_cast<float>(columns);  // exact: columns < 2^24
  std::vector<uint16_t> out(rows * columns);
  std::vector<float> x(columns), d(columns), squares(columns);
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < columns; ++c) x[c] = arch::fp16_to_float(in[r * columns + c]);
    const float mean = kSplit.sum(x.data(), columns) / h;
    for (uint64_t c = 0; c < columns; ++c) {
      d[c] = x[c] - mean;
      squares[c] = d[c] * d[c];
    }
    const float var = kSplit.sum(squares.data(), columns) / h;
    const auto rstd = static_cast<float>(1.0 / std::sqrt(static_cast<double>(var) + kEpsilon));
    uint16_t* o = out.data() + r * columns;
    if (affine) {
      for (uint64_t c = 0; c < columns; ++c) {
        const float y = d[c] * rstd;
        const float scaled = y * gamma[c];
        o[c] = to_fp16(scaled + beta[c]);
      }
    } else {
      for (uint64_t c = 0; c < columns; ++c) o[c] = to_fp16(d[c] * rstd);
    }
  }
  kernels::write_array(memory, operands[0], out, "layernorm out");
}

const KernelRegistration registration{kSplit.definition("layernorm", check, execute)};

}  // namespace
}  // namespace lockstep::model
