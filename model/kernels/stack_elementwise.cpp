// The IPU21 stack's element-wise kernels by symbol (IPU21-KERNELS.md 7, 8, 14.6; names and
// register ABI in arch/stack_kernels.hpp). Output $m2 = operands[0], inputs from $m3, then the
// scalars. Every input is read before the output is written, so the output may alias an input.
// Rounding is nearest even everywhere (K decisions); cycles are the planner's formulas [S].
//
// `ipu_stack_reduce_sum_f16` (7): [out, first partial, remote partials packed back to back],
// scalars [remote count (may be 0), N (a multiple of 8)]. Per element acc = first, then for p
// in order acc = fl16(acc + remote_p) (arch::fp16_add: a NaN result is the positive 0x7e00;
// with no remote partial the first is copied bit for bit). Cycles (7, 14.8: one epoch,
// count + 1 partials of 2N bytes at 1 byte/cycle): (count + 1) x 2N + 11.
//
// `ipu_stack_gelu_tanh_approx_f16` (8): [out, in], scalars [elements, even]. The nine FP16
// steps of 8, each rounded to FP16: t = x*x; t = t*x; t = beta*t (0x29b9); t = x+t;
// t = alpha*t (0x3a62); t = tanh16(t) = fl16(tanh(t) in double) (K decisions); t = 1+t;
// t = 0.5*t; y = x*t. The same function as Lockstep's `gelu` (model/kernels/gelu.cpp), a
// 65,536-entry table built once (model/kernels/gelu_table.hpp). NaN results are 0x7e00. Cycles
// (8, 11.4): 10e + 11.
//
// `ipu_stack_add_f16` / `ipu_stack_add_f32` (14.6): [out, left, right], scalars [elements,
// left stride, right stride]; the signature admits only strides 0 (no broadcast). out[i] =
// fl16(left[i] + right[i]) (arch::fp16_add, NaN 0x7e00) or fl32(left[i] + right[i]) (the
// FPU's float sum in the default environment: nearest even, subnormals kept), a NaN result
// being the positive quiet 0x7fc00000 [decision: as FP16 arithmetic's positive 0x7e00,
// docs/numerics.md; its FP32 form, docs/kernels-gemm.md]. Cycles (11.4, 14.8): ceil(e/16) + 11.
//
// `ipu_stack_cast_{f16_f32|f32_f16|f8_f16|f8_f32|f16_f8|f32_f8|identity}` (14.6): [out, in],
// scalars [elements]. F16 -> F32 exact (arch::fp16_to_float: a NaN keeps sign and payload,
// made quiet); F32 -> F16 one rounding (arch::fp16_from_float: overflow to +-inf, NaN 0x7e00
// with its sign). F8 is Lockstep's F143 (E4M3 FNUZ, docs/numerics.md) at scale exponent 0
// [decision: the cast's ABI has no scale register, 14.6, so a byte's value is decode(byte) x
// 2^0]: decoding is exact (0x80 -> FP16 0x7e00, FP32 0x7fc00000); encoding rounds once to
// nearest even, saturates finite values at +-240 and turns +-inf and NaN into 0x80
// (arch::f143_from_fp16 / f143_from_float). Identity copies `elements` bytes. Cycles (11.4,
// 14.8): ceil((in bytes + out bytes) / 8) + 11.
//
// Each kernel throws std::out_of_range before writing anything when an operand span leaves
// SRAM (empty spans included: the address itself must lie in SRAM, as validation requires).
#include <array>
#include <bit>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "arch/stack_kernels.hpp"
#include "model/kernels/gelu_table.hpp"
#include "model/kernels/stack_family.hpp"
#include "model/kernels/tensor_io.hpp"
#include "numerics/fp16.hpp"
#include "numerics/fp8.hpp"

