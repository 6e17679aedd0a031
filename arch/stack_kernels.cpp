#include "arch/stack_kernels.hpp"

#include <charconv>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "arch/kernel_signatures.hpp"

namespace lockstep::arch {
namespace {

using Scalars = std::vector<int64_t>;

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Reads `_<letter><digits>` from `rest` at `pos`.
bool take_number(const std::string& rest, size_t& pos, char letter, uint32_t& value) {
  if (pos + 2 > rest.size() || rest[pos] != '_' || rest[pos + 1] != letter) return false;
  const char* first = rest.data() + pos + 2;
  const char* last = rest.data() + rest.size();
  const auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || end == first) return false;
  pos = static_cast<size_t>(end - rest.data());
  return true;
}

constexpr const char* kGemmF16 = "ipu_stack_gemm_f16_";
constexpr const char* kGemmF32 = "ipu_stack_gemm_f32_";
constexpr const char* kRearrange = "ipu_stack_rearrange_row_major_to_amp_f16";
constexpr const char* kUnpack = "ipu_stack_unpack_amp_to_row_major_f16";

// `{init|accumulate}_{small|large}_rows[_interleaved]_k{K}_c{C}_r{S}_r{L}` after the prefix.
std::optional<StackKernel> parse_gemm(const std::string& symbol, bool f32) {
  StackKernel g;
  g.family = f32 ? StackKernelFamily::GemmF32 : StackKernelFamily::GemmF16;
  std::string rest = symbol.substr(std::string(f32 ? kGemmF32 : kGemmF16).size());
  if (starts_with(rest, "init_")) {
    g.init = true;
    rest = rest.substr(5);
  } else if (starts_with(rest, "accumulate_")) {
    rest = rest.substr(11);
  } else {
    return std::nullopt;
  }
  bool small = true;
  if (starts_with(rest, "small_rows")) {
    rest = rest.substr(10);
  } else if (starts_with(rest, "large_rows")) {
    small = false;
    rest = rest.substr(10);
  } else {
    return std::nullopt;
  }
  if (!f32 && starts_with(rest, "_interleaved")) {
    g.interleaved = true;
    rest = rest.substr(12);
  }
  size_t pos = 0;
  uint32_t small_rows = 0, large_rows = 0;
  if (!take_number(rest, pos, 'k', g.k) || !take_number(rest, pos, 'c', g.columns) ||
      !take_number(rest, pos, 'r', small_rows) || !take_number(rest, pos, 'r', large_rows) || pos != rest.size()) {
    return std::nullopt;
  }
  g.rows = small ? small_rows : large_rows;
  const uint32_t micro = f32 ? 8 : 16;
  if (g.k == 0 || g.k % micro != 0 || g.columns == 0 || g.columns % 16 != 0 || g.rows == 0) return std::nullopt;
  if (f32 && g.columns != 64) return std::nullopt;
  return g;
}

// `_o{T}_r{LR}_p{PR}_c{LC}_p{PC}` after the prefix.
std::optional<StackKernel> parse_layout(const std::string& symbol, bool unpack) {
  StackKernel l;
  l.family = unpack ? StackKernelFamily::Unpack : StackKernelFamily::Rearrange;
  const std::string rest = symbol.substr(std::string(unpack ? kUnpack : kRearrange).size());
  size_t pos = 0;
  if (!take_number(rest, pos, 'o', l.order) || !take_number(rest, pos, 'r', l.logical_rows) ||
      !take_number(rest, pos, 'p', l.physical_rows) || !take_number(rest, pos, 'c', l.logical_columns) ||
      !take_number(rest, pos, 'p', l.physical_columns) || pos != rest.size()) {
    return std::nullopt;
  }
  if (l.order > (unpack ? 1u : 2u)) return std::nullopt;
  return l;
}

std::optional<StackKernel> parse_cast(const std::string& symbol) {
  static const std::map<std::string, std::pair<StackElement, StackElement>> casts = {
      {"f16_f32", {StackElement::F16, StackElement::F32}}, {"f32_f16", {StackElement::F32, StackElement::F16}},
      {"f8_f16", {StackElement::F8, StackElement::F16}},   {"f8_f32", {StackElement::F8, StackElement::F32}},
      {"f16_f8", {StackElement::F16, StackElement::F8}},   {"f32_f8", {StackElement::F32, StackElement::F8}}};
  StackKernel c;
  c.family = StackKernelFamily::Cast;
  const std::string rest = symbol.substr(std::string("ipu_stack_cast_").size());
  if (rest == "identity") {
    c.identity = true;
    return c;
  }
  const auto it = casts.find(rest);
  if (it == casts.end()) return std::nullopt;
  c.from = it->second.first;
  c.to = it->second.second;
  return c;
}

uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }

