#pragma once
// The F16 AMP's round-once and the reduction built on it, shared by gemm_fp8, gemm_fp16 (through
// amp_accumulate.hpp) and reduce_sum (docs/kernels-gemm.md).
//
// Round-once: fl16(s + acc) for an FP32 s and an FP16 acc (held as a float), rounded once from
// the exact sum. TwoSum gives hi = fl32(s + acc) and the exact error lo; hi is turned into the
// round-to-odd value of the exact sum (a nearest-even hi with lo != 0 becomes its neighbour
// towards the exact sum when its last bit is even), and that is rounded to FP16, nearest even.
// Rounding to odd at 24 bits and then to nearest at 11 bits is one rounding to nearest at 11
// bits (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms
// using rounding to odd", IEEE TC 2008: it needs 2 extra bits, float has 13).
// The AVX-512 code takes the same round-to-odd value from the sum's directed roundings. The x86
// paths (chosen at run time from CPUID) and the portable path give the same bits.
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "numerics/fp16.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define LOCKSTEP_AMP_X86 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define LOCKSTEP_AMP_X86 0
#endif

namespace lockstep::model::kernels::amp {

// Avx512 uses AVX-512F for the GEMM blocks and the AVX2 code for everything else.
enum class Isa { Portable, Avx2, Avx512 };

#if LOCKSTEP_AMP_X86
// AVX2, FMA and F16C from CPUID, with the OS saving the YMM registers (XCR0 bits 1 and 2).
// (__builtin_cpu_supports cannot name F16C in every compiler.)
inline bool cpu_has_avx2_fma_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool fma = ecx & (1u << 12), osxsave = ecx & (1u << 27), avx = ecx & (1u << 28), f16c = ecx & (1u << 29);
  if (!(fma && osxsave && avx && f16c)) return false;
  unsigned xcr0 = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
  if ((xcr0 & 6u) != 6u) return false;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return ebx & (1u << 5);  // AVX2
}
// AVX-512F besides the above, with the OS saving the opmask and ZMM state (XCR0 bits 5-7).
inline bool cpu_has_avx512f() {
  if (!cpu_has_avx2_fma_f16c()) return false;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(ebx & (1u << 16))) return false;
  unsigned xcr0 = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
  return (xcr0 & 0xe6u) == 0xe6u;
}
#endif

inline bool isa_available(Isa isa) {
  if (isa == Isa::Portable) return true;
#if LOCKSTEP_AMP_X86
  static const bool avx2 = cpu_has_avx2_fma_f16c();
  static const bool avx512 = cpu_has_avx512f();
  return isa == Isa::Avx2 ? avx2 : avx512;
#else
  return false;
#endif
}
inline Isa best_isa() {
  return isa_available(Isa::Avx512) ? Isa::Avx512 : isa_available(Isa::Avx2) ? Isa::Avx2 : Isa::Portable;
}

// ---- round-once -------------------------------------------------------------------------

// fl16(s + acc), rounded once from the exact sum; acc an FP16 value (or any float: the method
// holds for every pair of floats). The result is an FP16 value as a float; a NaN stays some
// NaN (callers canonicalise when they store).
inline float round_add(float s, float acc) {
  const float hi = s + acc;
  const float bb = hi - s;
  const float lo = (s - (hi - bb)) + (acc - bb);
  uint32_t bits = std::bit_cast<uint32_t>(hi);
  if (lo < 0.0f || lo > 0.0f) {                                 // false for NaN, so an infinite or NaN hi is left alone
    if ((bits ^ std::bit_cast<uint32_t>(lo)) >> 31) bits -= 1;  // |exact| < |hi|: truncate
    bits |= 1;                                                  // inexact: odd
  }
  return arch::fp16_to_float(arch::fp16_from_float(std::bit_cast<float>(bits)));
}

// FP16 bits of an FP16-valued float; every NaN becomes the positive 0x7e00 (a NaN made by
// arithmetic, docs/numerics.md).
inline uint16_t fp16_bits(float v) {
  const uint16_t h = arch::fp16_from_float(v);
  return arch::fp16_is_nan(h) ? arch::kFp16CanonicalNaN : h;
}
// The same value as FP32 (exact); every NaN becomes fp16_to_float(0x7e00) = 0x7fc00000.
inline float fp32_value(float v) { return std::isnan(v) ? arch::fp16_to_float(arch::kFp16CanonicalNaN) : v; }

#if LOCKSTEP_AMP_X86
#define LOCKSTEP_AMP_AVX2 __attribute__((target("avx2,fma,f16c")))