namespace lockstep::model {
namespace {

using arch::StackElement;
using arch::StackKernel;
using arch::StackKernelFamily;
using kernels::Operands;
using kernels::Scalars;

constexpr uint64_t kLaunch = 11;                     // kernel launch (IPU21-KERNELS.md 11.1)
constexpr uint32_t kFp32CanonicalNaN = 0x7fc00000u;  // positive quiet, payload 0

uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }
uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t element_bytes(StackElement e) { return e == StackElement::F8 ? 1 : e == StackElement::F16 ? 2 : 4; }

// --- reduce_sum_f16 ---------------------------------------------------------------------------

void reduce_sum(const Operands& operands, const Scalars& s, Sram& memory) {
  const uint64_t count = u(s[0]), n = u(s[1]);
  kernels::require_span(memory, operands[0], 2 * n, "stack reduce_sum out");
  std::vector<uint16_t> acc = kernels::read_fp16(memory, operands[1], n, "stack reduce_sum first partial");
  const std::vector<uint16_t> remote = kernels::read_fp16(memory, operands[2], n * count, "stack reduce_sum remote");
  for (uint64_t p = 0; p < count; ++p) {
    const uint16_t* part = remote.data() + p * n;
    for (uint64_t i = 0; i < n; ++i) acc[i] = arch::fp16_add(acc[i], part[i]);
  }
  kernels::write_array(memory, operands[0], acc, "stack reduce_sum out");
}

// --- gelu_tanh_approx_f16 ---------------------------------------------------------------------

void gelu(const Operands& operands, const Scalars& s, Sram& memory) {
  const uint64_t count = u(s[0]);
  kernels::require_span(memory, operands[0], 2 * count, "stack gelu out");
  std::vector<uint16_t> values = kernels::read_fp16(memory, operands[1], count, "stack gelu in");
  const auto& table = kernels::gelu_table();
  for (uint16_t& v : values) v = table[v];
  kernels::write_array(memory, operands[0], values, "stack gelu out");
}

// --- add_f16 / add_f32 ------------------------------------------------------------------------

uint32_t add32(uint32_t a, uint32_t b) {
  const float sum = std::bit_cast<float>(a) + std::bit_cast<float>(b);
  return std::isnan(sum) ? kFp32CanonicalNaN : std::bit_cast<uint32_t>(sum);
}

// T: the element's raw bits (FP32 as uint32_t, so NaN payloads travel untouched).
template <typename T, typename Add>
void add(const Operands& operands, const Scalars& s, Sram& memory, Add op) {
  const uint64_t count = u(s[0]);
  kernels::require_span(memory, operands[0], sizeof(T) * count, "stack add out");
  std::vector<T> left = kernels::read_array<T>(memory, operands[1], count, "stack add left");
  const std::vector<T> right = kernels::read_array<T>(memory, operands[2], count, "stack add right");
  for (uint64_t i = 0; i < count; ++i) left[i] = op(left[i], right[i]);
  kernels::write_array(memory, operands[0], left, "stack add out");
}

// --- cast -------------------------------------------------------------------------------------

template <typename In, typename Out, typename Convert>
void convert(const Operands& operands, uint64_t count, Sram& memory, Convert fn) {
  kernels::require_span(memory, operands[0], sizeof(Out) * count, "stack cast out");
  const std::vector<In> in = kernels::read_array<In>(memory, operands[1], count, "stack cast in");
  std::vector<Out> out(count);
  for (uint64_t i = 0; i < count; ++i) out[i] = fn(in[i]);
  kernels::write_array(memory, operands[0], out, "stack cast out");
}

// F143 at scale 0 decoded to FP32 bits; 0x80 -> 0x7fc00000.
const std::array<uint32_t, 256>& f8_to_f32_table() {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    const std::array<float, 256> values = arch::f143_float_table(0);
    for (size_t c = 0; c < 256; ++c) t[c] = std::bit_cast<uint32_t>(values[c]);
    t[arch::kF143NaN] = kFp32CanonicalNaN;
    return t;
  }();
  return table;
}

void cast(const StackKernel& k, const Operands& operands, const Scalars& s, Sram& memory) {
  const uint64_t n = u(s[0]);
  using E = StackElement;
  if (k.identity) {
    return convert<uint8_t, uint8_t>(operands, n, memory, [](uint8_t b) { return b; });
  }
  if (k.from == E::F16 && k.to == E::F32) {
    return convert<uint16_t, uint32_t>(operands, n, memory,
                                       [](uint16_t h) { return std::bit_cast<uint32_t>(arch::fp16_to_float(h)); });
  }
  if (k.from == E::F32 && k.to == E::F16) {
    return convert<uint32_t, uint16_t>(operands, n, memory,
                                       [](uint32_t x) { return arch::fp16_from_float(std::bit_cast<float>(x)); });
  }
  if (k.from == E::F8 && k.to == E::F16) {
    static const std::array<uint16_t, 256> table = arch::f143_fp16_table(0);
    return convert<uint8_t, uint16_t>(operands, n, memory, [](uint8_t c) { return table[c]; });
  }
  if (k.from == E::F8 && k.to == E::F32) {
    return convert<uint8_t, uint32_t>(operands, n, memory, [](uint8_t c) { return f8_to_f32_table()[c]; });
  }
  if (k.from == E::F16 && k.to == E::F8) {
    return convert<uint16_t, uint8_t>(operands, n, memory, [](uint16_t h) { return arch::f143_from_fp16(h, 0); });
  }
  convert<uint32_t, uint8_t>(operands, n, memory,
                             [](uint32_t x) { return arch::f143_from_float(std::bit_cast<float>(x), 0); });
}

// --- definitions ------------------------------------------------------------------------------

void execute(const std::string&, const StackKernel& k, const Operands& operands, const Scalars& s, Sram& memory) {
  switch (k.family) {
    case StackKernelFamily::ReduceSumF16:
      return reduce_sum(operands, s, memory);
    case StackKernelFamily::GeluF16:
      return gelu(operands, s, memory);
    case StackKernelFamily::AddF16:
      return add<uint16_t>(operands, s, memory, arch::fp16_add);
    case StackKernelFamily::AddF32:
      return add<uint32_t>(operands, s, memory, add32);
    default:
      return cast(k, operands, s, memory);
  }
}

uint64_t cycles(const StackKernel& k, const Scalars& s, const arch::MachineDescription&) {
  switch (k.family) {
    case StackKernelFamily::ReduceSumF16:
      return (u(s[0]) + 1) * 2 * u(s[1]) + kLaunch;
    case StackKernelFamily::GeluF16:
      return 10 * u(s[0]) + kLaunch;
    case StackKernelFamily::AddF16:
    case StackKernelFamily::AddF32:
      return ceil_div(u(s[0]), 16) + kLaunch;
    default: {
      const uint64_t per_element = k.identity ? 2 : element_bytes(k.from) + element_bytes(k.to);
      return ceil_div(u(s[0]) * per_element, 8) + kLaunch;
    }
  }
}

const kernels::StackFamilyRegistration registration{
    {{StackKernelFamily::ReduceSumF16, StackKernelFamily::GeluF16, StackKernelFamily::AddF16, StackKernelFamily::AddF32,
      StackKernelFamily::Cast},
     execute,
     cycles}};

}  // namespace
}  // namespace lockstep::model
