// The IPU21 stack's AMP GEMMs by symbol (IPU21-KERNELS.md 4, 5; names and shapes in
// arch/stack_kernels.hpp). One call: output $m2, left $m3, right $m4, no scalars.
//
// F16 (`ipu_stack_gemm_f16_*`): left AMP-Left [K/16][R][16], right the call's K x C slice
// streamed [C/16][K/16][16 columns][16 K], output AMP-Left [C/16][R][16]. Per row, column
// and 16-K micro-group: out = fl16(s + Pin) rounded once, s the 16 products (exact in FP32)
// summed in FP32 in K order, Pin = +0 for the first group of an init call, else the stored
// output: Lockstep's AMP step rule (docs/numerics.md), round-to-nearest-even where the chip
// rounds stochastically. Cycles: the planner's call formula (11.2) [S],
//   294 + (K/16) x (ceil(C x R / 4) + ceil((C/16) x G / 4)), G = 940 interleaved, else 1063.
//
// F32 (`ipu_stack_gemm_f32_*`, C = 64): left AMP-Left [K/8][R][8], right [4][K/8][16][8],
// output AMP Output (pair-permuted) [4][R][16]; init zeroes the output first. Per 8-K group:
// out = fl32(out + s), s = the 8 products each rounded to FP32, summed in FP32 in K order
// [decision: the 8-term step's internal order and width are unknown, 5]. Cycles (11.2) [S]:
//   294 + ceil(K/16) x (64 R + 2126).
#include <string>
#include <vector>

#include "arch/stack_kernels.hpp"
#include "model/kernels/amp_accumulate.hpp"
#include "model/kernels/stack_family.hpp"
#include "model/kernels/tensor_io.hpp"

namespace lockstep::model {
namespace {

using arch::StackKernel;
using arch::StackKernelFamily;

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

void gemm_f16(const StackKernel& g, const std::vector<uint32_t>& operands, Sram& memory) {
  const uint32_t rows = g.rows, k = g.k, columns = g.columns;
  kernels::require_span(memory, operands[1], 2ull * k * rows + 16, "stack gemm left");
  const std::vector<uint16_t> left = kernels::read_fp16(memory, operands[1], uint64_t{k} * rows, "stack gemm left");
  const std::vector<uint16_t> right =
      kernels::read_fp16(memory, operands[2], uint64_t{k} * columns, "stack gemm right");
  std::vector<uint16_t> out = kernels::read_fp16(memory, operands[0], uint64_t{columns} * rows, "stack gemm out");
  std::vector<float> l(left.size()), w(right.size());
  for (size_t i = 0; i < left.size(); ++i) l[i] = arch::fp16_to_float(left[i]);
  for (size_t i = 0; i < right.size(); ++i) w[i] = arch::fp16_to_float(right[i]);
  const uint32_t groups = k / 16;
  for (uint32_t cg = 0; cg < columns / 16; ++cg) {
    for (uint32_t kg = 0; kg < groups; ++kg) {
      const float* panel = w.data() + (size_t{cg} * groups + kg) * 256;  // [16 columns][16 K]
      for (uint32_t r = 0; r < rows; ++r) {
        const float* a = l.data() + arch::amp_left_index(r, kg * 16, rows, 16);
        uint16_t* o = out.data() + arch::amp_left_index(r, cg * 16, rows, 16);
        for (uint32_t n = 0; n < 16; ++n) {
          const float* b = panel + n * 16;
          float s = a[0] * b[0];
          for (uint32_t j = 1; j < 16; ++j) s = s + a[j] * b[j];
          const float partial = g.init && kg == 0 ? 0.0f : arch::fp16_to_float(o[n]);
          o[n] = kernels::amp::fp16_bits(kernels::amp::round_add(s, partial));
        }
      }
    }
  }
  kernels::write_array(memory, operands[0], out, "stack gemm out");
}

void gemm_f32(const StackKernel& g, const std::vector<uint32_t>& operands, Sram& memory) {
  const uint32_t rows = g.rows, k = g.k, columns = g.columns;
  kernels::require_span(memory, operands[1], 4ull * k * rows + 32, "stack gemm left");
  const std::vector<float> l = kernels::read_fp32(memory, operands[1], uint64_t{k} * rows, "stack gemm left");
  const std::vector<float> w = kernels::read_fp32(memory, operands[2], uint64_t{k} * columns, "stack gemm right");
  std::vector<float> out = kernels::read_fp32(memory, operands[0], uint64_t{columns} * rows, "stack gemm out");
  if (g.init) std::fill(out.begin(), out.end(), 0.0f);
  const uint32_t groups = k / 8;
  for (uint32_t cg = 0; cg < columns / 16; ++cg) {
    for (uint32_t kg = 0; kg < groups; ++kg) {
      const float* panel = w.data() + (size_t{cg} * groups + kg) * 128;  // [16 columns][8 K]
      for (uint32_t r = 0; r < rows; ++r) {
        const float* a = l.data() + arch::amp_left_index(r, kg * 8, rows, 8);
        for (uint32_t n = 0; n < 16; ++n) {
          const float* b = panel + n * 8;
          float s = a[0] * b[0];
          for (uint32_t j = 1; j < 8; ++j) {
            const float product = a[j] * b[j];
            s = s + product;
          }
          float& o = out[arch::amp_output_index(r, cg * 16 + n, rows)];
          o = o + s;
        }
      }
    }
  }
  kernels::write_array(memory, operands[0], out, "stack gemm out");
}

uint64_t cycles(const StackKernel& g, const kernels::Scalars&, const arch::MachineDescription&) {
  constexpr uint64_t kCallOverhead = 294;
  if (g.family == StackKernelFamily::GemmF32) {
    constexpr uint64_t kGroupCost = 2 * 1063;
    return kCallOverhead + ceil_div(g.k, 16) * (ceil_div(uint64_t{g.columns} * 4 * g.rows, 4) +
                                                ceil_div(uint64_t{g.columns / 16} * kGroupCost, 4));
  }
  const uint64_t group_cost = g.interleaved ? 940 : 1063;
  return kCallOverhead + uint64_t{g.k / 16} * (ceil_div(uint64_t{g.columns} * g.rows, 4) +
                                               ceil_div(uint64_t{g.columns / 16} * group_cost, 4));
}

void execute(const std::string&, const StackKernel& kernel, const kernels::Operands& operands, const kernels::Scalars&,
             Sram& memory) {
  if (kernel.family == StackKernelFamily::GemmF32) return gemm_f32(kernel, operands, memory);
  gemm_f16(kernel, operands, memory);
}

const kernels::StackFamilyRegistration registration{
    {{StackKernelFamily::GemmF16, StackKernelFamily::GemmF32}, execute, cycles}};

}  // namespace
}  // namespace lockstep::model
