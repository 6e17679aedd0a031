// reduce_sum: operands [out (FP16 [rows][columns]), parts ([parts][rows][columns], FP16 when
// part_bits = 16, FP32 when 32; part p at parts + p x rows x columns x part_bits / 8), bias
// (FP16 [columns])], scalars [parts, rows, columns, part_bits]. An optional fourth operand is
// part 0, read from its own place (K 7's first partial), and `parts` then holds parts 1 ..
// parts-1 back to back.
// Element-wise, F16 adds in the listed order (IPU21-KERNELS.md 7), each rounded once from the
// exact sum (nearest even, amp_round.hpp round_add):
//   acc = fl16(parts[0]); for p = 1 .. parts-1: acc = fl16(acc + parts[p]);
//   out = fl16(acc + bias[c])
// A NaN result is the positive 0x7e00. All inputs are read before the output is written.
// Cycles [decision]: the written schedule of arch/kernel_costs.hpp (K 7's chunks of 8 halves
// over the six workers, 4 x parts + 6 instructions a chunk), not K 7's planner constant of one
// output byte a cycle, which is 3.5 to 4 times as much; docs/kernels-gemm.md gives the reason.
// Details: docs/kernels-gemm.md.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "arch/kernel_costs.hpp"
#include "model/kernel_registry.hpp"
#include "model/kernels/amp_round.hpp"
#include "model/kernels/tensor_io.hpp"
#include "numerics/fp16.hpp"

namespace lockstep::model {
namespace {

constexpr int64_t kSramBytes = 0x9c000;  // 624 KiB

std::string range(size_t i, const char* name, int64_t value) {
  if (value >= 1 && value <= kSramBytes) return "";
  return "reduce_sum: scalars[" + std::to_string(i) + "] " + name + " = " + std::to_string(value) + " outside [1, " +
         std::to_string(kSramBytes) + "]";
}

std::string check(const arch::KernelStep& step) {
  if (auto e = check_counts(step, step.operands.size() == 4 ? 4 : 3, 4); !e.empty()) return e;
  const auto& s = step.scalars;
  if (auto e = range(0, "parts", s[0]); !e.empty()) return e;
  if (auto e = range(1, "rows", s[1]); !e.empty()) return e;
  if (auto e = range(2, "columns", s[2]); !e.empty()) return e;
  if (s[3] != 16 && s[3] != 32) {
    return "reduce_sum: scalars[3] part_bits = " + std::to_string(s[3]) + " (expected 16 or 32)";
  }
  const int64_t part_bytes = s[1] * s[2] * s[3] / 8;
  if (part_bytes > kSramBytes || s[0] * part_bytes > kSramBytes) {
    return "reduce_sum: parts span parts x rows x columns x " + std::to_string(s[3] / 8) + " = " +
           std::to_string(s[0] * part_bytes) + " bytes, more than SRAM's " + std::to_string(kSramBytes);
  }
  return "";  // out (rows x columns x 2) and bias (columns x 2) are smaller than one part
}

// n values of a part as floats (FP16 widens exactly: the sums are those of the FP32 form).
template <typename T>
void widen(const T* from, float* to, size_t n, kernels::amp::Isa isa) {
  if constexpr (std::is_same_v<T, float>) {
    std::copy_n(from, n, to);
  } else {
    kernels::amp::to_float(from, to, n, isa);
  }
}

// The parts are read in place (part 0 from its own operand when there is one) and widened a
// block of elements at a time into this thread's scratch, where they stay in cache for the
// sums: widening them all first wrote and read again four bytes an element of every part,
// in fresh memory each call.
template <typename T>
void reduce_parts(const std::vector<uint32_t>& operands, uint32_t parts, size_t elements, uint32_t columns,
                  Sram& memory, kernels::amp::Isa isa) {
  const bool first_apart = operands.size() == 4;
  std::optional<kernels::InputArray<T>> first;
  if (first_apart) first.emplace(memory, operands[3], elements, "reduce_sum first part");
  const kernels::InputArray<T> rest(memory, operands[1], uint64_t{parts - (first_apart ? 1 : 0)} * elements,
                                    "reduce_sum parts");
  const kernels::InputArray<uint16_t> bias16(memory, operands[2], columns, "reduce_sum bias");
  // In place unless it overlaps a part or the bias: a block's sums land before the next block's
  // parts are read.
  const std::array<arch::SramRange, 3> inputs{rest.range(), bias16.range(), first ? first->range() : rest.range()};
  kernels::OutputArray<uint16_t> out(memory, operands[0], elements, inputs, "reduce_sum out");
  std::vector<float> bias_row(columns);
  kernels::amp::to_float(bias16.data(), bias_row.data(), columns, isa);
  const auto part = [&](uint32_t p) {
    return first_apart ? (p == 0 ? first->data() : rest.data() + (p - 1) * elements) : rest.data() + p * elements;
  };
  // About 256 KiB of floats a block, in whole vectors of 64 elements.
  const size_t block = std::max<size_t>(64, (size_t{65536} / parts) / 64 * 64);
  thread_local std::vector<float> widened, bias;
  widened.resize(parts * std::min(block, elements));
  bias.resize(std::min(block, elements));
  for (size_t i0 = 0; i0 < elements; i0 += block) {
    const size_t n = std::min(block, elements - i0);
    for (uint32_t p = 0; p < parts; ++p) widen(part(p) + i0, widened.data() + p * n, n, isa);
    for (size_t j = 0; j < n;) {  // the bias of each element, a row's columns at a time
      const size_t c = (i0 + j) % columns, take = std::min<size_t>(columns - c, n - j);
      std::copy_n(bias_row.data() + c, take, bias.data() + j);
      j += take;
    }
    kernels::amp::reduce(widened.data(), parts, n, bias.data(), out.data() + i0, isa);
  }
  out.commit();
}

void execute(const std::vector<uint32_t>& operands, const std::vector<int64_t>& scalars, Sram& memory) {
  const auto parts = static_cast<uint32_t>(scalars[0]);
  const auto rows = static_cast<uint32_t>(scalars[1]);
  const auto columns = static_cast<uint32_t>(scalars[2]);
  const size_t elements = size_t{rows} * columns;
  kernels::require_span(memory, operands[0], elements * 2, "reduce_sum out");
  const kernels::amp::Isa isa = kernels::amp::best_isa();
  if (scalars[3] == 32) {
    reduce_parts<float>(operands, parts, elements, columns, memory, isa);
  } else {
    reduce_parts<uint16_t>(operands, parts, elements, columns, memory, isa);
  }
}

uint64_t count(int64_t v) { return static_cast<uint64_t>(v < 0 ? 0 : v); }

uint64_t cycles(const std::vector<int64_t>& scalars, const arch::MachineDescription& machine) {
  if (scalars.size() < 3) return 0;
  return arch::reduce_sum_cycles(count(scalars[0]), count(scalars[1]), count(scalars[2]), machine);
}

std::vector<double> terms(const std::vector<int64_t>& scalars, const arch::MachineDescription& machine) {
  return arch::reduce_sum_terms(count(scalars[0]), count(scalars[1]), count(scalars[2]), machine);
}

const KernelRegistration registration{
    {"reduce_sum", check, execute, cycles, false,
     CostModel{{"instructions_per_part", "instructions_per_chunk", "launch"},
               {static_cast<double>(arch::kReduceSumSchedule.per_part),
                static_cast<double>(arch::kReduceSumSchedule.per_chunk), arch::kKernelLaunchCycles},
               terms}}};

}  // namespace
}  // namespace lockstep::model