std::string outside(size_t i, const char* name, int64_t value, int64_t min, int64_t max) {
  if (value >= min && value <= max) return "";
  return "scalars[" + std::to_string(i) + "]: " + name + " = " + std::to_string(value) + " outside [" +
         std::to_string(min) + ", " + std::to_string(max) + "]";
}

std::string multiple(size_t i, const char* name, int64_t value, int64_t of) {
  if (value % of == 0) return "";
  return "scalars[" + std::to_string(i) + "]: " + name + " = " + std::to_string(value) + " is not a multiple of " +
         std::to_string(of);
}

uint32_t element_bytes(StackElement e) { return e == StackElement::F8 ? 1 : e == StackElement::F16 ? 2 : 4; }

// Scalar ranges of a kernel (the first failure, one line).
std::string check(const StackKernel& k, const Scalars& s, uint64_t sram) {
  const auto max = static_cast<int64_t>(sram);
  switch (k.family) {
    case StackKernelFamily::GemmF16:
    case StackKernelFamily::GemmF32:
      return "";
    case StackKernelFamily::ReduceSumF16:
      if (auto e = outside(0, "remote partials", s[0], 0, max / 16); !e.empty()) return e;
      if (auto e = outside(1, "elements", s[1], 8, max / 2); !e.empty()) return e;
      return multiple(1, "elements", s[1], 8);
    case StackKernelFamily::GeluF16:
      if (auto e = outside(0, "elements", s[0], 2, max / 2); !e.empty()) return e;
      return multiple(0, "elements", s[0], 2);
    case StackKernelFamily::CopyU64:
    case StackKernelFamily::FillZeroU64:
      if (auto e = outside(0, "words per worker", s[0], 0, max / 48); !e.empty()) return e;
      return outside(1, "remainder workers", s[1], 0, 5);
    case StackKernelFamily::CopyStridedU64:
      if (auto e = outside(0, "words per row", s[0], 1, max / 8); !e.empty()) return e;
      if (auto e = outside(1, "rows", s[1], 1, max / 8); !e.empty()) return e;
      if (auto e = outside(2, "source stride", s[2], 0, max); !e.empty()) return e;
      if (auto e = multiple(2, "source stride", s[2], 8); !e.empty()) return e;
      if (auto e = outside(3, "destination stride", s[3], 0, max); !e.empty()) return e;
      return multiple(3, "destination stride", s[3], 8);
    case StackKernelFamily::CopyU32:
      return outside(0, "words", s[0], 0, max / 4);
    case StackKernelFamily::CopyU16:
      return outside(0, "halfwords", s[0], 1, max / 2);
    case StackKernelFamily::Rearrange:
    case StackKernelFamily::Unpack: {
      // Rearrange: logical rows, physical rows, order, logical cols, physical cols; unpack:
      // matrices, logical rows, physical rows, logical cols, physical cols.
      const bool unpack = k.family == StackKernelFamily::Unpack;
      const size_t lr = unpack ? 1 : 0, pr = unpack ? 2 : 1, lc = 3, pc = 4;
      if (unpack) {
        if (auto e = outside(0, "matrices", s[0], 1, max / 2); !e.empty()) return e;
      } else if (s[2] != k.order) {
        return "scalars[2]: target order = " + std::to_string(s[2]) + " differs from the symbol's o" +
               std::to_string(k.order);
      }
      // A non-zero extent in the symbol is what the device uses; the register must agree.
      const std::tuple<size_t, uint32_t, const char*> fixed[] = {{lr, k.logical_rows, "logical rows"},
                                                                 {pr, k.physical_rows, "physical rows"},
                                                                 {lc, k.logical_columns, "logical columns"},
                                                                 {pc, k.physical_columns, "physical columns"}};
      for (const auto& [i, extent, name] : fixed) {
        if (extent != 0 && s[i] != extent) {
          return "scalars[" + std::to_string(i) + "]: " + name + " = " + std::to_string(s[i]) +
                 " differs from the symbol's " + std::to_string(extent);
        }
      }
      if (auto e = outside(pr, "physical rows", s[pr], 1, max / 2); !e.empty()) return e;
      if (auto e = outside(lr, "logical rows", s[lr], 0, s[pr]); !e.empty()) return e;
      if (auto e = outside(pc, "physical columns", s[pc], 1, max / 2); !e.empty()) return e;
      if (auto e = outside(lc, "logical columns", s[lc], 0, s[pc]); !e.empty()) return e;
      if (s[pr] * s[pc] > max / 2) return "scalars[" + std::to_string(pc) + "]: the matrix does not fit in SRAM";
      // Rows come in 16-row tiles for TransposedRight and TransposedLeft, 64-row blocks for
      // Block-major; columns always in 16-column panels.
      const int64_t rows_of = k.order == 0 ? 1 : !unpack && k.order == 2 ? 64 : 16;
      if (auto e = multiple(pr, "physical rows", s[pr], rows_of); !e.empty()) return e;
      return multiple(pc, "physical columns", s[pc], 16);
    }
    case StackKernelFamily::AddF16:
    case StackKernelFamily::AddF32:
      if (auto e = outside(0, "elements", s[0], 1, max / 2); !e.empty()) return e;
      // The stride scalars have no value provider in the stack (IPU21-KERNELS.md 14.6) and
      // their meaning is [unknown]: only 0 (no broadcast) is modelled.
      if (s[1] != 0) return "scalars[1]: left broadcast stride = " + std::to_string(s[1]) + " (only 0 is modelled)";
      if (s[2] != 0) return "scalars[2]: right broadcast stride = " + std::to_string(s[2]) + " (only 0 is modelled)";
      return "";
    case StackKernelFamily::Cast:
      return outside(0, "elements", s[0], 1, max);
    case StackKernelFamily::SampleCycle:
      return "";
  }
  return "";
}

