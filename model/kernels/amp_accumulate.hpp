#pragma once
// The F16 AMP GEMM of gemm_fp8 and gemm_fp16 (docs/kernels-gemm.md), on the round-once of
// amp_round.hpp.
//
// GEMM: out[r][c] starts at FP16 +0; per AMP step (16 consecutive K values, the last step
// shorter when K % 16 != 0) the products a[r][k] * b[k][c] (exact in FP32) are summed in FP32
// in K order starting from the first product, and acc = fl16(step sum + acc) rounded once.
//
// Layouts (all scratch, never SRAM): A as floats [rows][k], taken in register blocks of up
// to kRowBlock rows (RowBlocks); B in panels of kPanel columns (the last possibly half
// width), each [k][width] floats with zero padding columns (Panels); accumulators per panel
// [rows][width] floats holding FP16 values. The x86 paths (AVX-512F blocks of up to 12 rows
// for full panels, AVX2 + FMA + F16C for the rest, chosen at run time from CPUID) and the
// portable path give the same bits: every operation is an IEEE
// operation whose result the rule fixes (the products are exact, so a fused multiply-add
// equals a multiply and an add).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "arch/amp_cost.hpp"
#include "model/kernels/amp_round.hpp"

namespace lockstep::model::kernels::amp {

inline constexpr uint32_t kStep = 16;     // K values per AMP step
inline constexpr uint32_t kPanel = 16;    // output columns per packed B panel
inline constexpr uint32_t kRowBlock = 6;  // rows per register block

// ---- GEMM -------------------------------------------------------------------------------

// Output columns in panels: kPanel wide, the last one kPanel / 2 wide when at most half a
// panel is left (so 36 columns cost 40, not 48). Panel i starts at column kPanel x i; its B
// slice [k][width] starts at float kPanel x i x k, its accumulators [rows][width] at
// kPanel x i x rows.
struct Panels {
  uint32_t count, last_width;
  explicit Panels(uint32_t n)
      : count((n + kPanel - 1) / kPanel),
        last_width(n % kPanel == 0            ? kPanel
                   : n % kPanel <= kPanel / 2 ? kPanel / 2
                                              : kPanel) {}
  uint32_t width(uint32_t i) const { return i + 1 == count ? last_width : kPanel; }
  size_t padded() const { return size_t{count - 1} * kPanel + last_width; }
};

// Rows are cut into ceil(rows / kRowBlock) register blocks of nearly equal height (8 rows are
// 4 + 4, not 6 + 2: a block needs enough independent sums to keep the FMA units busy).
struct RowBlocks {
  uint32_t count, base, extra;  // the first `extra` blocks have base + 1 rows
  explicit RowBlocks(uint32_t rows)
      : count((rows + kRowBlock - 1) / kRowBlock), base(rows / count), extra(rows % count) {}
  uint32_t begin(uint32_t i) const { return i * base + std::min(i, extra); }
  uint32_t size(uint32_t i) const { return base + (i < extra ? 1 : 0); }
};

// Scratch reused by every GEMM on this thread (grow-only, so the pages stay mapped).
struct Workspace {
  std::vector<float> a, b, acc;
};
inline Workspace& workspace() {
  thread_local Workspace w;
  return w;
}

// B packed into panels (`b` resized, padding columns zero). row(kk, c0, count, to) writes
// the floats of b[kk][c0 .. c0 + count) to `to`.
template <typename Row>
void pack_b(std::vector<float>& b, uint32_t k, uint32_t n, Row row) {
  const Panels panels(n);
  b.resize(panels.padded() * k);
  for (uint32_t i = 0; i < panels.count; ++i) {
    const uint32_t c0 = i * kPanel, width = panels.width(i), count = std::min(width, n - c0);
    float* to = b.data() + size_t{c0} * k;
    for (uint32_t kk = 0; kk < k; ++kk, to += width) {
      row(kk, c0, count, to);
      std::fill(to + count, to + width, 0.0f);
    }
  }
}

// One register block: R rows x 8V columns over all of K. a: R rows of A as floats, lda
// apart; bp: the panel [k][8V]; acc: [R][8V], holding the starting FP16 values.
template <int R, int V>
void block_portable(const float* a, size_t lda, const float* bp, uint32_t k, float* acc) {
  constexpr uint32_t W = 8 * V;
  for (uint32_t t = 0; t < k; t += kStep) {
    const uint32_t end = std::min(k, t + kStep);
    float s[R][W];
    for (int r = 0; r < R; ++r) {
      const float x = a[r * lda + t];
      for (uint32_t j = 0; j < W; ++j) s[r][j] = x * bp[size_t{t} * W + j];
    }
    for (uint32_t kk = t + 1; kk < end; ++kk) {
      for (int r = 0; r < R; ++r) {
        const float x = a[r * lda + kk];
        for (uint32_t j = 0; j < W; ++j) s[r][j] = s[r][j] + x * bp[size_t{kk} * W + j];
      }
    }
    for (int r = 0; r < R; ++r)
      for (uint32_t j = 0; j < W; ++j) acc[r * W + j] = round_add(s[r][j], acc[r * W + j]);
  }
}

#if LOCKSTEP_AMP_X86
template <int R, int V>
LOCKSTEP_AMP_AVX2 void block_avx2(const float* a, size_t lda, const float* bp, uint32_t k, float* acc) {
  constexpr uint32_t W = 8 * V;
  for (uint32_t t = 0; t < k; t += kStep) {
    const uint32_t end = std::min(k, t + kStep);
    __m256 s[R][V];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 x = _mm256_broadcast_ss(a + r * lda + t);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) s[r][v] = _mm256_mul_ps(x, _mm256_loadu_ps(bp + size_t{t} * W + 8 * v));
    }
    for (uint32_t kk = t + 1; kk < end; ++kk) {
      __m256 b[V];
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) b[v] = _mm256_loadu_ps(bp + size_t{kk} * W + 8 * v);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m256 x = _mm256_broadcast_ss(a + r * lda + kk);
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) s[r][v] = _mm256_fmadd_ps(x, b[v], s[r][v]);  // product exact
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) {
        float* to = acc + r * W + 8 * v;
        _mm256_storeu_ps(to, round_add_avx2(s[r][v], _mm256_loadu_ps(to)));
      }
    }
  }
}
#endif

