// The blocked attention's two vector stages (IPU21-KERNELS.md section 9.1; the QK and PV
// products are gemm_fp16 calls). Details and schedules: docs/kernels-attention.md.
//
// attention_softmax: operands [p (FP16 [rows][columns]), state (FP32 [rows][2]), s (FP16
// [rows][columns])], scalars [rows, columns, head_dim]. One key block's scores S = Q K^T
// become unnormalised weights and the row's (m, l), as K section 9.2 orders it:
//   sc = fl32(1 / sqrt(head_dim))       (double, rounded once: K decisions)
//   mx = max(-65504, max of the row)    (FP32 compares; a NaN never raises it)
//   m  = fl32(mx * sc)
//   z  = fl32(fl32(S * sc) - m);  p = fl16(exp(fl16(z)))
//   l  = the p summed in FP32, in column order
// state[row] = (m, l). p may alias s (a row is read before it is written).
//
// attention_merge: operands [out (FP16 [rows][width]), blocks (FP16 [count][rows][width]),
// states (FP32 [count][rows][2])], scalars [rows, width, count]. The key blocks' PV products
// B_b and states (m_b, l_b) merged in block order as K section 9.4 does, then normalised:
//   block 0:  m = m_0, l = l_0, acc = f32(B_0)
//   block b:  m' = max(m, m_b); a = exp32(m - m'); e = exp32(m_b - m')
//             l = fl32(fl32(l * a) + fl32(l_b * e)); acc = fl32(fl32(acc * a) + fl32(B_b * e))
//   end:      r = fl32(1 / l); out = fl16(fl32(acc * r))
// exp32(x) = fl32(exp(double(x))). A NaN result is the positive 0x7e00.
//
// Cycles of both: rows split over the workers (row i on worker i mod 6, K sections 9.2 and
// 9.4), the slowest worker's instructions at the issue interval, plus one launch.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "arch/attention_cost.hpp"
#include "model/kernel_registry.hpp"
#include "model/kernels/amp_accumulate.hpp"
#include "model/kernels/exp_table.hpp"
#include "model/kernels/tensor_io.hpp"
#include "numerics/fp16.hpp"

