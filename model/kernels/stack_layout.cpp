// The IPU21 stack's F16 layout kernels by symbol (IPU21-KERNELS.md 2, 10, 14.5; IPU21-DEVICE.md
// 10; names and scalar ranges in arch/stack_kernels.hpp). Pure data movement: 16-bit values are
// moved unchanged, every physical element of the output is written, positions outside the
// logical extent as 0. Output $m2 = operands[0], input $m3 = operands[1].
//
// `ipu_stack_rearrange_row_major_to_amp_f16_o{T}_r{LR}_p{PR}_c{LC}_p{PC}`, scalars [logical
//   rows LR, physical rows PR, target order T, logical cols LC, physical cols PC]: the compact
//   row-major LR x LC input becomes a PR x PC output in order T: 0 AMP-Left (micro 16,
//   [PC/16][PR][16]), 1 TransposedRight (16 x 16 tiles, row-major inside), 2 Block-major{64,16}.
// `ipu_stack_unpack_amp_to_row_major_f16_o{S}_r{LR}_p{PR}_c{LC}_p{PC}`, scalars [matrices,
//   LR, PR, LC, PC]: per matrix m (base m PR PC elements in both buffers) the input in order S
//   (0 AMP Output, pair-permuted 16-column panels; 1 AMP TransposedLeft, (r, c) at
//   (r/16) PC 16 + c 16 + r%16) becomes a row-major PR x PC output.
// The registers carry the true extents; a symbol extent of 0 means "from the register" (the
//   specialization collapse). A non-zero symbol extent that differs from its register is refused
//   [decision: the device would use the symbol's, the validator's spans the register's].
// Input and output must not overlap (14.5: the stack keeps them in distinct memory elements);
//   overlapping byte ranges are refused with std::out_of_range (a hazard). Sharing a 16 KiB
//   memory element without overlapping is accepted.
// Cycles (14.8, the planner's pack/unpack formulas), e the output's physical elements of the
//   call [decision: the planner's "largest shard's elements" taken as this call's output]:
//   rearrange e = PR PC: order 0 4e + 11; order 1 3e + 11; order 2 with PR = 64 4e + 4096 (the
//   64 x 16 block-major pack, no launch term), other block-major 10e + 11. Unpack e = matrices
//   PR PC: 10e + 11.
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/kernel_signatures.hpp"
#include "arch/stack_kernels.hpp"
#include "model/kernels/stack_family.hpp"
#include "model/kernels/tensor_io.hpp"

