// The FP32 reference encoder: plain loops, blocked for the cache, oneTBB over output blocks.
// Shares no code with model/ (the kernels); docs/reference.md.
#include "workload/reference.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace lockstep::workload {
namespace {

// Four floats (GCC/Clang generic vectors: one SIMD register on any target). Each lane is an
// ordinary FP32 multiply and add, so vector and scalar code give the same bits.
typedef float Vec4 __attribute__((vector_size(16)));

inline Vec4 load4(const float* p) {
  Vec4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store4(float* p, Vec4 v) { std::memcpy(p, &v, sizeof v); }

// A row-major matrix view: element (r, c) at data[r * stride + c].
struct View {
  const float* data;
  size_t stride;
};

constexpr size_t kRowTile = 64;     // output rows per task
constexpr size_t kColumnTile = 64;  // output columns per task
constexpr size_t kDepthBlock = 256;  // reduction values per pass over a task's outputs

// out[r][j] += sum over k in [k0, k1), ascending, of a[r][k] * b[k][j], for r in [r0, r1),
// j in [c0, c1); one FP32 multiply and one FP32 add per term (GCC fuses them only where the
// build targets FMA), in k order for every element.
void accumulate_block(View a, View b, float* out, size_t ldc, size_t r0, size_t r1, size_t c0, size_t c1, size_t k0,
                      size_t k1) {
  size_t j = c0;
  for (; j + 8 <= c1; j += 8) {  // 4 rows x 8 columns in 8 vector accumulators
    size_t r = r0;
    for (; r + 4 <= r1; r += 4) {
      const float* a0 = a.data + r * a.stride;
      const float* a1 = a0 + a.stride;
      const float* a2 = a1 + a.stride;
      const float* a3 = a2 + a.stride;
      float* o0 = out + r * ldc + j;
      float* o1 = o0 + ldc;
      float* o2 = o1 + ldc;
      float* o3 = o2 + ldc;
      Vec4 p0 = load4(o0), q0 = load4(o0 + 4), p1 = load4(o1), q1 = load4(o1 + 4);
      Vec4 p2 = load4(o2), q2 = load4(o2 + 4), p3 = load4(o3), q3 = load4(o3 + 4);
      for (size_t k = k0; k < k1; ++k) {
        const float* bk = b.data + k * b.stride + j;
        const Vec4 u = load4(bk), v = load4(bk + 4);
        p0 = p0 + a0[k] * u;
        q0 = q0 + a0[k] * v;
        p1 = p1 + a1[k] * u;
        q1 = q1 + a1[k] * v;
        p2 = p2 + a2[k] * u;
        q2 = q2 + a2[k] * v;
        p3 = p3 + a3[k] * u;
        q3 = q3 + a3[k] * v;
      }
      store4(o0, p0), store4(o0 + 4, q0), store4(o1, p1), store4(o1 + 4, q1);
      store4(o2, p2), store4(o2 + 4, q2), store4(o3, p3), store4(o3 + 4, q3);
    }
    for (; r < r1; ++r) {
      const float* ar = a.data + r * a.stride;
      float* o = out + r * ldc + j;
      Vec4 p = load4(o), q = load4(o + 4);
      for (size_t k = k0; k < k1; ++k) {
        const float* bk = b.data + k * b.stride + j;
        p = p + ar[k] * load4(bk);
        q = q + ar[k] * load4(bk + 4);
      }
      store4(o, p), store4(o + 4, q);
    }
  }
  for (size_t r = r0; r < r1; ++r) {
    const float* ar = a.data + r * a.stride;
    for (size_t c = j; c < c1; ++c) {
      float acc = out[r * ldc + c];
      for (size_t k = k0; k < k1; ++k) acc = acc + ar[k] * b.data[k * b.stride + c];
      out[r * ldc + c] = acc;
    }
  }
}

// out[r][j] = (sum over k ascending of a[r][k] * b[k][j], from 0, in FP32) + bias[j] (when
// given), for r < rows, j < n, depth `depth`. Every output element is computed by one task in
// that order, so the bits do not depend on the threads.
void matmul(size_t rows, size_t depth, size_t n, View a, View b, const float* bias, float* out, size_t ldc) {
  const size_t row_tiles = (rows + kRowTile - 1) / kRowTile;
  const size_t column_tiles = (n + kColumnTile - 1) / kColumnTile;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, row_tiles * column_tiles), [&](const tbb::blocked_range<size_t>& range) {
    for (size_t t = range.begin(); t != range.end(); ++t) {
      const size_t r0 = (t / column_tiles) * kRowTile, r1 = std::min(rows, r0 + kRowTile);
      const size_t c0 = (t % column_tiles) * kColumnTile, c1 = std::min(n, c0 + kColumnTile);
      for (size_t r = r0; r < r1; ++r) std::fill(out + r * ldc + c0, out + r * ldc + c1, 0.0f);
      for (size_t k0 = 0; k0 < depth; k0 += kDepthBlock) {
        accumulate_block(a, b, out, ldc, r0, r1, c0, c1, k0, std::min(depth, k0 + kDepthBlock));
      }
      if (bias != nullptr) {
        for (size_t r = r0; r < r1; ++r) {
          for (size_t c = c0; c < c1; ++c) out[r * ldc + c] = out[r * ldc + c] + bias[c];
        }
      }
    }
  });
}