namespace lockstep::model {
namespace {

constexpr int64_t kSramBytes = 0x9c000;  // 624 KiB

// The written schedules [decision] (docs/kernels-attention.md; the counts in
// arch/attention_cost.hpp), per f16v2 pair of a row and per row (or per row and block):
//   attention_softmax  pair 10, in 64-bit quads (two pairs): max 1 (ld64, f16v4max a quad);
//                      exponentials and sum 9 (ld64 and st64 a quad; a pair's f16v2 -> f32v2,
//                      f32v2mul, f32v2sub, f32v2 -> f16v2, f16v2exp, f16v2 -> f32v2, two
//                      f32add); row 17 (set-up 3, the max's four lanes 3, floor 1, m 1, loop
//                      set-up 2, stores 2, advance 1, and 4 for an unaligned head and odd
//                      tail pair in the 32-bit forms, 12 a pair)
//   attention_merge    quad (four values) and block 13, B read 64 bits at a time: the first
//                      block 5 (ld64, two converts, two st64), later ones 13 (ld64, two
//                      converts, two ld64, four f32v2mul, two f32v2add, two st64), and 7 in the
//                      final pass (two ld64, two f32v2mul, two f32v2 -> f16v2, st64), charged
//                      as 13 a block (5 + 7 < 13 + 13); row and block 12: state loads and
//                      stores, max, two subtractions and two exponentials, the l update; the
//                      reciprocal's 8 and set-ups spread likewise. Each row's quads may be cut
//                      into up to six runs, every run redoing the row's state, when that
//                      shortens the slowest worker (arch::attention_merge_split); the values do
//                      not depend on it.
CostModel worker_rows_cost_model(const char* unit, const arch::AttentionSchedule& schedule,
                                 std::vector<double> (*terms)(const std::vector<int64_t>&,
                                                              const arch::MachineDescription&)) {
  return CostModel{{unit, "instructions_per_row", "launch"},
                   {static_cast<double>(schedule.per_unit), static_cast<double>(schedule.per_row),
                    static_cast<double>(arch::kKernelLaunchCycles)},
                   terms};
}

uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }

std::string sizes(const char* kernel, const arch::KernelStep& step, std::initializer_list<const char*> names) {
  size_t i = 0;
  for (const char* name : names) {
    const int64_t v = step.scalars[i];
    if (v < 1 || v > kSramBytes) {
      return std::string(kernel) + ": scalars[" + std::to_string(i) + "] " + name + " = " + std::to_string(v) +
             " (expected 1 to " + std::to_string(kSramBytes) + ")";
    }
    ++i;
  }
  return "";
}

std::string spans(const char* kernel, std::initializer_list<std::pair<const char*, int64_t>> named) {
  for (const auto& [what, bytes] : named) {
    if (bytes > kSramBytes) {
      return std::string(kernel) + ": " + what + " = " + std::to_string(bytes) + " bytes, more than SRAM's " +
             std::to_string(kSramBytes);
    }
  }
  return "";
}

float fl32_exp(float x) { return static_cast<float>(std::exp(static_cast<double>(x))); }

uint16_t to_fp16(float x) { return std::isnan(x) ? arch::kFp16CanonicalNaN : arch::fp16_from_float(x); }

// --- attention_softmax ------------------------------------------------------------------------

std::string check_stage(const arch::KernelStep& step) {
  if (auto e = check_counts(step, 3, 3); !e.empty()) return e;
  if (auto e = sizes("attention_softmax", step, {"rows", "columns", "head_dim"}); !e.empty()) return e;
  const auto& s = step.scalars;
  return spans("attention_softmax", {{"s spans rows x columns x 2", s[0] * s[1] * 2}});
}

// Columns `first` onwards of a row: its exponentials e (as floats) and p, given sc and m.
void stage_columns(const float* row, uint64_t first, uint64_t columns, float sc, float m,
                   const std::array<float, 65536>& exp16, float* e, uint16_t* p) {
  for (uint64_t c = first; c < columns; ++c) {
    const float scaled = row[c] * sc;
    const float z = scaled - m;
    e[c] = exp16[arch::fp16_from_float(z)];
    p[c] = to_fp16(e[c]);
  }
}

// One row's m, exponentials e and p, in column order.
void stage_row(const float* row, uint64_t columns, float sc, const std::array<float, 65536>& exp16, float* e,
               uint16_t* p, float& m) {
  float mx = -65504.0f;
  for (uint64_t c = 0; c < columns; ++c) mx = row[c] > mx ? row[c] : mx;
  m = mx * sc;
  stage_columns(row, 0, columns, sc, m, exp16, e, p);
}

#if LOCKSTEP_AMP_X86
// AVX2 and F16C without FMA: fl32(fl32(S * sc) - m) must stay two roundings.
#define LOCKSTEP_STAGE_AVX2 __attribute__((target("avx2,f16c")))

// stage_row eight columns at a time (F16C converts as arch::fp16_from_float does; the table
// is gathered). False, with nothing written, when the row holds a score that is not finite or
// its maximum is a zero: NaN codes and the sign of a zero maximum follow the scalar order.
LOCKSTEP_STAGE_AVX2 bool stage_row_avx2(const float* row, uint64_t columns, float sc,
                                        const std::array<float, 65536>& exp16, float* e, uint16_t* p, float& m) {
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 infinity = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  __m256 lanes = _mm256_set1_ps(-65504.0f), unusual = _mm256_setzero_ps();
  uint64_t c = 0;
  for (; c + 8 <= columns; c += 8) {
    const __m256 v = _mm256_loadu_ps(row + c);
    unusual = _mm256_or_ps(unusual, _mm256_cmp_ps(_mm256_and_ps(v, magnitude), infinity, _CMP_NLT_UQ));
    lanes = _mm256_max_ps(lanes, v);
  }
  if (_mm256_movemask_ps(unusual) != 0) return false;
  float lane[8];
  _mm256_storeu_ps(lane, lanes);
  float mx = -65504.0f;
  for (const float x : lane) mx = x > mx ? x : mx;
  for (; c < columns; ++c) {
    if (!std::isfinite(row[c])) return false;
    mx = row[c] > mx ? row[c] : mx;
  }
  if (mx == 0.0f) return false;
  m = mx * sc;
  const __m256 scale = _mm256_set1_ps(sc), shift = _mm256_set1_ps(m);
  for (c = 0; c + 8 <= columns; c += 8) {
    const __m256 z = _mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(row + c), scale), shift);
    const __m256i code = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(z, _MM_FROUND_TO_NEAREST_INT));
    const __m256 ev = _mm256_i32gather_ps(exp16.data(), code, 4);
    _mm256_storeu_ps(e + c, ev);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p + c), _mm256_cvtps_ph(ev, _MM_FROUND_TO_NEAREST_INT));
  }
  stage_columns(row, c, columns, sc, m, exp16, e, p);
  return true;
}