std::vector<uint64_t> spans(const StackKernel& k, const Scalars& s) {
  switch (k.family) {
    case StackKernelFamily::GemmF16:  // output, left (+16-byte read-ahead tail), right
      return {2ull * k.columns * k.rows, 2ull * k.k * k.rows + 16, 2ull * k.k * k.columns};
    case StackKernelFamily::GemmF32:
      return {4ull * k.columns * k.rows, 4ull * k.k * k.rows + 32, 4ull * k.k * k.columns};
    case StackKernelFamily::ReduceSumF16:
      return {2 * u(s[1]), 2 * u(s[1]), 2 * u(s[1]) * u(s[0])};
    case StackKernelFamily::GeluF16:
      return {2 * u(s[0]), 2 * u(s[0])};
    case StackKernelFamily::CopyU64:
      return std::vector<uint64_t>(2, 8 * (6 * u(s[0]) + u(s[1])));
    case StackKernelFamily::FillZeroU64:
      return {8 * (6 * u(s[0]) + u(s[1]))};
    case StackKernelFamily::CopyStridedU64: {
      const uint64_t row = 8 * u(s[0]), rows = u(s[1]);
      return {(rows - 1) * u(s[3]) + row, (rows - 1) * u(s[2]) + row};
    }
    case StackKernelFamily::CopyU32:
      return std::vector<uint64_t>(2, 4 * u(s[0]));
    case StackKernelFamily::CopyU16:
      return std::vector<uint64_t>(2, 2 * u(s[0]));
    case StackKernelFamily::Rearrange:
      return {2 * u(s[1]) * u(s[4]), 2 * u(s[0]) * u(s[3])};
    case StackKernelFamily::Unpack:
      return std::vector<uint64_t>(2, 2 * u(s[0]) * u(s[2]) * u(s[4]));
    case StackKernelFamily::AddF16:
      return std::vector<uint64_t>(3, 2 * u(s[0]));
    case StackKernelFamily::AddF32:
      return std::vector<uint64_t>(3, 4 * u(s[0]));
    case StackKernelFamily::Cast: {
      const uint32_t in = k.identity ? 1 : element_bytes(k.from), out = k.identity ? 1 : element_bytes(k.to);
      return {out * u(s[0]), in * u(s[0])};
    }
    case StackKernelFamily::SampleCycle:
      return {4};
  }
  return {};
}

}  // namespace