// A [rows, columns] activation; rows in parallel.
template <class F>
void for_rows(size_t rows, F&& f) {
  tbb::parallel_for(tbb::blocked_range<size_t>(0, rows), [&](const tbb::blocked_range<size_t>& range) {
    for (size_t r = range.begin(); r != range.end(); ++r) f(r);
  });
}

// y = (x - mean) * rstd * gamma + beta per row; mean and variance in FP32, two passes in column
// order, rstd = 1 / sqrt(var + 1e-6) in FP32.
void layernorm(const std::vector<float>& x, size_t rows, size_t columns, const std::vector<float>& gamma,
               const std::vector<float>& beta, std::vector<float>& y) {
  y.resize(rows * columns);
  for_rows(rows, [&](size_t r) {
    const float* in = x.data() + r * columns;
    float* out = y.data() + r * columns;
    float sum = 0;
    for (size_t c = 0; c < columns; ++c) sum += in[c];
    const float mean = sum / static_cast<float>(columns);
    float squares = 0;
    for (size_t c = 0; c < columns; ++c) {
      const float d = in[c] - mean;
      squares += d * d;
    }
    const float variance = squares / static_cast<float>(columns);
    const float rstd = 1.0f / std::sqrt(variance + 1e-6f);
    for (size_t c = 0; c < columns; ++c) out[c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
  });
}

// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) in FP32.
float gelu_tanh(float x) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

// ctx[:, h*d .. (h+1)*d) = softmax(Q_h K_h^T / sqrt(d)) V_h for every head h; qkv [rows, 3H]
// holds Q, K, V column blocks.
void attention(const std::vector<float>& qkv, size_t rows, size_t hidden, size_t heads, std::vector<float>& ctx) {
  const size_t d = hidden / heads, stride = 3 * hidden;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  ctx.assign(rows * hidden, 0.0f);
  std::vector<float> key_t(d * rows), scores(rows * rows);
  for (size_t h = 0; h < heads; ++h) {
    const float* q = qkv.data() + h * d;
    const float* k = qkv.data() + hidden + h * d;
    const float* v = qkv.data() + 2 * hidden + h * d;
    for (size_t j = 0; j < rows; ++j) {
      for (size_t c = 0; c < d; ++c) key_t[c * rows + j] = k[j * stride + c];
    }
    matmul(rows, d, rows, View{q, stride}, View{key_t.data(), rows}, nullptr, scores.data(), rows);
    for_rows(rows, [&](size_t i) {
      float* s = scores.data() + i * rows;
      float top = -INFINITY;
      for (size_t j = 0; j < rows; ++j) {
        s[j] = s[j] * scale;
        top = std::max(top, s[j]);
      }
      float sum = 0;
      for (size_t j = 0; j < rows; ++j) {
        s[j] = std::exp(s[j] - top);
        sum += s[j];
      }
      for (size_t j = 0; j < rows; ++j) s[j] = s[j] / sum;
    });
    matmul(rows, rows, d, View{scores.data(), rows}, View{v, stride}, nullptr, ctx.data() + h * d, hidden);
  }
}

void add_into(std::vector<float>& x, const std::vector<float>& y) {
  for_rows(x.size() / 1024 + 1, [&](size_t block) {
    const size_t end = std::min(x.size(), (block + 1) * 1024);
    for (size_t i = block * 1024; i < end; ++i) x[i] = x[i] + y[i];
  });
}

float max_abs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) {
    if (std::isnan(x)) return x;
    m = std::max(m, std::fabs(x));
  }
  return m;
}

}  // namespace

