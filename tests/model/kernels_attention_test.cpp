// The blocked attention's vector stages (attention_softmax, attention_merge) against
// deliberately simple references written from docs/kernels-attention.md: scalar loops, FP16
// values from their fields and rounding by the table search of
// tests/numerics/numerics_reference.hpp. Then the whole blocked form (QK, stage, PV per key
// block, one merge) against exact softmax attention in double. Fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "model/kernel_registry.hpp"
#include "model/kernels/tensor_io.hpp"
#include "model/sram.hpp"
#include "numerics/fp16.hpp"
#include "numerics/numerics_reference.hpp"
#include "tests/model/kernel_harness.hpp"

namespace lockstep::model {
namespace {

using kernel_harness::check;
using kernel_harness::kBase;
using kernel_harness::kernel;
using kernel_harness::machine;

double value16(uint16_t h) { return arch::reference::fp16_value(h); }
uint16_t round16(double x) { return std::isnan(x) ? uint16_t{0x7e00} : arch::reference::fp16_nearest_even(x); }

template <typename T>
void store(Sram& m, uint32_t address, const std::vector<T>& v) {
  kernels::write_array(m, address, v, "test");
}

std::vector<uint16_t> random_halves(std::mt19937& rng, size_t n, double sigma) {
  std::normal_distribution<double> normal(0, sigma);
  std::vector<uint16_t> v(n);
  for (auto& h : v) h = arch::fp16_from_double(normal(rng));
  return v;
}

// --- references -------------------------------------------------------------------------------

struct StageResult {
  std::vector<uint16_t> p;
  std::vector<float> state;  // (m, l) per row
};

StageResult reference_stage(const std::vector<uint16_t>& s, size_t rows, size_t columns, int64_t head_dim) {
  const auto sc = static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  StageResult out;
  for (size_t r = 0; r < rows; ++r) {
    float mx = -65504.0f;
    for (size_t c = 0; c < columns; ++c) {
      const auto v = static_cast<float>(value16(s[r * columns + c]));
      if (v > mx) mx = v;
    }
    const float m = mx * sc;
    float l = 0.0f;
    for (size_t c = 0; c < columns; ++c) {
      const float scaled = static_cast<float>(value16(s[r * columns + c])) * sc;
      const float z = scaled - m;
      const uint16_t e = round16(std::exp(value16(round16(z))));
      out.p.push_back(e);
      l += static_cast<float>(value16(e));
    }
    out.state.push_back(m);
    out.state.push_back(l);
  }
  return out;
}

std::vector<uint16_t> reference_merge(const std::vector<uint16_t>& blocks, const std::vector<float>& states,
                                      size_t rows, size_t width, size_t count) {
  std::vector<uint16_t> out;
  for (size_t r = 0; r < rows; ++r) {
    float m = states[2 * r], l = states[2 * r + 1];
    std::vector<float> acc;
    for (size_t c = 0; c < width; ++c) acc.push_back(static_cast<float>(value16(blocks[r * width + c])));
    for (size_t b = 1; b < count; ++b) {
      const float mb = states[(b * rows + r) * 2], lb = states[(b * rows + r) * 2 + 1];
      const float next = mb > m ? mb : m;
      const auto a = static_cast<float>(std::exp(static_cast<double>(m - next)));
      const auto e = static_cast<float>(std::exp(static_cast<double>(mb - next)));
      const float la = l * a;
      const float le = lb * e;
      l = la + le;
      for (size_t c = 0; c < width; ++c) {
        const float kept = acc[c] * a;
        const float added = static_cast<float>(value16(blocks[(b * rows + r) * width + c])) * e;
        acc[c] = kept + added;
      }
      m = next;
    }
    const auto reciprocal = static_cast<float>(1.0 / static_cast<double>(l));
    for (size_t c = 0; c < width; ++c) {
      const float y = acc[c] * reciprocal;
      out.push_back(round16(y));
    }
  }
  return out;
}

// --- attention_softmax ------------------------------------------------------------------------

struct StageShape {
  int64_t rows, columns, head_dim;
};

TEST(AttentionSoftmax, BitExactAgainstTheReferenceAtSeveralShapes) {
  std::mt19937 rng(7);
  for (const StageShape shape : {StageShape{1, 1, 72}, {6, 64, 72}, {105, 64, 72}, {7, 25, 72}, {13, 33, 16}}) {
    Sram m(machine());
    const size_t n = static_cast<size_t>(shape.rows * shape.columns);
    const auto s = random_halves(rng, n, 8.0);
    store(m, kBase, s);
    const uint32_t state = kBase + 0x20000;
    kernel("attention_softmax")
        .execute({kBase + 0x10000, state, kBase}, {shape.rows, shape.columns, shape.head_dim}, m);
    const StageResult want = reference_stage(s, shape.rows, shape.columns, shape.head_dim);
    ASSERT_EQ(kernels::read_fp16(m, kBase + 0x10000, n, "p"), want.p) << shape.rows << "x" << shape.columns;
    ASSERT_EQ(kernels::read_fp32(m, state, shape.rows * 2, "state"), want.state);
    // In place (p over s) gives the same bits.
    kernel("attention_softmax").execute({kBase, state, kBase}, {shape.rows, shape.columns, shape.head_dim}, m);
    ASSERT_EQ(kernels::read_fp16(m, kBase, n, "p"), want.p);
  }
}

TEST(AttentionSoftmax, TheRowMaximumWeighsOneAndFloorsAtMinus65504) {
  Sram m(machine());
  // Row 0: its maximum 2.0 gives exp(0) = 1; row 1: every score -inf, below the floor.
  store(m, kBase, std::vector<uint16_t>{0x3c00, 0x4000, 0xbc00, 0xfc00, 0xfc00, 0xfc00});
  kernel("attention_softmax").execute({kBase + 0x100, kBase + 0x200, kBase}, {2, 3, 4}, m);
  const auto p = kernels::read_fp16(m, kBase + 0x100, 6, "p");
  EXPECT_EQ(p[1], 0x3c00);
  const auto state = kernels::read_fp32(m, kBase + 0x200, 4, "state");
  EXPECT_EQ(state[0], 1.0f);              // m = 2 * 1/sqrt(4)
  EXPECT_EQ(state[2], -65504.0f * 0.5f);  // the floor, scaled
  EXPECT_EQ(state[3], 0.0f);              // exp(-inf) is 0
}

// --- attention_merge --------------------------------------------------------------------------

TEST(AttentionMerge, BitExactAgainstTheReferenceAtSeveralShapes) {
  std::mt19937 rng(11);
  std::normal_distribution<double> maxima(0, 3);
  std::uniform_real_distribution<double> sums(1, 64);
  for (const auto& [rows, width, count] :
       std::vector<std::array<int64_t, 3>>{{1, 2, 1}, {9, 72, 12}, {6, 5, 3}, {13, 16, 2}}) {
    Sram m(machine());
    const auto blocks = random_halves(rng, static_cast<size_t>(count * rows * width), 4.0);
    std::vector<float> states;
    for (int64_t i = 0; i < count * rows; ++i) {
      states.push_back(static_cast<float>(maxima(rng)));
      states.push_back(static_cast<float>(sums(rng)));
    }
    store(m, kBase, blocks);
    store(m, kBase + 0x20000, states);
    kernel("attention_merge").execute({kBase + 0x30000, kBase, kBase + 0x20000}, {rows, width, count}, m);
    EXPECT_EQ(kernels::read_fp16(m, kBase + 0x30000, static_cast<size_t>(rows * width), "out"),
              reference_merge(blocks, states, rows, width, count))
        << rows << "x" << width << " x" << count;
  }
}

TEST(AttentionMerge, OneBlockIsItsValuesOverItsSum) {
  Sram m(machine());
  store(m, kBase, std::vector<uint16_t>{0x4400, 0xc200});  // 4, -3
  store(m, kBase + 0x100, std::vector<float>{5.0f, 2.0f});
  kernel("attention_merge").execute({kBase + 0x200, kBase, kBase + 0x100}, {1, 2, 1}, m);
  EXPECT_EQ(kernels::read_fp16(m, kBase + 0x200, 2, "out"), (std::vector<uint16_t>{0x4000, 0xbe00}));  // 2, -1.5
}

// --- the blocked form -------------------------------------------------------------------------

// Softmax attention of `rows` queries over `keys` keys computed as the lowering does (64-key
// blocks: gemm_fp16 QK, attention_softmax, gemm_fp16 PV, then one attention_merge), against
// exact softmax attention in double on the same FP16 inputs.
TEST(BlockedAttention, MatchesExactAttentionAcrossKeyBlocks) {
  constexpr int64_t rows = 12, keys = 150, dh = 72, block = 64;
  const int64_t blocks = (keys + block - 1) / block;
  std::mt19937 rng(3);
  const auto q = random_halves(rng, rows * dh, 1.0);
  const auto k = random_halves(rng, keys * dh, 1.0);
  const auto v = random_halves(rng, keys * dh, 1.0);
  Sram m(machine());
  const uint32_t q_at = kBase, k_at = kBase + 0x4000, v_at = kBase + 0x10000, s_at = kBase + 0x20000,
                 state_at = kBase + 0x24000, values_at = kBase + 0x25000, merged_states_at = kBase + 0x40000,
                 out_at = kBase + 0x48000;
  store(m, q_at, q);
  store(m, k_at, k);
  store(m, v_at, v);
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t first = b * block, n = std::min(keys, first + block) - first;
    const auto kb = static_cast<uint32_t>(k_at + first * dh * 2), vb = static_cast<uint32_t>(v_at + first * dh * 2);
    const auto values = static_cast<uint32_t>(values_at + b * rows * dh * 2);
    kernel("gemm_fp16").execute({s_at, q_at, kb}, {rows, n, dh, 1, 16}, m);
    kernel("attention_softmax").execute({s_at, state_at, s_at}, {rows, n, dh}, m);
    kernel("gemm_fp16").execute({values, s_at, vb}, {rows, dh, n, 0, 16}, m);
    store(m, static_cast<uint32_t>(merged_states_at + b * rows * 8),
          kernels::read_fp32(m, state_at, rows * 2, "state"));
  }
  kernel("attention_merge").execute({out_at, values_at, merged_states_at}, {rows, dh, blocks}, m);
  const auto got = kernels::read_fp16(m, out_at, rows * dh, "out");

  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> w(keys);
    double top = -1e300, sum = 0;
    for (int64_t j = 0; j < keys; ++j) {
      double dot = 0;
      for (int64_t d = 0; d < dh; ++d) dot += value16(q[r * dh + d]) * value16(k[j * dh + d]);
      w[j] = dot / std::sqrt(double(dh));
      top = std::max(top, w[j]);
    }
    for (auto& x : w) sum += (x = std::exp(x - top));
    for (int64_t d = 0; d < dh; ++d) {
      double exact = 0;
      for (int64_t j = 0; j < keys; ++j) exact += w[j] / sum * value16(v[j * dh + d]);
      worst = std::max(worst, std::abs(value16(got[r * dh + d]) - exact));
    }
  }
  // FP16 scores, weights and block products: a few FP16 ulps of values of size about 0.1-1.
  EXPECT_LT(worst, 4e-3);
}