#if LOCKSTEP_AMP_X86
LOCKSTEP_AMP_AVX512_WARNINGS_OFF

// block_avx2 for a full 16-column panel, one ZMM register a row, up to kWideRowBlock rows.
template <int R>
LOCKSTEP_AMP_AVX512 void block_avx512(const float* a, size_t lda, const float* bp, uint32_t k, float* acc) {
  for (uint32_t t = 0; t < k; t += kStep) {
    const uint32_t end = std::min(k, t + kStep);
    __m512 s[R];
    const __m512 b0 = _mm512_loadu_ps(bp + size_t{t} * kPanel);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) s[r] = _mm512_mul_ps(_mm512_set1_ps(a[r * lda + t]), b0);
    for (uint32_t kk = t + 1; kk < end; ++kk) {
      const __m512 b = _mm512_loadu_ps(bp + size_t{kk} * kPanel);
#pragma GCC unroll 12
      for (int r = 0; r < R; ++r) s[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r * lda + kk]), b, s[r]);  // product exact
    }
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      float* to = acc + r * kPanel;
      _mm512_storeu_ps(to, round_add_avx512(s[r], _mm512_loadu_ps(to)));
    }
  }
}
LOCKSTEP_AMP_AVX512_WARNINGS_ON
#endif

inline constexpr uint32_t kWideRowBlock = 12;  // rows per AVX-512 block: 12 independent sums

template <int R, int V>
void block(const float* a, size_t lda, const float* bp, uint32_t k, float* acc, Isa isa) {
#if LOCKSTEP_AMP_X86
  if (isa != Isa::Portable) return block_avx2<R, V>(a, lda, bp, k, acc);
#endif
  (void)isa;
  block_portable<R, V>(a, lda, bp, k, acc);
}

template <int V>
void block_rows(uint32_t rows, const float* a, size_t lda, const float* bp, uint32_t k, float* acc, Isa isa) {
  static_assert(kRowBlock == 6, "the dispatch below names every block height");
  switch (rows) {
    case 1:
      return block<1, V>(a, lda, bp, k, acc, isa);
    case 2:
      return block<2, V>(a, lda, bp, k, acc, isa);
    case 3:
      return block<3, V>(a, lda, bp, k, acc, isa);
    case 4:
      return block<4, V>(a, lda, bp, k, acc, isa);
    case 5:
      return block<5, V>(a, lda, bp, k, acc, isa);
    default:
      return block<6, V>(a, lda, bp, k, acc, isa);
  }
}