LOCKSTEP_AMP_AVX2 inline __m256 round_add_avx2(__m256 s, __m256 acc) {
  const __m256 hi = _mm256_add_ps(s, acc);
  const __m256 bb = _mm256_sub_ps(hi, s);
  const __m256 lo = _mm256_add_ps(_mm256_sub_ps(s, _mm256_sub_ps(hi, bb)), _mm256_sub_ps(acc, bb));
  const __m256i inexact = _mm256_castps_si256(_mm256_cmp_ps(lo, _mm256_setzero_ps(), _CMP_NEQ_OQ));
  const __m256i hib = _mm256_castps_si256(hi);
  const __m256i differ = _mm256_srai_epi32(_mm256_xor_si256(hib, _mm256_castps_si256(lo)), 31);
  __m256i bits = _mm256_add_epi32(hib, _mm256_and_si256(inexact, differ));  // -1: truncate
  bits = _mm256_or_si256(bits, _mm256_srli_epi32(inexact, 31));             // odd
  return _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_castsi256_ps(bits), _MM_FROUND_TO_NEAREST_INT));
}

LOCKSTEP_AMP_AVX2 inline void round_add_array_avx2(const float* s, float* acc, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(acc + i, round_add_avx2(_mm256_loadu_ps(s + i), _mm256_loadu_ps(acc + i)));
  }
  for (; i < n; ++i) acc[i] = round_add(s[i], acc[i]);
}

LOCKSTEP_AMP_AVX2 inline void fp16_bits_array_avx2(const float* v, uint16_t* out, size_t n) {
  const __m128i nan = _mm_set1_epi16(static_cast<short>(arch::kFp16CanonicalNaN));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(v + i);
    const __m128i h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT);
    const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    // 32-bit masks to 16-bit lanes (all-ones or zero survive the signed pack).
    const __m128i mask = _mm_packs_epi32(_mm256_castsi256_si128(is_nan), _mm256_extracti128_si256(is_nan, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_blendv_epi8(h, nan, mask));
  }
  for (; i < n; ++i) out[i] = fp16_bits(v[i]);
}

#define LOCKSTEP_AMP_AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))
// GCC 12 warns that its own AVX-512 intrinsics' undefined pass-through operands may be used
// uninitialised (they are never read: the masks are full).
#if !defined(__clang__)
#define LOCKSTEP_AMP_AVX512_WARNINGS_OFF \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define LOCKSTEP_AMP_AVX512_WARNINGS_ON _Pragma("GCC diagnostic pop")
#else
#define LOCKSTEP_AMP_AVX512_WARNINGS_OFF
#define LOCKSTEP_AMP_AVX512_WARNINGS_ON
#endif
LOCKSTEP_AMP_AVX512_WARNINGS_OFF

// round_add on 16 lanes from the sum's directed roundings instead of TwoSum: the round-to-odd
// value is the sum rounded towards zero with its last bit set when the sum is inexact, which
// is when its roundings down and up differ (7 instructions where TwoSum's takes 13). An
// overflowing sum rounds towards zero to FLT_MAX (odd), which FP16 rounds to infinity as the
// nearest-even sum would; a NaN compares unordered and stays a NaN.
LOCKSTEP_AMP_AVX512 inline __m512 round_add_avx512(__m512 s, __m512 acc) {
  const __m512 toward_zero = _mm512_add_round_ps(s, acc, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m512 down = _mm512_add_round_ps(s, acc, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  const __m512 up = _mm512_add_round_ps(s, acc, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
  const __mmask16 inexact = _mm512_cmp_ps_mask(down, up, _CMP_NEQ_OQ);
  const __m512i bits = _mm512_castps_si512(toward_zero);
  const __m512i odd = _mm512_mask_or_epi32(bits, inexact, bits, _mm512_set1_epi32(1));
  return _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_castsi512_ps(odd), _MM_FROUND_TO_NEAREST_INT));
}

LOCKSTEP_AMP_AVX512 inline void round_add_array_avx512(const float* s, float* acc, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(acc + i, round_add_avx512(_mm512_loadu_ps(s + i), _mm512_loadu_ps(acc + i)));
  }
  round_add_array_avx2(s + i, acc + i, n - i);
}
LOCKSTEP_AMP_AVX512_WARNINGS_ON
#endif

// out[i] = fp16_bits(v[i]) for i < n.
inline void fp16_bits_array(const float* v, uint16_t* out, size_t n, Isa isa) {
#if LOCKSTEP_AMP_X86
  if (isa != Isa::Portable) return fp16_bits_array_avx2(v, out, n);
#endif
  (void)isa;
  for (size_t i = 0; i < n; ++i) out[i] = fp16_bits(v[i]);
}

// acc[i] = round_add(s[i], acc[i]) for i < n.
inline void round_add_array(const float* s, float* acc, size_t n, Isa isa) {
#if LOCKSTEP_AMP_X86
  if (isa == Isa::Avx512) return round_add_array_avx512(s, acc, n);
  if (isa != Isa::Portable) return round_add_array_avx2(s, acc, n);
#endif
  (void)isa;
  for (size_t i = 0; i < n; ++i) acc[i] = round_add(s[i], acc[i]);
}

