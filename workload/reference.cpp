// The FP32 reference encoder: matrix products on OpenBLAS, the rest plain loops, oneTBB over
// rows. Shares no code with model/ (the kernels); docs/reference.md.
#include "workload/reference.hpp"

#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace lockstep::workload {
namespace {

// A row-major matrix view: element (r, c) at data[r * stride + c].
struct View {
  const float* data;
  size_t stride;
};

constexpr size_t kRowTile = 128;     // output rows per task
constexpr size_t kColumnTile = 512;  // output columns per task

// out[r][j] = (sum over k of a[r][k] * b[k][j], in FP32) + bias[j] (when given), for r < rows,
// j < n, depth `depth` (b transposed when `b_transposed`: element (k, j) is
// b.data[j * b.stride + k]). Fixed 128 x 512 output tiles run in parallel on oneTBB, each one
// call of OpenBLAS's SGEMM on one thread over the whole depth: what a tile computes does not
// depend on the threads, so neither do the bits (OpenBLAS's own threads change them: tested).
void matmul(size_t rows, size_t depth, size_t n, View a, View b, const float* bias, float* out, size_t ldc,
            bool b_transposed = false) {
  const auto i = [](size_t v) { return static_cast<blasint>(v); };
  const size_t row_tiles = (rows + kRowTile - 1) / kRowTile;
  const size_t column_tiles = (n + kColumnTile - 1) / kColumnTile;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, row_tiles * column_tiles),
                    [&](const tbb::blocked_range<size_t>& range) {
                      for (size_t t = range.begin(); t != range.end(); ++t) {
                        const size_t r0 = (t / column_tiles) * kRowTile, r1 = std::min(rows, r0 + kRowTile);
                        const size_t c0 = (t % column_tiles) * kColumnTile, c1 = std::min(n, c0 + kColumnTile);
                        const float* b_tile = b_transposed ? b.data + c0 * b.stride : b.data + c0;
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans, i(r1 - r0),
                                    i(c1 - c0), i(depth), 1.0f, a.data + r0 * a.stride, i(a.stride), b_tile,
                                    i(b.stride), 0.0f, out + r0 * ldc + c0, i(ldc));
                        if (bias == nullptr) continue;
                        for (size_t r = r0; r < r1; ++r) {
                          for (size_t c = c0; c < c1; ++c) out[r * ldc + c] = out[r * ldc + c] + bias[c];
                        }
                      }
                    });
}

// OpenBLAS on one thread for one reference run (oneTBB spreads the tiles), restored after.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas() : previous_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
  ~SingleThreadedBlas() { openblas_set_num_threads(previous_); }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  int previous_;
};

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

// GELU's tanh form, 0.5 x (1 + tanh(u)) with u = sqrt(2 / pi) (x + 0.044715 x^3), evaluated in
// FP32 as the equal x / (1 + exp(-2u)): std::exp costs a fifth of std::tanh here, and 1 + exp(-2u)
// cannot cancel where 1 + tanh(u) does (u far below 0).
float gelu_tanh(float x) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  const float u = k * (x + 0.044715f * x * x * x);
  return x / (1.0f + std::exp(-2.0f * u));
}

// The largest of s[0..n), NaNs passed over as std::max passes them. Lanes of their own, which
// the compiler vectorises: a maximum is the same whatever order its terms come in (the one zero
// it may pick instead of the other gives the same exp(s - max)).
float row_max(const float* s, size_t n) {
  constexpr size_t kLanes = 16;
  float lanes[kLanes];
  std::fill(lanes, lanes + kLanes, -INFINITY);
  size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) lanes[l] = std::max(lanes[l], s[j + l]);
  }
  float top = -INFINITY;
  for (; j < n; ++j) top = std::max(top, s[j]);
  for (size_t l = 0; l < kLanes; ++l) top = std::max(top, lanes[l]);
  return top;
}

// ctx[:, h*d .. (h+1)*d) = softmax(Q_h K_h^T / sqrt(d)) V_h for every head h; qkv [rows, 3H]
// holds Q, K, V column blocks.
void attention(const std::vector<float>& qkv, size_t rows, size_t hidden, size_t heads, std::vector<float>& ctx) {
  const size_t d = hidden / heads, stride = 3 * hidden;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  ctx.assign(rows * hidden, 0.0f);
  std::vector<float> scores(rows * rows);
  for (size_t h = 0; h < heads; ++h) {
    const float* q = qkv.data() + h * d;
    const float* k = qkv.data() + hidden + h * d;
    const float* v = qkv.data() + 2 * hidden + h * d;
    matmul(rows, d, rows, View{q, stride}, View{k, stride}, nullptr, scores.data(), rows, true);
    for_rows(rows, [&](size_t i) {
      float* s = scores.data() + i * rows;
      for (size_t j = 0; j < rows; ++j) s[j] = s[j] * scale;
      const float top = row_max(s, rows);
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

// The pass itself: `weights` for the embedding and the final layernorm, `layer(l)` for layer l's
// weights, asked for in order (valid until the next call).
template <class LayerSource>
std::vector<float> forward(const Workload& w, const ModelWeights& weights, LayerSource&& layer,
                           const std::vector<float>& patches, ReferenceStats* stats) {
  const size_t R = w.rows(), H = w.hidden, M = w.mlp, P = w.patch_values();
  if (patches.size() != R * P) {
    throw std::invalid_argument("patches: " + std::to_string(patches.size()) + " values, expected " +
                                std::to_string(R * P) + " ([" + std::to_string(R) + ", " + std::to_string(P) + "])");
  }
  if (stats) *stats = ReferenceStats{};
  const SingleThreadedBlas blas;

  // Embedding: x = patches @ W_patch + b_patch + position.
  std::vector<float> x(R * H);
  matmul(R, P, H, View{patches.data(), P}, View{weights.patch_weight.data(), H}, weights.patch_bias.data(), x.data(),
         H);
  add_into(x, weights.position);
  if (stats) stats->embedding_max_abs = max_abs(x);

  std::vector<float> ln, qkv(R * 3 * H), ctx, attn(R * H), hidden(R * M), mlp_out(R * H);
  for (uint32_t l = 0; l < w.layers; ++l) {
    const LayerWeights& L = layer(l);
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

}  // namespace

std::vector<float> reference_forward(const Workload& w, const ModelWeights& weights, const std::vector<float>& patches,
                                     ReferenceStats* stats) {
  check_shapes(weights, w);
  return forward(
      w, weights, [&](uint32_t l) -> const LayerWeights& { return weights.layers[l]; }, patches, stats);
}

std::vector<float> reference_forward(const Workload& w, const DeviceWeights& device, const std::vector<float>& patches,
                                     ReferenceStats* stats) {
  const ModelWeights outer = dequantized_without_layers(device, w);
  LayerWeights current;
  return forward(
      w, outer,
      [&](uint32_t l) -> const LayerWeights& {
        dequantize_layer(device, w, l, current);
        return current;
      },
      patches, stats);
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
