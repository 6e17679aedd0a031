#include "arch/kernel_signatures.hpp"

#include <algorithm>

#include "arch/stack_kernels.hpp"

namespace lockstep::arch {
namespace {

using Scalars = std::vector<int64_t>;

std::string outside(size_t i, const char* name, int64_t value, int64_t min, int64_t max) {
  if (value >= min && value <= max) return "";
  return "scalars[" + std::to_string(i) + "]: " + name + " = " + std::to_string(value) + " outside [" +
         std::to_string(min) + ", " + std::to_string(max) + "]";
}

// Each named scalar in [1, sram_bytes]; the first failure wins.
std::string sizes(const Scalars& s, std::initializer_list<std::pair<size_t, const char*>> named, uint64_t sram) {
  for (const auto& [i, name] : named) {
    if (auto e = outside(i, name, s[i], 1, static_cast<int64_t>(sram)); !e.empty()) return e;
  }
  return "";
}

std::string bits(const Scalars& s, size_t i, const char* name) {
  if (s[i] == 16 || s[i] == 32) return "";
  return "scalars[" + std::to_string(i) + "]: " + name + " = " + std::to_string(s[i]) + " (expected 16 or 32)";
}

uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }

// The GEMM kernels' `_interleaved` variants (weights in interleaved memory, the AMP's cheaper
// column groups; arch/amp_cost.hpp) take the same operands and scalars; sorted by name.
std::vector<KernelSignature> with_interleaved_gemms(std::vector<KernelSignature> kernels) {
  for (const char* name : {"gemm_fp16", "gemm_fp8"}) {
    const auto it =
        std::find_if(kernels.begin(), kernels.end(), [&](const KernelSignature& k) { return k.name == name; });
    KernelSignature variant = *it;
    variant.name += "_interleaved";
    kernels.push_back(std::move(variant));
  }
  std::sort(kernels.begin(), kernels.end(),
            [](const KernelSignature& a, const KernelSignature& b) { return a.name < b.name; });
  return kernels;
}

const std::vector<KernelSignature>& table() {
  static const std::vector<KernelSignature> kernels = with_interleaved_gemms({
      {"add",
       {3},
       1,
       [](const Scalars& s, uint64_t m) {
         return sizes(s, {{0, "count"}}, m);
       },
       [](const Scalars& s, size_t) { return std::vector<uint64_t>(3, 2 * u(s[0])); }},
      {"attention_merge",
       {3},
       3,
       [](const Scalars& s, uint64_t m) {
         return sizes(s, {{0, "rows"}, {1, "width"}, {2, "count"}}, m);
       },
       [](const Scalars& s, size_t) {
         return std::vector<uint64_t>{2 * u(s[0] * s[1]), 2 * u(s[2] * s[0]) * u(s[1]), 8 * u(s[2] * s[0])};
       }},
      {"attention_softmax",
       {3},
       3,
       [](const Scalars& s, uint64_t m) {
         return sizes(s, {{0, "rows"}, {1, "columns"}, {2, "head_dim"}}, m);
       },
       [](const Scalars& s, size_t) {
         return std::vector<uint64_t>{2 * u(s[0] * s[1]), 8 * u(s[0]), 2 * u(s[0] * s[1])};
       }},
      {"cast",
       {2},
       3,
       [](const Scalars& s, uint64_t m) {
         if (auto e = sizes(s, {{0, "count"}}, m); !e.empty()) return e;
         if (auto e = bits(s, 1, "in_bits"); !e.empty()) return e;
         return bits(s, 2, "out_bits");
       },
       [](const Scalars& s, size_t) {
         return std::vector<uint64_t>{u(s[0] * s[2] / 8), u(s[0] * s[1] / 8)};
       }},
      {"checksum",
       {2},
       1,
       [](const Scalars& s, uint64_t m) {
         return sizes(s, {{0, "bytes"}}, m);
       },
       [](const Scalars& s, size_t) {
         return std::vector<uint64_t>{u(s[0]), 8};
       }},
      {"checksum_xxh3",
       {2},
       1,
       [](const Scalars& s, uint64_t m) {
         return sizes(s, {{0, "bytes"}}, m);
       },
       [](const Scalars& s, size_t) {
         return std::vector<uint64_t>{u(s[0]), 8};
       }},
      {"copy",
       {2},
       1,
       [](const Scalars& s, uint64_t m) {
         if (auto e = sizes(s, {{0, "bytes"}}, m); !e.empty()) return e;
         return s[0] % 4 == 0 ? std::string()
                              : "scalars[0]: bytes = " + std::to_string(s[0]) + " is not a multiple of 4";
       },
       [](const Scalars& s, size_t) { return std::vector<uint64_t>(2, u(s[0])); }},
      {"fill",
       {1},
       2,
       [](const Scalars& s, uint64_t m) {
         if (auto e = sizes(s, {{0, "bytes"}}, m); !e.empty()) return e;
         if (s[0] % 4 != 0) return "scalars[0]: bytes = " + std::to_string(s[0]) + " is not a multiple of 4";
         return outside(1, "word value", s[1], 0, UINT32_MAX);
       },
       [](const Scalars& s, size_t) { return std::vector<uint64_t>{u(s[0])}; }},
      {"gelu",
       {2},
       1,
       [](const Scalars& s, uint64_t m) {
         return sizes(s, {{0, "count"}}, m);
       },
       [](const Scalars& s, size_t) { return std::vector<uint64_t>(2, 2 * u(s[0])); }},
      {"gemm_fp16",
       {3},
       5,
       [](const Scalars& s, uint64_t m) {
         if (auto e = sizes(s, {{0, "rows"}, {1, "columns"}, {2, "inner"}}, m); !e.empty()) return e;
         if (auto e = outside(3, "b_transposed", s[3], 0, 1); !e.empty()) return e;
         return bits(s, 4, "out_bits");
       },
       [](const Scalars& s, size_t) {
         return std::vector<uint64_t>{u(s[0] * s[1]) * u(s[4]) / 8, 2 * u(s[0] * s[2]), 2 * u(s[2] * s[1])};
       }},
      {"gemm_fp8",
       {3},
       5,
       [](const Scalars& s, uint64_t m) {
         if (auto e = sizes(s, {{0, "rows"}, {1, "k"}, {2, "n"}}, m); !e.empty()) return e;
         if (auto e = outside(3, "weight_scale", s[3], -14, 8); !e.empty()) return e;
         return bits(s, 4, "out_bits");
       },
       [](const Scalars& s, size_t) {
         return std::vector<uint64_t>{u(s[0] * s[2]) * u(s[4]) / 8, 2 * u(s[0] * s[1]), u(s[1] * s[2])};
       },
       1u << 3},
      {"layernorm",
       {2, 4},
       2,
       [](const Scalars& s, uint64_t m) {
         return sizes(s, {{0, "rows"}, {1, "columns"}}, m);
       },
       [](const Scalars& s, size_t operands) {
         std::vector<uint64_t> b{2 * u(s[0] * s[1]), 2 * u(s[0] * s[1])};
         while (b.size() < operands) b.push_back(2 * u(s[1]));
         return b;
       }},
      {"reduce_sum",
       {3, 4},
       4,
       [](const Scalars& s, uint64_t m) {
         if (auto e = sizes(s, {{0, "parts"}, {1, "rows"}, {2, "columns"}}, m); !e.empty()) return e;
         return bits(s, 3, "part_bits");
       },
       [](const Scalars& s, size_t operands) {
         // With a fourth operand, that is the first part and `parts` holds the others (K 7).
         const uint64_t part = u(s[1]) * u(s[2]) * u(s[3]) / 8;
         std::vector<uint64_t> b{2 * u(s[1] * s[2]), (u(s[0]) - (operands == 4 ? 1 : 0)) * part, 2 * u(s[2])};
         if (operands == 4) b.push_back(part);
         return b;
       }},
      {"softmax",
       {2},
       3,
       [](const Scalars& s, uint64_t m) {
         return sizes(s, {{0, "rows"}, {1, "columns"}, {2, "head_dim"}}, m);
       },
       [](const Scalars& s, size_t) {
         return std::vector<uint64_t>{2 * u(s[0] * s[1]), 4 * u(s[0] * s[1])};
       }},
  });
  return kernels;
}

}  // namespace

const std::vector<KernelSignature>& kernel_signatures() { return table(); }

const KernelSignature* find_kernel_signature(const std::string& name) {
  for (const auto& k : table())
    if (name == k.name) return &k;
  return stack_kernel_signature(name);
}

std::string kernel_signature_names() {
  std::string names;
  for (const auto& k : table()) names += (names.empty() ? "" : ", ") + k.name;
  return names;
}

}  // namespace lockstep::arch