std::vector<float> reference_forward(const Workload& w, const ModelWeights& weights, const std::vector<float>& patches,
                                     ReferenceStats* stats) {
  check_shapes(weights, w);
  const size_t R = w.rows(), H = w.hidden, M = w.mlp, P = w.patch_values();
  if (patches.size() != R * P) {
    throw std::invalid_argument("patches: " + std::to_string(patches.size()) + " values, expected " +
                                std::to_string(R * P) + " ([" + std::to_string(R) + ", " + std::to_string(P) + "])");
  }
  if (stats) *stats = ReferenceStats{};

  // Embedding: x = patches @ W_patch + b_patch + position.
  std::vector<float> x(R * H);
  matmul(R, P, H, View{patches.data(), P}, View{weights.patch_weight.data(), H}, weights.patch_bias.data(), x.data(), H);
  add_into(x, weights.position);
  if (stats) stats->embedding_max_abs = max_abs(x);

  std::vector<float> ln, qkv(R * 3 * H), ctx, attn(R * H), hidden(R * M), mlp_out(R * H);
  for (const LayerWeights& L : weights.layers) {
    float activation = 0;
    const auto track = [&](const std::vector<float>& v) {
      if (stats) activation = std::max(activation, max_abs(v));
    };
    layernorm(x, R, H, L.ln1_gamma, L.ln1_beta, ln);
    track(ln);
    matmul(R, H, 3 * H, View{ln.data(), H}, View{L.qkv_weight.data(), 3 * H}, L.qkv_bias.data(), qkv.data(), 3 * H);
    track(qkv);
    attention(qkv, R, H, w.heads, ctx);
    track(ctx);
    matmul(R, H, H, View{ctx.data(), H}, View{L.out_weight.data(), H}, L.out_bias.data(), attn.data(), H);
    track(attn);
    add_into(x, attn);
    layernorm(x, R, H, L.ln2_gamma, L.ln2_beta, ln);
    track(ln);
    matmul(R, H, M, View{ln.data(), H}, View{L.up_weight.data(), M}, L.up_bias.data(), hidden.data(), M);
    track(hidden);
    for_rows(R, [&](size_t r) {
      for (size_t c = 0; c < M; ++c) hidden[r * M + c] = gelu_tanh(hidden[r * M + c]);
    });
    track(hidden);
    matmul(R, M, H, View{hidden.data(), M}, View{L.down_weight.data(), H}, L.down_bias.data(), mlp_out.data(), H);
    track(mlp_out);
    add_into(x, mlp_out);
    if (stats) {
      stats->residual_max_abs.push_back(max_abs(x));
      stats->activation_max_abs.push_back(activation);
    }
  }

  std::vector<float> y;
  if (w.final_layernorm) {
    layernorm(x, R, H, weights.final_gamma, weights.final_beta, y);
  } else {
    y = std::move(x);
  }
  if (stats) stats->output_max_abs = max_abs(y);
  return y;
}

Agreement compare(const std::vector<float>& simulated, const std::vector<float>& reference) {
  if (simulated.size() != reference.size()) {
    throw std::invalid_argument("compare: " + std::to_string(simulated.size()) + " simulated values, " +
                                std::to_string(reference.size()) + " reference values");
  }
  double dot = 0, ss = 0, rr = 0, worst = 0;
  bool nan = false;
  for (size_t i = 0; i < simulated.size(); ++i) {
    const double s = simulated[i], r = reference[i];
    dot += s * r;
    ss += s * s;
    rr += r * r;
    const double e = std::fabs(s - r);
    if (std::isnan(e)) nan = true;
    worst = std::max(worst, e);
  }
  Agreement a;
  if (nan || std::isnan(dot) || std::isnan(ss) || std::isnan(rr)) {
    a.cosine = a.max_abs_error = std::nan("");
  } else {
    a.max_abs_error = worst;
    if (ss == 0 && rr == 0) {
      a.cosine = 1;
    } else if (ss == 0 || rr == 0) {
      a.cosine = 0;
    } else {
      a.cosine = std::clamp(dot / std::sqrt(ss * rr), -1.0, 1.0);
    }
  }
  return a;
}

}  // namespace lockstep::workload
