// The IPU21 stack's AMP GEMMs by symbol (model/kernels/stack_gemm.cpp) against a plain
// reference written from IPU21-KERNELS.md 2, 4, 5 and 11.2: the layouts' index formulas
// written out again here, Lockstep's AMP step rule, the planner's call formula.
#include <gtest/gtest.h>

#include <random>

#include "arch/kernel_signatures.hpp"
#include "arch/machine.hpp"
#include "model/kernel_registry.hpp"
#include "model/sram.hpp"
#include "numerics/fp16.hpp"
#include "numerics/numerics_reference.hpp"
#include "tests/model/kernel_harness.hpp"

namespace lockstep::model {
namespace {

constexpr uint32_t kOut = 0x60000, kLeft = 0x70000, kRight = 0x80000;

using kernel_harness::machine;

template <typename T>
void put(Sram& m, uint32_t at, const std::vector<T>& v) {
  m.write(at, static_cast<uint32_t>(v.size() * sizeof(T)), reinterpret_cast<const uint8_t*>(v.data()));
}
template <typename T>
std::vector<T> get(const Sram& m, uint32_t at, size_t n) {
  std::vector<T> v(n);
  m.read(at, static_cast<uint32_t>(n * sizeof(T)), reinterpret_cast<uint8_t*>(v.data()));
  return v;
}

std::vector<uint16_t> random_f16(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-2.0, 2.0);
  std::vector<uint16_t> v(n);
  for (auto& h : v) h = arch::fp16_from_double(d(rng));
  return v;
}

struct F16Case {
  std::string symbol;
  bool init;
  uint32_t rows, k, columns, group_cost;
};

// IPU21-KERNELS.md 4.3 with Lockstep's rule: per 16-K group the products summed in FP32 in K
// order, then fl16(s + Pin) once; Pin = +0 for an init call's first group.
std::vector<uint16_t> reference_f16(const F16Case& c, const std::vector<uint16_t>& left,
                                    const std::vector<uint16_t>& right, std::vector<uint16_t> out) {
  const auto v = [](uint16_t h) { return arch::fp16_to_float(h); };
  for (uint32_t r = 0; r < c.rows; ++r) {
    for (uint32_t col = 0; col < c.columns; ++col) {
      const size_t o = (col / 16) * c.rows * 16 + r * 16 + col % 16;  // AMP-Left [C/16][R][16]
      for (uint32_t kg = 0; kg < c.k / 16; ++kg) {
        float s = 0;
        for (uint32_t j = 0; j < 16; ++j) {
          const uint32_t kk = kg * 16 + j;
          const float l = v(left[(kk / 16) * c.rows * 16 + r * 16 + kk % 16]);
          // [column group][K group][16 columns][16 K]
          const float w = v(right[(col / 16) * (c.k / 16) * 256 + (kk / 16) * 256 + (col % 16) * 16 + kk % 16]);
          s = j == 0 ? l * w : s + l * w;
        }
        const double partial = c.init && kg == 0 ? 0.0 : v(out[o]);
        out[o] = arch::reference::fp16_nearest_even(double{s} + partial);
      }
    }
  }
  return out;
}

class StackGemmF16 : public ::testing::TestWithParam<F16Case> {};

TEST_P(StackGemmF16, MatchesThePlainReferenceAndThePlannerCost) {
  const F16Case c = GetParam();
  const KernelDefinition* kernel = find_kernel(c.symbol);
  ASSERT_NE(kernel, nullptr);
  Sram m(machine());
  const auto left = random_f16(size_t{c.k} * c.rows, 1), right = random_f16(size_t{c.k} * c.columns, 2),
             before = random_f16(size_t{c.rows} * c.columns, 3);
  put(m, kLeft, left);
  put(m, kRight, right);
  put(m, kOut, before);
  kernel->execute({kOut, kLeft, kRight}, {}, m);
  EXPECT_EQ(get<uint16_t>(m, kOut, before.size()), reference_f16(c, left, right, before));
  // 11.2: 294 + (K/16)(ceil(C R / 4) + ceil((C/16) G / 4)).
  const uint64_t call = 294 + (c.k / 16) * ((c.columns * c.rows + 3) / 4 + ((c.columns / 16) * c.group_cost + 3) / 4);
  EXPECT_EQ(kernel->cycles({}, machine()), call);
  const auto* sig = arch::find_kernel_signature(c.symbol);
  ASSERT_NE(sig, nullptr);
  EXPECT_EQ(sig->operand_bytes({}, 3),
            (std::vector<uint64_t>{2ull * c.rows * c.columns, 2ull * c.rows * c.k + 16, 2ull * c.k * c.columns}));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, StackGemmF16,
    ::testing::Values(
        F16Case{"ipu_stack_gemm_f16_init_small_rows_k64_c64_r4_r6", true, 4, 64, 64, 1063},
        F16Case{"ipu_stack_gemm_f16_accumulate_large_rows_k64_c64_r4_r6", false, 6, 64, 64, 1063},
        F16Case{"ipu_stack_gemm_f16_init_large_rows_interleaved_k64_c128_r12_r13", true, 13, 64, 128, 940},
        F16Case{"ipu_stack_gemm_f16_accumulate_small_rows_interleaved_k32_c48_r7_r9", false, 7, 32, 48, 940},
        F16Case{"ipu_stack_gemm_f16_init_small_rows_k16_c16_r1_r1", true, 1, 16, 16, 1063}),
    [](const auto& info) {
      const F16Case& c = info.param;
      return std::string(c.init ? "Init" : "Accumulate") + "Rows" + std::to_string(c.rows) + "K" + std::to_string(c.k) +
             "C" + std::to_string(c.columns) + (c.group_cost == 940 ? "Interleaved" : "");
    });

// IPU21-KERNELS.md 5 with Lockstep's decision: per 8-K group the products rounded to FP32 and
// summed in K order, then out = fl32(out + s); the output in the pair-permuted AMP Output order.
TEST(StackGemmF32, InitAndAccumulateMatchThePlainReference) {
  constexpr uint32_t kRows = 5, kK = 64, kColumns = 64;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> left(kK * kRows), right(kK * kColumns), before(kRows * kColumns);
  for (auto* v : {&left, &right, &before})
    for (float& x : *v) x = d(rng);
  for (const bool init : {true, false}) {
    const std::string symbol =
        std::string("ipu_stack_gemm_f32_") + (init ? "init" : "accumulate") + "_large_rows_k64_c64_r3_r5";
    Sram m(machine());
    put(m, kLeft, left);
    put(m, kRight, right);
    put(m, kOut, before);
    find_kernel(symbol)->execute({kOut, kLeft, kRight}, {}, m);
    std::vector<float> expected = before;
    if (init) std::fill(expected.begin(), expected.end(), 0.0f);
    for (uint32_t col = 0; col < kColumns; ++col) {
      const uint32_t pair = (col % 16) / 2;
      for (uint32_t r = 0; r < kRows; ++r) {
        float& o = expected[(col / 16) * kRows * 16 + r * 16 + 2 * ((pair % 4) * 2 + pair / 4) + col % 2];
        for (uint32_t kg = 0; kg < kK / 8; ++kg) {
          float s = 0;
          for (uint32_t j = 0; j < 8; ++j) {
            const uint32_t kk = kg * 8 + j;
            const float product = left[(kk / 8) * kRows * 8 + r * 8 + kk % 8] *
                                  right[(col / 16) * (kK / 8) * 128 + (kk / 8) * 128 + (col % 16) * 8 + kk % 8];
            s = j == 0 ? product : s + product;
          }
          o = o + s;
        }
      }
    }
    EXPECT_EQ(get<float>(m, kOut, expected.size()), expected) << symbol;
    // 11.2 for F32: row cost 4 R, group cost 2 x 1063.
    EXPECT_EQ(find_kernel(symbol)->cycles({}, machine()), 294u + 4 * (64 * kRows + 2126)) << symbol;
  }
}

TEST(StackGemmNames, MalformedNamesAreNoKernel) {
  for (const char* name :
       {"ipu_stack_gemm_f16_init_small_rows_k60_c64_r4_r6", "ipu_stack_gemm_f16_init_small_rows_k64_c64_r4",
        "ipu_stack_gemm_f16_init_medium_rows_k64_c64_r4_r6", "ipu_stack_gemm_f32_init_small_rows_k64_c32_r4_r6",
        "ipu_stack_gemm_f16_init_small_rows_k64_c64_r4_r6_extra"}) {
    EXPECT_EQ(find_kernel(name), nullptr) << name;
    EXPECT_EQ(arch::find_kernel_signature(name), nullptr) << name;
  }
}

TEST(StackGemmNames, ALeftOperandWhoseTailLeavesSramThrows) {
  Sram m(machine());
  const std::string symbol = "ipu_stack_gemm_f16_init_small_rows_k16_c16_r1_r1";
  EXPECT_THROW(find_kernel(symbol)->execute({kOut, 0xe8000 - 32, kRight}, {}, m), std::out_of_range);
}

}  // namespace
}  // namespace lockstep::model
