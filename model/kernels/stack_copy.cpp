// The IPU21 stack's copy and fill helpers by symbol (IPU21-KERNELS.md 10, 14.1; IPU21-DEVICE.md
// 10; names and scalar ranges in arch/stack_kernels.hpp). Output $m2 = operands[0], source $m3
// = operands[1]; the scalars are the registers after the pointers, in order.
//
// `ipu_stack_copy_u64` [words per worker wpw, remainder workers rem]: copies 8 (6 wpw + rem)
//   bytes. `ipu_stack_copy_strided_u64` [words per row, rows, source stride, destination stride]:
//   row r copies 8 words bytes from src + r src_stride to dst + r dst_stride.
//   `ipu_stack_static_copy_u32` [words] (0 allowed) and `ipu_stack_static_copy_u16` [halfwords]
//   (the generic register form) copy 4 words / 2 halfwords bytes.
// Overlapping operands [decision]: every copy is modelled as its 8-, 4- or 2-byte words loaded
//   and stored one after another in ascending address order, the rows of a strided copy in
//   ascending order (as if the six workers ran one after another, worker 0 first; for copy_u64
//   the worker ranges are consecutive, so that is one ascending pass). Where source and
//   destination do not overlap this is the plain copy the hardware makes.
// `ipu_stack_fill_zero_u64` [wpw, rem]: writes 8 (6 wpw + rem) zero bytes at $m2.
// Alignment (14.1): copy_u64, copy_strided_u64 and fill_zero_u64 8 bytes, static_copy_u32 4,
//   static_copy_u16 2; a misaligned operand is refused with std::out_of_range (a hazard).
// Cycles (11.1, 14.8, the planner's local copy): ceil(bytes / 8) + 288 per copy call, bytes
//   the bytes copied (8 words rows for the strided copy); fill zero is the "padding clear"
//   formula ceil(bytes / 48) + 11.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/kernel_costs.hpp"
#include "arch/kernel_signatures.hpp"
#include "arch/stack_kernels.hpp"
#include "model/kernels/stack_family.hpp"
#include "model/kernels/tensor_io.hpp"

namespace lockstep::model {
namespace {

using arch::StackKernel;
using arch::StackKernelFamily;
using kernels::Scalars;

uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }
uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// A copy's shape: `rows` rows of `row_bytes`, moved in `word`-byte steps.
struct CopyShape {
  uint64_t row_bytes = 0, rows = 1, src_stride = 0, dst_stride = 0;
  uint32_t word = 8;
  uint64_t bytes() const { return row_bytes * rows; }
  uint64_t span(uint64_t stride) const { return rows == 0 ? 0 : (rows - 1) * stride + row_bytes; }
};

CopyShape shape(const StackKernel& k, const Scalars& s) {
  switch (k.family) {
    case StackKernelFamily::CopyStridedU64:
      return {8 * u(s[0]), u(s[1]), u(s[2]), u(s[3]), 8};
    case StackKernelFamily::CopyU32:
      return {4 * u(s[0]), 1, 0, 0, 4};
    case StackKernelFamily::CopyU16:
      return {2 * u(s[0]), 1, 0, 0, 2};
    default:  // copy_u64, fill_zero_u64
      return {8 * (6 * u(s[0]) + u(s[1])), 1, 0, 0, 8};
  }
}

void require_aligned(const std::string& name, uint32_t address, uint32_t alignment, const char* operand) {
  if (address % alignment == 0) return;
  throw std::out_of_range(name + ": " + operand + " " + std::to_string(address) + " is not " +
                          std::to_string(alignment) + "-byte aligned");
}

// Rows one after another, each in ascending words; a row whose source and destination
// overlap is moved word by word, so a later word may read what an earlier one stored.
void copy_rows(const std::string& name, const CopyShape& c, uint32_t dst, uint32_t src, Sram& memory) {
  kernels::require_span(memory, dst, c.span(c.dst_stride), "stack copy destination");
  kernels::require_span(memory, src, c.span(c.src_stride), "stack copy source");
  for (uint64_t r = 0; r < c.rows && c.row_bytes > 0; ++r) {
    const auto to = static_cast<uint32_t>(dst + r * c.dst_stride);
    const auto from = static_cast<uint32_t>(src + r * c.src_stride);
    const auto bytes = static_cast<uint32_t>(c.row_bytes);
    if (uint64_t{to} + bytes <= from || uint64_t{from} + bytes <= to) {
      memory.copy_from(memory, from, to, bytes);
      continue;
    }
    const uint32_t lo = std::min(to, from), hi = std::max(to, from) + bytes;
    std::vector<uint8_t> window = kernels::read_bytes(memory, lo, hi - lo, name.c_str());
    for (uint32_t i = 0; i < bytes; i += c.word) std::memmove(&window[to - lo + i], &window[from - lo + i], c.word);
    memory.write(to, bytes, window.data() + (to - lo));
  }
}

uint32_t alignment(StackKernelFamily family) {
  return family == StackKernelFamily::CopyU32 ? 4 : family == StackKernelFamily::CopyU16 ? 2 : 8;
}

void execute(const std::string& name, const StackKernel& k, const std::vector<uint32_t>& operands, const Scalars& s,
             Sram& memory) {
  kernels::require_stack_scalars(name, k, operands.size(), s);
  const CopyShape c = shape(k, s);
  require_aligned(name, operands[0], alignment(k.family), "operands[0] (destination)");
  if (k.family == StackKernelFamily::FillZeroU64) {
    kernels::require_span(memory, operands[0], c.bytes(), "stack fill zero destination");
    kernels::write_array(memory, operands[0], std::vector<uint8_t>(c.bytes(), 0), "stack fill zero destination");
    return;
  }
  require_aligned(name, operands[1], alignment(k.family), "operands[1] (source)");
  copy_rows(name, c, operands[0], operands[1], memory);
}

uint64_t cycles(const StackKernel& k, const Scalars& s, const arch::MachineDescription&) {
  constexpr uint64_t kClearBytesPerCycle = 48, kLaunch = 11;
  const uint64_t bytes = shape(k, s).bytes();
  if (k.family == StackKernelFamily::FillZeroU64) return ceil_div(bytes, kClearBytesPerCycle) + kLaunch;
  return arch::stack_local_copy_cycles(bytes);
}

const kernels::StackFamilyRegistration registration{
    {{StackKernelFamily::CopyU64, StackKernelFamily::CopyStridedU64, StackKernelFamily::CopyU32,
      StackKernelFamily::CopyU16, StackKernelFamily::FillZeroU64},
     execute,
     cycles}};

}  // namespace
}  // namespace lockstep::model