size_t StackKernel::pointers() const {
  switch (family) {
    case StackKernelFamily::GemmF16:
    case StackKernelFamily::GemmF32:
    case StackKernelFamily::ReduceSumF16:
    case StackKernelFamily::AddF16:
    case StackKernelFamily::AddF32:
      return 3;
    case StackKernelFamily::FillZeroU64:
    case StackKernelFamily::SampleCycle:
      return 1;
    default:
      return 2;
  }
}

size_t StackKernel::scalars() const {
  switch (family) {
    case StackKernelFamily::GemmF16:
    case StackKernelFamily::GemmF32:
    case StackKernelFamily::SampleCycle:
      return 0;
    case StackKernelFamily::ReduceSumF16:
    case StackKernelFamily::CopyU64:
    case StackKernelFamily::FillZeroU64:
      return 2;
    case StackKernelFamily::CopyStridedU64:
      return 4;
    case StackKernelFamily::Rearrange:
    case StackKernelFamily::Unpack:
      return 5;
    case StackKernelFamily::AddF16:
    case StackKernelFamily::AddF32:
      return 3;
    default:
      return 1;
  }
}

std::optional<StackKernel> parse_stack_kernel(const std::string& symbol) {
  static const std::map<std::string, StackKernelFamily> fixed = {
      {"ipu_stack_reduce_sum_f16", StackKernelFamily::ReduceSumF16},
      {"ipu_stack_gelu_tanh_approx_f16", StackKernelFamily::GeluF16},
      {"ipu_stack_copy_u64", StackKernelFamily::CopyU64},
      {"ipu_stack_copy_strided_u64", StackKernelFamily::CopyStridedU64},
      {"ipu_stack_static_copy_u32", StackKernelFamily::CopyU32},
      {"ipu_stack_static_copy_u16", StackKernelFamily::CopyU16},
      {"ipu_stack_fill_zero_u64", StackKernelFamily::FillZeroU64},
      {"ipu_stack_add_f16", StackKernelFamily::AddF16},
      {"ipu_stack_add_f32", StackKernelFamily::AddF32},
      {"ipu_stack_static_sample_cycle", StackKernelFamily::SampleCycle}};
  if (const auto it = fixed.find(symbol); it != fixed.end()) {
    StackKernel k;
    k.family = it->second;
    return k;
  }
  if (starts_with(symbol, kGemmF16)) return parse_gemm(symbol, false);
  if (starts_with(symbol, kGemmF32)) return parse_gemm(symbol, true);
  if (starts_with(symbol, std::string(kRearrange) + "_")) return parse_layout(symbol, false);
  if (starts_with(symbol, std::string(kUnpack) + "_")) return parse_layout(symbol, true);
  if (starts_with(symbol, "ipu_stack_cast_")) return parse_cast(symbol);
  return std::nullopt;
}

