#pragma once
// The IPU21 stack's kernel symbols (IPU21-KERNELS.md sections 4-10 and 14, IPU21-DEVICE.md
// section 10): what a symbol's name fixes (GEMM block and row counts, layout orders and
// extents), which registers carry pointers and which scalars, and the bytes each operand
// spans. A stack image calls these by symbol; the model runs each as a kernel of that name
// (model/kernels/stack_*.cpp), with the planner's formula as its cost.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lockstep::arch {

struct KernelSignature;

enum class StackKernelFamily : uint8_t {
  GemmF16,         // ipu_stack_gemm_f16_{init|accumulate}_{small|large}_rows[_interleaved]_k{K}_c{C}_r{S}_r{L}
  GemmF32,         // ipu_stack_gemm_f32_{init|accumulate}_{small|large}_rows_k{K}_c64_r{S}_r{L}
  ReduceSumF16,    // ipu_stack_reduce_sum_f16
  GeluF16,         // ipu_stack_gelu_tanh_approx_f16
  CopyU64,         // ipu_stack_copy_u64
  CopyStridedU64,  // ipu_stack_copy_strided_u64
  CopyU32,         // ipu_stack_static_copy_u32
  CopyU16,         // ipu_stack_static_copy_u16 (the generic form: $m4 = halfwords)
  FillZeroU64,     // ipu_stack_fill_zero_u64
  Rearrange,       // ipu_stack_rearrange_row_major_to_amp_f16_o{T}_r{LR}_p{PR}_c{LC}_p{PC}
  Unpack,          // ipu_stack_unpack_amp_to_row_major_f16_o{S}_r{LR}_p{PR}_c{LC}_p{PC}
  AddF16,          // ipu_stack_add_f16 (declared only in the stack)
  AddF32,          // ipu_stack_add_f32 (declared only in the stack)
  Cast,            // ipu_stack_cast_{f16_f32|f32_f16|f8_f16|f8_f32|f16_f8|f32_f8|identity}
  SampleCycle,     // ipu_stack_static_sample_cycle: the runtime's cycle sample ($m2 destination)
};

// Element formats a cast converts between.
enum class StackElement : uint8_t { F8, F16, F32 };

struct StackKernel {
  StackKernelFamily family = StackKernelFamily::GemmF16;
  // GEMM: init or accumulate, the rows the variant was built for, K and C per call.
  bool init = false;
  bool interleaved = false;
  uint32_t rows = 0, k = 0, columns = 0;
  // Rearrange/unpack: the order and the suffix's extents (0: read from the register).
  uint32_t order = 0, logical_rows = 0, physical_rows = 0, logical_columns = 0, physical_columns = 0;
  // Cast: from and to (equal for cast_identity, which copies the output's bytes).
  StackElement from = StackElement::F16, to = StackElement::F16;
  bool identity = false;

  size_t pointers() const;  // $m2 (output) and the inputs from $m3
  size_t scalars() const;   // the registers after the pointers
};

// What the name of a stack kernel fixes, or nullopt when `symbol` is no kernel the model runs
// (see stack_kernel_refusal for why).
std::optional<StackKernel> parse_stack_kernel(const std::string& symbol);

// Why a symbol that looks like one of the stack's is not run by the model ("" when it is, or
// when it is not a stack name at all): declared without device code, constants the name does
// not carry, a malformed suffix.
std::string stack_kernel_refusal(const std::string& symbol);

// The model's signature of a stack kernel (operand and scalar counts, ranges, spans), made
// once per symbol; nullptr when parse_stack_kernel refuses it.
const KernelSignature* stack_kernel_signature(const std::string& symbol);

// Element index of (r, c) of a matrix in the stack's storage orders (IPU21-KERNELS.md 2,
// 14.5): AMP-Left with micro-width `micro` (16 for F16, 8 for F32) over `rows` rows;
// TransposedRight (16 x 16 tiles, row-major inside, rearrange order 1) over `columns`;
// Block-major{64,16} (rearrange order 2, the GEMM's right operand) over `columns`; the
// pair-permuted AMP Output over `rows`.
uint64_t amp_left_index(uint32_t r, uint32_t c, uint32_t rows, uint32_t micro);
uint64_t transposed_right_index(uint32_t r, uint32_t c, uint32_t columns);
uint64_t block_major_index(uint32_t r, uint32_t c, uint32_t columns);
uint64_t amp_output_index(uint32_t r, uint32_t c, uint32_t rows);

}  // namespace lockstep::arch