#if LOCKSTEP_AMP_X86
// Every row of a full panel in AVX-512 blocks of up to kWideRowBlock rows.
inline void wide_rows(uint32_t rows, const float* a, size_t lda, const float* bp, uint32_t k, float* out) {
  static_assert(kWideRowBlock == 12, "the dispatch below names every block height");
  using Block = void (*)(const float*, size_t, const float*, uint32_t, float*);
  static constexpr Block kBlocks[] = {block_avx512<1>, block_avx512<2>,  block_avx512<3>,  block_avx512<4>,
                                      block_avx512<5>, block_avx512<6>,  block_avx512<7>,  block_avx512<8>,
                                      block_avx512<9>, block_avx512<10>, block_avx512<11>, block_avx512<12>};
  for (uint32_t r0 = 0; r0 < rows; r0 += kWideRowBlock) {
    const uint32_t height = std::min(kWideRowBlock, rows - r0);
    kBlocks[height - 1](a + size_t{r0} * lda, lda, bp, k, out + size_t{r0} * kPanel);
  }
}
#endif

// Rows r0 .. r0 + height of the accumulators `acc` (panels of [rows][width]) from those rows
// of A (`a`, [height][k] floats) and packed B. Each row's sums are its own, so the bits do not
// depend on how rows are grouped.
inline void run_rows(float* acc, const float* a, const float* bp, uint32_t r0, uint32_t height, uint32_t rows,
                     uint32_t k, uint32_t n, Isa isa) {
  const Panels panels(n);
  const RowBlocks blocks(height);
  for (uint32_t i = 0; i < panels.count; ++i) {
    const uint32_t width = panels.width(i);
    const float* panel = bp + size_t{i} * kPanel * k;
    float* out = acc + size_t{i} * kPanel * rows + size_t{r0} * width;
#if LOCKSTEP_AMP_X86
    if (isa == Isa::Avx512 && width == kPanel) {
      wide_rows(height, a, k, panel, k, out);
      continue;
    }
#endif
    for (uint32_t j = 0; j < blocks.count; ++j) {
      const uint32_t b0 = blocks.begin(j);
      const float* ar = a + size_t{b0} * k;
      float* o = out + size_t{b0} * width;
      if (width == kPanel) {
        block_rows<2>(blocks.size(j), ar, k, panel, k, o, isa);
      } else {
        block_rows<1>(blocks.size(j), ar, k, panel, k, o, isa);
      }
    }
  }
}

// B^T (FP16 [n][k]) packed into panels as pack_b would pack B: 8 x 8 blocks transposed in
// registers on the x86 path.
#if LOCKSTEP_AMP_X86
LOCKSTEP_AMP_AVX2 inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// Columns c0 .. c0 + count (count <= 8) of B = rows of bt, K values kk0 .. kk0 + 8, into
// `to` (row stride `width` floats); missing columns are zero.
LOCKSTEP_AMP_AVX2 inline void transpose_block_avx2(const uint16_t* bt, uint32_t k, uint32_t c0, uint32_t count,
                                                   uint32_t kk0, float* to, uint32_t width) {
  __m256 r[8];
  for (uint32_t j = 0; j < 8; ++j) {
    r[j] = j < count ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bt + size_t{c0 + j} * k + kk0)))
                     : _mm256_setzero_ps();
  }
  transpose8(r);
  for (uint32_t q = 0; q < 8; ++q) _mm256_storeu_ps(to + size_t{kk0 + q} * width, r[q]);
}
#endif

inline void pack_b_transposed(std::vector<float>& b, const uint16_t* bt, uint32_t k, uint32_t n, Isa isa) {
  const Panels panels(n);
  b.resize(panels.padded() * k);
  for (uint32_t i = 0; i < panels.count; ++i) {
    const uint32_t c0 = i * kPanel, width = panels.width(i), count = std::min(width, n - c0);
    float* to = b.data() + size_t{c0} * k;
    uint32_t kk0 = 0;
#if LOCKSTEP_AMP_X86
    if (isa != Isa::Portable) {
      for (; kk0 + 8 <= k; kk0 += 8) {
        for (uint32_t g = 0; g < width; g += 8) {
          transpose_block_avx2(bt, k, c0 + g, count > g ? std::min(8u, count - g) : 0, kk0, to + g, width);
        }
      }
    }
#endif
    (void)isa;
    for (uint32_t j = 0; j < width; ++j) {
      for (uint32_t kk = kk0; kk < k; ++kk) {
        to[size_t{kk} * width + j] = j < count ? arch::fp16_to_float(bt[size_t{c0 + j} * k + kk]) : 0.0f;
      }
    }
  }
}

