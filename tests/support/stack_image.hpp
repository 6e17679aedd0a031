#pragma once
// Pieces of stack-layout images written word by word in tests (IPU21-DEVICE.md 5, 8, 12), and
// a plain reference of the kernel chain they run (IPU21-KERNELS.md 4, 7, 8): an F16 AMP GEMM
// (init, AMP-Left x Block-major), the GeLU, the F16 reduction of two remote partials.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "numerics/fp16.hpp"
#include "sim/device/application.hpp"

namespace lockstep::testing::stack_image {

inline uint32_t call(uint32_t reg, uint32_t target) { return 0x18000000u | reg << 20 | target >> 2; }
inline uint32_t setzi(uint32_t reg, uint32_t value) { return 0x19000000u | reg << 20 | value; }

inline arch::AppSegment segment(uint32_t address, const std::vector<uint16_t>& halves, uint32_t flags) {
  arch::AppSegment s;
  s.address = address;
  s.memory_size = static_cast<uint32_t>(halves.size() * 2);
  for (uint16_t h : halves) {
    s.data.push_back(static_cast<uint8_t>(h));
    s.data.push_back(static_cast<uint8_t>(h >> 8));
  }
  s.flags = flags;
  return s;
}

inline arch::AppSegment words(uint32_t address, const std::vector<uint32_t>& ws, uint32_t flags) {
  std::vector<uint16_t> halves;
  for (uint32_t w : ws) {
    halves.push_back(static_cast<uint16_t>(w));
    halves.push_back(static_cast<uint16_t>(w >> 16));
  }
  return segment(address, halves, flags);
}

// Small dyadic values: every sum below is exact, so the reference needs no rounding subtleties.
inline std::vector<uint16_t> random_halves(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> eighths(-16, 16);
  std::vector<uint16_t> out(n);
  for (auto& h : out) h = arch::fp16_from_double(eighths(rng) / 8.0);
  return out;
}

inline uint16_t fl16(double x) { return arch::fp16_from_double(x); }
inline double value(uint16_t h) { return arch::fp16_to_float(h); }

// IPU21-KERNELS.md section 8, step by step, with tanh16 = tanh rounded once (Lockstep's rule).
inline uint16_t gelu_reference(uint16_t x) {
  const double v = value(x);
  double t = value(fl16(v * v));
  t = value(fl16(t * v));
  t = value(fl16(value(0x29b9) * t));
  t = value(fl16(v + t));
  t = value(fl16(value(0x3a62) * t));
  t = value(fl16(std::tanh(t)));
  t = value(fl16(1.0 + t));
  t = value(fl16(0.5 * t));
  return fl16(v * t);
}

constexpr uint32_t kRows = 6, kK = 64, kColumns = 32, kElements = kRows * kColumns;
constexpr const char* kGemmSymbol = "ipu_stack_gemm_f16_init_large_rows_k64_c32_r4_r6";

struct KernelChain {
  std::vector<uint16_t> left, right, remote;
  std::vector<uint16_t> result;  // in AMP-Left order, as the GEMM writes
};

// reduce(gelu(left x right), remote partials 0 and 1), the operands drawn from `seed`.
inline KernelChain kernel_chain_reference(uint32_t seed = 1) {
  KernelChain e;
  e.left = random_halves(kK * kRows, seed);
  e.right = random_halves(kK * kColumns, seed + 1);
  e.remote = random_halves(2 * kElements, seed + 2);
  e.result.resize(kElements);
  for (uint32_t r = 0; r < kRows; ++r) {
    for (uint32_t c = 0; c < kColumns; ++c) {
      double acc = 0;  // init call: the first 16-K group starts from +0
      for (uint32_t kg = 0; kg < kK / 16; ++kg) {
        double s = 0;
        for (uint32_t j = 0; j < 16; ++j) {
          const uint32_t k = kg * 16 + j;
          const double l = value(e.left[(k / 16) * kRows * 16 + r * 16 + k % 16]);
          const double w = value(e.right[(c / 16) * (kK / 16) * 256 + (k / 16) * 256 + (c % 16) * 16 + k % 16]);
          s += l * w;
        }
        acc = value(fl16(s + acc));
      }
      const uint32_t at = (c / 16) * kRows * 16 + r * 16 + c % 16;  // AMP-Left
      double sum = value(gelu_reference(fl16(acc)));
      for (uint32_t p = 0; p < 2; ++p) sum = value(fl16(sum + value(e.remote[p * kElements + at])));
      e.result[at] = fl16(sum);
    }
  }
  return e;
}

}  // namespace lockstep::testing::stack_image