// FP16 bits to floats (exact).
#if LOCKSTEP_AMP_X86
LOCKSTEP_AMP_AVX2 inline void to_float_avx2(const uint16_t* h, float* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
  }
  for (; i < n; ++i) out[i] = arch::fp16_to_float(h[i]);
}
#endif
inline void to_float(const uint16_t* h, float* out, size_t n, Isa isa) {
#if LOCKSTEP_AMP_X86
  if (isa != Isa::Portable) return to_float_avx2(h, out, n);
#endif
  (void)isa;
  for (size_t i = 0; i < n; ++i) out[i] = arch::fp16_to_float(h[i]);
}

// ---- reduction ---------------------------------------------------------------------------

// out[i] = FP16 bits of fl16(...fl16(fl16(parts[0][i]) + parts[1][i]) ... + bias[i]), every
// add rounded once (round_add); parts[p] at parts + p x elements; NaN -> 0x7e00. fl16(x) is
// round_add(x, -0): adding -0 changes no value, not even the sign of a zero.
#if LOCKSTEP_AMP_X86
// Elements `first` onwards (the AVX-512 code hands its remainder here).
LOCKSTEP_AMP_AVX2 inline void reduce_avx2_from(const float* parts, uint32_t count, size_t elements, size_t first,
                                               float* bias, uint16_t* out) {
  // Four independent vectors at a time (one round_add chain is latency-bound), then single
  // vectors; the sums go to the caller's scratch `bias`, converted to FP16 at the end.
  size_t i = first;
  for (; i + 32 <= elements; i += 32) {
    __m256 acc[4];
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) acc[v] = _mm256_set1_ps(-0.0f);
    for (uint32_t p = 0; p < count; ++p) {
      const float* part = parts + p * elements + i;
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) acc[v] = round_add_avx2(_mm256_loadu_ps(part + 8 * v), acc[v]);
    }
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      _mm256_storeu_ps(bias + i + 8 * v, round_add_avx2(_mm256_loadu_ps(bias + i + 8 * v), acc[v]));
    }
  }
  for (; i + 8 <= elements; i += 8) {
    __m256 acc = _mm256_set1_ps(-0.0f);
    for (uint32_t p = 0; p < count; ++p) acc = round_add_avx2(_mm256_loadu_ps(parts + p * elements + i), acc);
    _mm256_storeu_ps(bias + i, round_add_avx2(_mm256_loadu_ps(bias + i), acc));
  }
  fp16_bits_array_avx2(bias + first, out + first, i - first);
  for (; i < elements; ++i) {
    float acc = -0.0f;
    for (uint32_t p = 0; p < count; ++p) acc = round_add(parts[p * elements + i], acc);
    out[i] = fp16_bits(round_add(bias[i], acc));
  }
}

LOCKSTEP_AMP_AVX512_WARNINGS_OFF
// reduce_avx2 on 16 lanes: four independent vectors at a time, then the AVX2 code for the rest.
LOCKSTEP_AMP_AVX512 inline void reduce_avx512(const float* parts, uint32_t count, size_t elements, float* bias,
                                              uint16_t* out) {
  size_t i = 0;
  for (; i + 64 <= elements; i += 64) {
    __m512 acc[4];
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) acc[v] = _mm512_set1_ps(-0.0f);
    for (uint32_t p = 0; p < count; ++p) {
      const float* part = parts + p * elements + i;
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) acc[v] = round_add_avx512(_mm512_loadu_ps(part + 16 * v), acc[v]);
    }
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      _mm512_storeu_ps(bias + i + 16 * v, round_add_avx512(_mm512_loadu_ps(bias + i + 16 * v), acc[v]));
    }
  }
  fp16_bits_array_avx2(bias, out, i);
  reduce_avx2_from(parts, count, elements, i, bias, out);
}
LOCKSTEP_AMP_AVX512_WARNINGS_ON
#endif

// `bias` holds the bias of every element (elements floats) and is overwritten.
inline void reduce(const float* parts, uint32_t count, size_t elements, float* bias, uint16_t* out, Isa isa) {
#if LOCKSTEP_AMP_X86
  if (isa == Isa::Avx512) return reduce_avx512(parts, count, elements, bias, out);
  if (isa != Isa::Portable) return reduce_avx2_from(parts, count, elements, 0, bias, out);
#endif
  (void)isa;
  for (size_t i = 0; i < elements; ++i) {
    float acc = -0.0f;
    for (uint32_t p = 0; p < count; ++p) acc = round_add(parts[p * elements + i], acc);
    out[i] = fp16_bits(round_add(bias[i], acc));
  }
}

}  // namespace lockstep::model::kernels::amp