// The sums of up to eight rows' e (rows `columns` apart), one row a lane, each adding its
// columns in order from +0 as the scalar sum does.
LOCKSTEP_STAGE_AVX2 void row_sums_avx2(const float* e, uint64_t columns, uint64_t height, float* sums) {
  alignas(32) int32_t at[8];
  for (uint64_t i = 0; i < 8; ++i) at[i] = static_cast<int32_t>((i < height ? i : 0) * columns);
  const __m256i index = _mm256_load_si256(reinterpret_cast<const __m256i*>(at));
  __m256 l = _mm256_setzero_ps();
  for (uint64_t c = 0; c < columns; ++c) l = _mm256_add_ps(l, _mm256_i32gather_ps(e + c, index, 4));
  float lane[8];
  _mm256_storeu_ps(lane, l);
  for (uint64_t i = 0; i < height; ++i) sums[i] = lane[i];
}
#endif

// Each of `height` rows' e summed in column order from +0 (`columns` apart).
void row_sums(const float* e, uint64_t columns, uint64_t height, float* sums, kernels::amp::Isa isa) {
#if LOCKSTEP_AMP_X86
  if (isa != kernels::amp::Isa::Portable) return row_sums_avx2(e, columns, height, sums);
#endif
  (void)isa;
  for (uint64_t i = 0; i < height; ++i) {
    float l = 0.0f;
    for (uint64_t c = 0; c < columns; ++c) l += e[i * columns + c];
    sums[i] = l;
  }
}

void execute_stage(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory) {
  const auto rows = u(scalars[0]);
  const auto columns = u(scalars[1]);
  const kernels::InputArray<uint16_t> in(memory, operands[2], rows * columns, "attention_softmax s");
  kernels::require_span(memory, operands[0], rows * columns * 2, "attention_softmax p");
  kernels::require_span(memory, operands[1], rows * 8, "attention_softmax state");
  const auto& exp16 = kernels::fp16_exp_table();
  const auto sc = static_cast<float>(1.0 / std::sqrt(static_cast<double>(scalars[2])));
  std::vector<uint16_t> p(rows * columns);
  std::vector<float> state(rows * 2);
  const kernels::amp::Isa isa = kernels::amp::best_isa();
  // Rows go in blocks of eight: each row's exponentials, then the block's sums (a sum is a
  // chain of adds in column order; eight rows' chains run side by side).
  constexpr uint64_t kBlock = 8;
  std::vector<float> row(columns), e(kBlock * columns), sums(kBlock);
  for (uint64_t r0 = 0; r0 < rows; r0 += kBlock) {
    const uint64_t height = std::min(kBlock, rows - r0);
    for (uint64_t i = 0; i < height; ++i) {
      const uint64_t r = r0 + i;
      kernels::amp::to_float(in.data() + r * columns, row.data(), columns, isa);
      float* er = e.data() + i * columns;
      uint16_t* pr = p.data() + r * columns;
#if LOCKSTEP_AMP_X86
      if (isa != kernels::amp::Isa::Portable && stage_row_avx2(row.data(), columns, sc, exp16, er, pr, state[2 * r])) {
        continue;
      }
#endif
      stage_row(row.data(), columns, sc, exp16, er, pr, state[2 * r]);
    }
    row_sums(e.data(), columns, height, sums.data(), isa);
    for (uint64_t i = 0; i < height; ++i) state[2 * (r0 + i) + 1] = sums[i];
  }
  kernels::write_array(memory, operands[0], p, "attention_softmax p");
  kernels::write_array(memory, operands[1], state, "attention_softmax state");
}