std::string stack_kernel_refusal(const std::string& symbol) {
  if (!starts_with(symbol, "ipu_stack_") || parse_stack_kernel(symbol)) return "";
  if (symbol == "ipu_stack_gemm_f8_init" || symbol == "ipu_stack_gemm_f8_accumulate") {
    return symbol +
           " is declared without device code in the stack and its name carries no shape "
           "(IPU21-KERNELS.md "
           "14.6), so the model cannot size its operands";
  }
  if (starts_with(symbol, "ipu_stack_attention_softmax_") || starts_with(symbol, "ipu_stack_attention_merge_") ||
      starts_with(symbol, "ipu_stack_flash_attention_online_f16_")) {
    return symbol +
           ": the attention stage kernels are not modelled yet (their row and key counts are the "
           "image's "
           "compile-time constants, not in the symbol; IPU21-KERNELS.md 14.3)";
  }
  if (starts_with(symbol, "ipu_stack_unsupported_") || symbol == "ipu_stack_rearrange") {
    return symbol +
           " is declared \"Required\" without device code (IPU21-KERNELS.md 14.5, 14.6): no stack "
           "image "
           "can call it";
  }
  if (starts_with(symbol, kGemmF16) || starts_with(symbol, kGemmF32) || starts_with(symbol, kRearrange) ||
      starts_with(symbol, kUnpack) || starts_with(symbol, "ipu_stack_cast_")) {
    return symbol + ": not a well-formed name of that kernel family (IPU21-KERNELS.md 4, 5, 14.5, 14.6)";
  }
  return symbol + ": no kernel of the IPU21 stack by that name (IPU21-KERNELS.md 14)";
}

const KernelSignature* stack_kernel_signature(const std::string& symbol) {
  if (!starts_with(symbol, "ipu_stack_")) return nullptr;
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<KernelSignature>> made;
  const std::lock_guard lock(mutex);
  if (const auto it = made.find(symbol); it != made.end()) return it->second.get();
  const std::optional<StackKernel> kernel = parse_stack_kernel(symbol);
  std::unique_ptr<KernelSignature> signature;
  if (kernel) {
    const StackKernel k = *kernel;
    signature = std::make_unique<KernelSignature>(
        KernelSignature{symbol,
                        {k.pointers()},
                        k.scalars(),
                        [k](const Scalars& s, uint64_t sram) { return check(k, s, sram); },
                        [k](const Scalars& s, size_t) { return spans(k, s); }});
  }
  return made.emplace(symbol, std::move(signature)).first->second.get();
}

uint64_t amp_left_index(uint32_t r, uint32_t c, uint32_t rows, uint32_t micro) {
  return uint64_t{c / micro} * rows * micro + uint64_t{r} * micro + c % micro;
}

uint64_t transposed_right_index(uint32_t r, uint32_t c, uint32_t columns) {
  return (uint64_t{r / 16} * (columns / 16) + c / 16) * 256 + (r % 16) * 16 + c % 16;
}

uint64_t block_major_index(uint32_t r, uint32_t c, uint32_t columns) {
  constexpr uint32_t kRowBlock = 64, kColumnBlock = 16, kMicro = 16, kGroups = kRowBlock / kMicro;
  const uint64_t panel = uint64_t{r / kRowBlock} * (columns / kColumnBlock) * kGroups +
                         uint64_t{c / kColumnBlock} * kGroups + (r % kRowBlock) / kMicro;
  return panel * (kMicro * kColumnBlock) + (c % kColumnBlock) * kMicro + r % kMicro;
}

uint64_t amp_output_index(uint32_t r, uint32_t c, uint32_t rows) {
  const uint32_t pair = (c % 16) / 2, stored = (pair % 4) * 2 + pair / 4;
  return uint64_t{c / 16} * rows * 16 + uint64_t{r} * 16 + 2 * stored + c % 2;
}

}  // namespace lockstep::arch
