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
#include <cmath>
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
                                 std::vector<double> (*terms)(const std::vector<int64_t>&, const arch::MachineDescription&)) {
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
  std::vector<float> row(columns);
  for (uint64_t r = 0; r < rows; ++r) {
    kernels::amp::to_float(in.data() + r * columns, row.data(), columns, isa);
    float mx = -65504.0f;
    for (uint64_t c = 0; c < columns; ++c) mx = row[c] > mx ? row[c] : mx;
    const float m = mx * sc;
    float l = 0.0f;
    for (uint64_t c = 0; c < columns; ++c) {
      const float scaled = row[c] * sc;
      const float z = scaled - m;
      const float e = exp16[arch::fp16_from_float(z)];
      p[r * columns + c] = to_fp16(e);
      l += e;
    }
    state[2 * r] = m;
    state[2 * r + 1] = l;
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
    {"attention_softmax", check_stage, execute_stage, stage_cycles, false, worker_rows_cost_model("instructions_per_pair", arch::kAttentionSoftmaxSchedule, stage_terms)}};
const KernelRegistration merge{
    {"attention_merge", check_merge, execute_merge, merge_cycles, false, worker_rows_cost_model("instructions_per_quad", arch::kAttentionMergeSchedule, merge_terms)}};

}  // namespace
}  // namespace lockstep::model