uint64_t stage_cycles(const std::vector<int64_t>& s, const arch::MachineDescription& machine) {
  return arch::attention_softmax_cycles(u(s[0]), u(s[1]), machine);
}
std::vector<double> stage_terms(const std::vector<int64_t>& s, const arch::MachineDescription& machine) {
  return arch::attention_softmax_terms(u(s[0]), u(s[1]), machine);
}

// --- attention_merge --------------------------------------------------------------------------

std::string check_merge(const arch::KernelStep& step) {
  if (auto e = check_counts(step, 3, 3); !e.empty()) return e;
  if (auto e = sizes("attention_merge", step, {"rows", "width", "count"}); !e.empty()) return e;
  const auto& s = step.scalars;
  return spans("attention_merge", {{"blocks span count x rows x width x 2", s[2] * s[0] * s[1] * 2},
                                   {"states span count x rows x 8", s[2] * s[0] * 8}});
}

void execute_merge(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory) {
  const auto rows = u(scalars[0]);
  const auto width = u(scalars[1]);
  const auto count = u(scalars[2]);
  const kernels::InputArray<uint16_t> blocks(memory, operands[1], count * rows * width, "attention_merge blocks");
  const kernels::InputArray<float> states(memory, operands[2], count * rows * 2, "attention_merge states");
  kernels::require_span(memory, operands[0], rows * width * 2, "attention_merge out");
  std::vector<uint16_t> out(rows * width);
  std::vector<float> acc(width);
  for (uint64_t r = 0; r < rows; ++r) {
    float m = states[2 * r];
    float l = states[2 * r + 1];
    for (uint64_t c = 0; c < width; ++c) acc[c] = arch::fp16_to_float(blocks[r * width + c]);
    for (uint64_t b = 1; b < count; ++b) {
      const float mb = states[(b * rows + r) * 2];
      const float lb = states[(b * rows + r) * 2 + 1];
      const float next = mb > m ? mb : m;
      const float a = fl32_exp(m - next);
      const float e = fl32_exp(mb - next);
      const float la = l * a;
      const float le = lb * e;
      l = la + le;
      const uint16_t* block = blocks.data() + (b * rows + r) * width;
      for (uint64_t c = 0; c < width; ++c) {
        const float kept = acc[c] * a;
        const float added = arch::fp16_to_float(block[c]) * e;
        acc[c] = kept + added;
      }
      m = next;
    }
    const auto reciprocal = static_cast<float>(1.0 / static_cast<double>(l));
    for (uint64_t c = 0; c < width; ++c) {
      const float y = acc[c] * reciprocal;
      out[r * width + c] = to_fp16(y);
    }
  }
  kernels::write_array(memory, operands[0], out, "attention_merge out");
}

uint64_t merge_cycles(const std::vector<int64_t>& s, const arch::MachineDescription& machine) {
  return arch::attention_merge_cycles(u(s[0]), u(s[1]), u(s[2]), machine);
}
std::vector<double> merge_terms(const std::vector<int64_t>& s, const arch::MachineDescription& machine) {
  return arch::attention_merge_terms(u(s[0]), u(s[1]), u(s[2]), machine);
}

const KernelRegistration stage{
    {"attention_softmax", check_stage, execute_stage, stage_cycles, false,
     worker_rows_cost_model("instructions_per_pair", arch::kAttentionSoftmaxSchedule, stage_terms)}};
const KernelRegistration merge{
    {"attention_merge", check_merge, execute_merge, merge_cycles, false,
     worker_rows_cost_model("instructions_per_quad", arch::kAttentionMergeSchedule, merge_terms)}};

}  // namespace
}  // namespace lockstep::model