// --- checks and cycles ------------------------------------------------------------------------

TEST(AttentionKernels, ChecksNameTheScalarAndTheLimit) {
  EXPECT_EQ(check("attention_softmax", 3, {105, 64, 72}), "");
  EXPECT_EQ(check("attention_softmax", 3, {0, 64, 72}),
            "attention_softmax: scalars[0] rows = 0 (expected 1 to 638976)");
  EXPECT_EQ(check("attention_softmax", 3, {1000, 1000, 72}),
            "attention_softmax: s spans rows x columns x 2 = 2000000 bytes, more than SRAM's 638976");
  EXPECT_EQ(check("attention_merge", 3, {9, 72, 12}), "");
  EXPECT_EQ(check("attention_merge", 3, {9, 72, -1}), "attention_merge: scalars[2] count = -1 (expected 1 to 638976)");
  EXPECT_EQ(check("attention_merge", 3, {100, 200, 20}),
            "attention_merge: blocks span count x rows x width x 2 = 800000 bytes, more than SRAM's 638976");
  EXPECT_EQ(check("attention_merge", 2, {1, 1, 1}), "kernel attention_merge takes 3 operand(s), got 2");
}

// The cycle models recomputed from the written schedules' instruction counts
// (docs/kernels-attention.md): rows over six workers at one instruction every 6 cycles.
TEST(AttentionKernels, CyclesAreTheSlowestWorkersInstructionsPlusALaunch) {
  const auto stage = [](uint64_t rows, uint64_t columns) {
    return (rows + 5) / 6 * 6 * (10 * ((columns + 1) / 2) + 17) + 11;
  };
  // The merge: each row's 64-bit quads in p equal runs, rows x p units over the six workers,
  // p the best of 1 to 6.
  const auto merge = [](uint64_t rows, uint64_t width, uint64_t count) {
    const uint64_t quads = (width + 3) / 4;
    uint64_t best = ~uint64_t{0};
    for (uint64_t p = 1; p <= std::min<uint64_t>(quads, 6); ++p) {
      best = std::min(best, (rows * p + 5) / 6 * 6 * count * (13 * ((quads + p - 1) / p) + 12) + 11);
    }
    return best;
  };
  for (const auto& [rows, columns] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {6, 64}, {7, 64}, {105, 64}, {49, 25}}) {
    EXPECT_EQ(kernel("attention_softmax").cycles({rows, columns, 72}, machine()), stage(rows, columns));
  }
  EXPECT_EQ(kernel("attention_softmax").cycles({105, 64, 72}, machine()), 36407u);
  // SigLIP's full key blocks: 53 rows of 112 keys, 9 rounds of 56 pairs.
  EXPECT_EQ(kernel("attention_softmax").cycles({53, 112, 72}, machine()), 9u * 6 * (10 * 56 + 17) + 11);
  for (const auto& [rows, width, count] :
       std::vector<std::array<int64_t, 3>>{{1, 72, 1}, {9, 72, 12}, {6, 5, 3}, {8, 72, 7}, {12, 72, 3}}) {
    EXPECT_EQ(kernel("attention_merge").cycles({rows, width, count}, machine()), merge(rows, width, count));
  }
  // 9 rows of 72 values over 12 blocks: two runs of 9 quads a row, 18 units, 3 rounds (whole
  // rows: 2 rounds of 18 quads, 35,435 cycles).
  EXPECT_EQ(kernel("attention_merge").cycles({9, 72, 12}, machine()), 3u * 6 * 12 * (13 * 9 + 12) + 11);
  // SigLIP's share, 8 rows over 7 blocks: three runs a row, 24 units, 4 rounds.
  EXPECT_EQ(kernel("attention_merge").cycles({8, 72, 7}, machine()), 4u * 6 * 7 * (13 * 6 + 12) + 11);
  // 12 rows fill the workers twice: whole rows.
  EXPECT_EQ(kernel("attention_merge").cycles({12, 72, 3}, machine()), 2u * 6 * 3 * (13 * 18 + 12) + 11);
}

}  // namespace
}  // namespace lockstep::model