namespace lockstep::model {
namespace {

using arch::StackKernel;
using arch::StackKernelFamily;
using kernels::Scalars;

// A call's extents, from the registers.
struct Extents {
  uint64_t matrices = 1;
  uint32_t logical_rows = 0, physical_rows = 0, logical_columns = 0, physical_columns = 0;
  uint64_t matrix_elements() const { return uint64_t{physical_rows} * physical_columns; }
};

Extents extents(const StackKernel& k, const Scalars& s) {
  const auto v = [&](size_t i) { return static_cast<uint32_t>(s[i]); };
  if (k.family == StackKernelFamily::Unpack) return {static_cast<uint64_t>(s[0]), v(1), v(2), v(3), v(4)};
  return {1, v(0), v(1), v(3), v(4)};
}

void require_spans(const std::string& name, uint32_t out, uint64_t out_bytes, uint32_t in, uint64_t in_bytes,
                   const Sram& memory) {
  kernels::require_span(memory, out, out_bytes, "stack layout output");
  kernels::require_span(memory, in, in_bytes, "stack layout input");
  if (out_bytes == 0 || in_bytes == 0 || out + out_bytes <= in || in + in_bytes <= out) return;
  throw std::out_of_range(name + ": output " + std::to_string(out) + "+" + std::to_string(out_bytes) +
                          " overlaps input " + std::to_string(in) + "+" + std::to_string(in_bytes) +
                          " (the stack needs them in distinct memory elements)");
}

uint64_t rearranged_index(uint32_t order, uint32_t r, uint32_t c, const Extents& x) {
  if (order == 0) return arch::amp_left_index(r, c, x.physical_rows, 16);
  if (order == 1) return arch::transposed_right_index(r, c, x.physical_columns);
  return arch::block_major_index(r, c, x.physical_columns);
}

void rearrange(const std::string& name, const StackKernel& k, const std::vector<uint32_t>& operands, const Scalars& s,
               Sram& memory) {
  const Extents x = extents(k, s);
  const uint64_t in_elements = uint64_t{x.logical_rows} * x.logical_columns;
  require_spans(name, operands[0], 2 * x.matrix_elements(), operands[1], 2 * in_elements, memory);
  const std::vector<uint16_t> in = kernels::read_fp16(memory, operands[1], in_elements, "stack rearrange input");
  std::vector<uint16_t> out(x.matrix_elements(), 0);
  for (uint32_t r = 0; r < x.logical_rows; ++r) {
    for (uint32_t c = 0; c < x.logical_columns; ++c) {
      out[rearranged_index(k.order, r, c, x)] = in[uint64_t{r} * x.logical_columns + c];
    }
  }
  kernels::write_array(memory, operands[0], out, "stack rearrange output");
}

// AMP TransposedLeft (IPU21-KERNELS.md 2, 14.5): the AMP-Left order of the transpose.
uint64_t transposed_left_index(uint32_t r, uint32_t c, uint32_t columns) {
  return uint64_t{r / 16} * columns * 16 + uint64_t{c} * 16 + r % 16;
}

void unpack(const std::string& name, const StackKernel& k, const std::vector<uint32_t>& operands, const Scalars& s,
            Sram& memory) {
  const Extents x = extents(k, s);
  const uint64_t elements = x.matrices * x.matrix_elements();
  require_spans(name, operands[0], 2 * elements, operands[1], 2 * elements, memory);
  const std::vector<uint16_t> in = kernels::read_fp16(memory, operands[1], elements, "stack unpack input");
  std::vector<uint16_t> out(elements, 0);
  for (uint64_t m = 0; m < x.matrices; ++m) {
    const uint64_t base = m * x.matrix_elements();
    for (uint32_t r = 0; r < x.logical_rows; ++r) {
      for (uint32_t c = 0; c < x.logical_columns; ++c) {
        const uint64_t from = k.order == 0 ? arch::amp_output_index(r, c, x.physical_rows)
                                           : transposed_left_index(r, c, x.physical_columns);
        out[base + uint64_t{r} * x.physical_columns + c] = in[base + from];
      }
    }
  }
  kernels::write_array(memory, operands[0], out, "stack unpack output");
}

uint64_t cycles(const StackKernel& k, const Scalars& s, const arch::MachineDescription&) {
  constexpr uint64_t kLaunch = 11, kBlockMajor64Setup = 4096;
  const Extents x = extents(k, s);
  const uint64_t e = x.matrices * x.matrix_elements();
  if (k.family == StackKernelFamily::Unpack) return 10 * e + kLaunch;
  if (k.order == 0) return 4 * e + kLaunch;
  if (k.order == 1) return 3 * e + kLaunch;
  if (x.physical_rows == 64) return 4 * e + kBlockMajor64Setup;
  return 10 * e + kLaunch;
}

// The scalar check covers the symbol's extents against the registers.
void execute(const std::string& name, const StackKernel& kernel, const kernels::Operands& operands, const Scalars& s,
             Sram& memory) {
  kernels::require_stack_scalars(name, kernel, operands.size(), s);
  if (kernel.family == StackKernelFamily::Unpack) return unpack(name, kernel, operands, s, memory);
  rearrange(name, kernel, operands, s, memory);
}

const kernels::StackFamilyRegistration registration{
    {{StackKernelFamily::Rearrange, StackKernelFamily::Unpack}, execute, cycles}};

}  // namespace
}  // namespace lockstep::model