// The whole GEMM on this thread's workspace: a FP16 [rows][k]; pack(b) fills the packed B
// (pack_b, pack_b_transposed). Calls store(r, c0, values, count) with the FP16-valued floats
// of row r's columns c0 .. c0 + count, in row-major order (Fp16Rows, Fp32Rows below).
template <typename Pack, typename Store>
void gemm(const uint16_t* a, uint32_t rows, uint32_t k, uint32_t n, Pack pack, Store store, Isa isa) {
  if (rows == 0 || n == 0) return;  // check() refuses these; RowBlocks needs a row
  Workspace& w = workspace();
  pack(w.b);
  const Panels panels(n);
  w.acc.assign(panels.padded() * rows, 0.0f);  // FP16 +0
  // A is widened a few rows at a time, just before every panel reads those rows: the FP16
  // rows come from SRAM once, and their floats stay in cache.
  constexpr uint32_t kChunk = 2 * kWideRowBlock;
  w.a.resize(size_t{std::min(rows, kChunk)} * k);
  for (uint32_t r0 = 0; r0 < rows; r0 += kChunk) {
    const uint32_t height = std::min(kChunk, rows - r0);
    to_float(a + size_t{r0} * k, w.a.data(), size_t{height} * k, isa);
    if (r0 + height < rows) {  // the next rows come from memory while these are multiplied
      const auto* next = reinterpret_cast<const char*>(a + size_t{r0 + height} * k);
      const size_t bytes = size_t{std::min(kChunk, rows - r0 - height)} * k * sizeof(uint16_t);
      for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch(next + b);
    }
    run_rows(w.acc.data(), w.a.data(), w.b.data(), r0, height, rows, k, n, isa);
  }
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t i = 0; i < panels.count; ++i) {
      const uint32_t c0 = i * kPanel, width = panels.width(i);
      store(r, c0, w.acc.data() + size_t{c0} * rows + size_t{r} * width, std::min(width, n - c0));
    }
  }
}

// Stores for gemm(): the outputs as FP16 bits or as FP32 values (exact), row-major [rows][n],
// every NaN canonical (fp16_bits, fp32_value).
struct Fp16Rows {
  uint16_t* out;
  uint32_t n;
  Isa isa;
  void operator()(uint32_t r, uint32_t c0, const float* values, uint32_t count) const {
    fp16_bits_array(values, out + size_t{r} * n + c0, count, isa);
  }
};
struct Fp32Rows {
  float* out;
  uint32_t n;
  void operator()(uint32_t r, uint32_t c0, const float* values, uint32_t count) const {
    for (uint32_t j = 0; j < count; ++j) out[size_t{r} * n + c0 + j] = fp32_value(values[j]);
  }
};

// A x B for FP16 B: [k][n] row-major, or [n][k] when `transposed` (B^T given).
template <typename Store>
void gemm_fp16(const uint16_t* a, const uint16_t* b, uint32_t rows, uint32_t k, uint32_t n, bool transposed,
               Store store, Isa isa = best_isa()) {
  gemm(
      a, rows, k, n,
      [&](std::vector<float>& packed) {
        if (transposed) return pack_b_transposed(packed, b, k, n, isa);
        pack_b(packed, k, n, [&](uint32_t kk, uint32_t c0, uint32_t count, float* to) {
          to_float(b + size_t{kk} * n + c0, to, count, isa);
        });
      },
      store, isa);
}

// A x B for F143 B [k][n] bytes, decoded through `decode` (256 floats).
template <typename Store>
void gemm_f143(const uint16_t* a, const uint8_t* b, const float* decode, uint32_t rows, uint32_t k, uint32_t n,
               Store store, Isa isa = best_isa()) {
  gemm(
      a, rows, k, n,
      [&](std::vector<float>& packed) {
        pack_b(packed, k, n, [&](uint32_t kk, uint32_t c0, uint32_t count, float* to) {
          const uint8_t* from = b + size_t{kk} * n + c0;
          for (uint32_t j = 0; j < count; ++j) to[j] = decode[from[j]];
        });
      },
      store, isa);
}

// ---- cycles ------------------------------------------------------------------------------

// The F16 AMP GEMM cost of IPU21-KERNELS.md 11.2 [S] in one shape-specialised call
// (arch/amp_cost.hpp). Negative arguments count as 0 (check() refuses them; cycles must not fault).
inline uint64_t f16_amp_cycles(int64_t rows, int64_t k, int64_t columns,
                               uint64_t group_cost = arch::kAmpGroupCostStandard) {
  const auto count = [](int64_t v) { return static_cast<uint64_t>(v < 0 ? 0 : v); };
  return arch::amp_f16_gemm_cycles(count(rows), count(k), count(columns), group_cost);
}

}  // namespace lockstep::model::kernels::amp
