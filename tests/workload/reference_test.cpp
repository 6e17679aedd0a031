// The FP32 reference: a hand-computed one-token network, a second (naive, double) implementation
// on small random networks with several heads and ragged sizes, thread-count independence,
// folding and quantisation preserving the network (cosine > 0.99 on vit-tiny), and compare().
// The full-size run is tests/slow/full_reference_test.cpp.
#include "workload/reference.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <stdexcept>

#include "numerics/fp16.hpp"
#include "support/test_support.hpp"
#include "workload/model_weights.hpp"
#include "workload/workload.hpp"

namespace lockstep::workload {
namespace {

const Workload& tiny() {
  static const Workload w = load_workload(testing::source_path("configs/workloads/vit-tiny.yaml"));
  return w;
}

std::vector<float> decode(const std::vector<uint16_t>& h) {
  std::vector<float> f(h.size());
  for (size_t i = 0; i < h.size(); ++i) f[i] = arch::fp16_to_float(h[i]);
  return f;
}

Workload small(uint32_t layers, uint32_t hidden, uint32_t mlp, uint32_t heads, uint32_t image, uint32_t patch,
               uint32_t channels, bool final_layernorm) {
  Workload w;
  w.name = "small";
  w.layers = layers;
  w.hidden = hidden;
  w.mlp = mlp;
  w.heads = heads;
  w.image = image;
  w.patch = patch;
  w.channels = channels;
  w.final_layernorm = final_layernorm;
  w.weight_scale = -4;
  return w;
}

// A network with identity weights and zero biases (H = M = patch values = 4): every GEMM copies.
ModelWeights identity_network(const Workload& w) {
  ModelWeights m;
  const uint32_t H = w.hidden;
  const auto identity = [](uint32_t rows, uint32_t columns, uint32_t offset) {
    std::vector<float> v(size_t{rows} * columns, 0.0f);
    for (uint32_t i = 0; i < rows; ++i) v[size_t{i} * columns + i + offset] = 1.0f;
    return v;
  };
  m.patch_weight = identity(H, H, 0);
  m.patch_bias.assign(H, 0);
  m.position.assign(size_t{w.rows()} * H, 0);
  for (uint32_t l = 0; l < w.layers; ++l) {
    LayerWeights L;
    L.ln1_gamma.assign(H, 1);
    L.ln1_beta.assign(H, 0);
    L.qkv_weight.assign(size_t{H} * 3 * H, 0);
    for (uint32_t part = 0; part < 3; ++part) {
      for (uint32_t i = 0; i < H; ++i) L.qkv_weight[size_t{i} * 3 * H + part * H + i] = 1;
    }
    L.qkv_bias.assign(3 * H, 0);
    L.out_weight = identity(H, H, 0);
    L.out_bias.assign(H, 0);
    L.ln2_gamma.assign(H, 1);
    L.ln2_beta.assign(H, 0);
    L.up_weight = identity(H, H, 0);
    L.up_bias.assign(H, 0);
    L.down_weight = identity(H, H, 0);
    L.down_bias.assign(H, 0);
    m.layers.push_back(L);
  }
  m.final_gamma.assign(H, 1);
  m.final_beta.assign(H, 0);
  return m;
}

// By hand, one token p = (1, -1, 1, -1): layernorm(p) = p / sqrt(1 + 1e-6) ~ p; attention over
// one token is its V = ln; x = p + ln ~ 2p; layernorm(2p) ~ p; GELU(1) = 0.8411920,
// GELU(-1) = -0.1588080; x = 2p + GELU(p) = (2.8411920, -2.1588080, ...). The final layernorm:
// mean 0.341192, deviations +-2.5, variance 6.25, so y ~ (1, -1, 1, -1).
TEST(Reference, HandComputedOneToken) {
  Workload w = small(1, 4, 4, 1, 1, 1, 4, false);
  ASSERT_EQ(w.rows(), 1u);
  ASSERT_EQ(w.patch_values(), 4u);
  const ModelWeights m = identity_network(w);
  const std::vector<float> p = {1, -1, 1, -1};
  const auto x = reference_forward(w, m, p);
  ASSERT_EQ(x.size(), 4u);
  for (int c = 0; c < 4; ++c) EXPECT_NEAR(x[c], c % 2 == 0 ? 2.8411920 : -2.1588080, 2e-6) << c;
  w.final_layernorm = true;
  const auto y = reference_forward(w, m, p);
  for (int c = 0; c < 4; ++c) EXPECT_NEAR(y[c], c % 2 == 0 ? 1.0 : -1.0, 1e-6) << c;
}

// A second implementation: naive loops in double, separate Q, K and V, exp in double.
std::vector<double> naive_forward(const Workload& w, const ModelWeights& m, const std::vector<float>& patches) {
  const size_t R = w.rows(), H = w.hidden, M = w.mlp, P = w.patch_values(), heads = w.heads, d = H / heads;
  using Matrix = std::vector<std::vector<double>>;
  const auto linear = [](const Matrix& x, const std::vector<float>& W, const std::vector<float>& b, size_t out) {
    Matrix y(x.size(), std::vector<double>(out));
    for (size_t i = 0; i < x.size(); ++i) {
      for (size_t j = 0; j < out; ++j) {
        double s = b[j];
        for (size_t k = 0; k < x[i].size(); ++k) s += x[i][k] * W[k * out + j];
        y[i][j] = s;
      }
    }
    return y;
  };
  const auto norm = [](const Matrix& x, const std::vector<float>& g, const std::vector<float>& b) {
    Matrix y = x;
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t n = x[i].size();
      double mean = 0, var = 0;
      for (double v : x[i]) mean += v / n;
      for (double v : x[i]) var += (v - mean) * (v - mean) / n;
      for (size_t c = 0; c < n; ++c) y[i][c] = (x[i][c] - mean) / std::sqrt(var + 1e-6) * g[c] + b[c];
    }
    return y;
  };
  Matrix x(R, std::vector<double>(P));
  for (size_t i = 0; i < R; ++i) {
    for (size_t k = 0; k < P; ++k) x[i][k] = patches[i * P + k];
  }
  x = linear(x, m.patch_weight, m.patch_bias, H);
  for (size_t i = 0; i < R; ++i) {
    for (size_t c = 0; c < H; ++c) x[i][c] += m.position[i * H + c];
  }
  for (const LayerWeights& L : m.layers) {
    const Matrix qkv = linear(norm(x, L.ln1_gamma, L.ln1_beta), L.qkv_weight, L.qkv_bias, 3 * H);
    Matrix ctx(R, std::vector<double>(H, 0));
    for (size_t h = 0; h < heads; ++h) {
      for (size_t i = 0; i < R; ++i) {
        std::vector<double> e(R);
        double top = -1e300, sum = 0;
        for (size_t j = 0; j < R; ++j) {
          double s = 0;
          for (size_t c = 0; c < d; ++c) s += qkv[i][h * d + c] * qkv[j][H + h * d + c];
          e[j] = s / std::sqrt(double(d));
          top = std::max(top, e[j]);
        }
        for (double& v : e) sum += (v = std::exp(v - top));
        for (size_t j = 0; j < R; ++j) {
          for (size_t c = 0; c < d; ++c) ctx[i][h * d + c] += e[j] / sum * qkv[j][2 * H + h * d + c];
        }
      }
    }
    const Matrix attn = linear(ctx, L.out_weight, L.out_bias, H);
    for (size_t i = 0; i < R; ++i) {
      for (size_t c = 0; c < H; ++c) x[i][c] += attn[i][c];
    }
    Matrix u = linear(norm(x, L.ln2_gamma, L.ln2_beta), L.up_weight, L.up_bias, M);
    for (auto& row : u) {
      for (double& v : row) v = 0.5 * v * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (v + 0.044715 * v * v * v)));
    }
    const Matrix down = linear(u, L.down_weight, L.down_bias, H);
    for (size_t i = 0; i < R; ++i) {
      for (size_t c = 0; c < H; ++c) x[i][c] += down[i][c];
    }
  }
  if (w.final_layernorm) x = norm(x, m.final_gamma, m.final_beta);
  std::vector<double> out;
  for (const auto& row : x) out.insert(out.end(), row.begin(), row.end());
  return out;
}

void expect_close_to_naive(const Workload& w, uint64_t seed) {
  const ModelWeights m = seeded_weights(w, seed);
  const std::vector<float> p = decode(seeded_patches(w, seed));
  const auto got = reference_forward(w, m, p);
  const auto want = naive_forward(w, m, p);
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
  EXPECT_LT(worst, 2e-5) << w.hidden << " hidden";
}

TEST(Reference, MatchesANaiveDoubleImplementation) {
  // 9 tokens (rows not a multiple of 4), hidden 12 in 2 heads of 6 (columns not a multiple of
  // 8), MLP 20, 12 patch values, 2 layers; then several heads and more tokens.
  expect_close_to_naive(small(2, 12, 20, 2, 6, 2, 3, true), 1);
  expect_close_to_naive(small(2, 12, 20, 2, 6, 2, 3, false), 2);
  expect_close_to_naive(small(3, 40, 72, 4, 15, 3, 2, true), 3);   // 25 tokens, head_dim 10
  expect_close_to_naive(small(1, 96, 300, 3, 66, 6, 3, true), 4);  // 121 tokens, depth 300 > 256
}

// vit-tiny, and 256 tokens at hidden 512: products large enough for OpenBLAS to split over
// both threads.
TEST(Reference, ResultsDoNotDependOnThreadCount) {
  for (const Workload& w : {tiny(), small(1, 512, 1024, 8, 128, 8, 3, true)}) {
    const ModelWeights m = dequantized(fold_and_quantize(seeded_weights(w, 11), w), w);
    const std::vector<float> p = decode(seeded_patches(w, 11));
    std::vector<float> one, two;
    {
      tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
      one = reference_forward(w, m, p);
    }
    {
      tbb::global_control c(tbb::global_control::max_allowed_parallelism, 2);
      two = reference_forward(w, m, p);
    }
    ASSERT_EQ(one.size(), size_t{w.rows()} * w.hidden);
    EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0) << w.hidden;
  }
}

// The device's weights dequantised one layer at a time give the bits of the whole network
// dequantised first, stats included (vit-tiny and a three-layer network with a final layernorm).
TEST(Reference, LayerByLayerDequantisationGivesTheSameBits) {
  for (const Workload& w : {tiny(), small(3, 64, 128, 4, 32, 8, 3, true)}) {
    const DeviceWeights device = fold_and_quantize(seeded_weights(w, 5), w);
    const std::vector<float> p = decode(seeded_patches(w, 5));
    ReferenceStats whole_stats, layered_stats;
    const auto whole = reference_forward(w, dequantized(device, w), p, &whole_stats);
    const auto layered = reference_forward(w, device, p, &layered_stats);
    ASSERT_EQ(whole.size(), layered.size());
    EXPECT_EQ(std::memcmp(whole.data(), layered.data(), whole.size() * sizeof(float)), 0) << w.layers;
    EXPECT_EQ(whole_stats.residual_max_abs, layered_stats.residual_max_abs);
    EXPECT_EQ(whole_stats.activation_max_abs, layered_stats.activation_max_abs);
    EXPECT_EQ(whole_stats.output_max_abs, layered_stats.output_max_abs);
  }
  DeviceWeights short_of_a_layer = fold_and_quantize(seeded_weights(tiny(), 5), tiny());
  short_of_a_layer.layers.pop_back();
  EXPECT_THROW(reference_forward(tiny(), short_of_a_layer, decode(seeded_patches(tiny(), 5))), std::invalid_argument);
}

TEST(Reference, FoldedQuantisedNetworkAgreesWithTheOriginal) {
  const Workload& w = tiny();
  const ModelWeights original = seeded_weights(w, 21);
  const ModelWeights device = dequantized(fold_and_quantize(original, w), w);
  const std::vector<float> p = decode(seeded_patches(w, 21));
  ReferenceStats stats;
  const auto t0 = std::chrono::steady_clock::now();
  const auto a = reference_forward(w, original, p, &stats);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto b = reference_forward(w, device, p);
  const Agreement agreement = compare(b, a);
  EXPECT_GT(agreement.cosine, 0.99);
  EXPECT_LT(agreement.max_abs_error, 1.0);
  std::printf("vit-tiny reference %.3f s; folded F143 vs FP32 weights: cosine %.9f, max abs error %.6f\n", seconds,
              agreement.cosine, agreement.max_abs_error);
  ASSERT_EQ(stats.residual_max_abs.size(), 2u);
  ASSERT_EQ(stats.activation_max_abs.size(), 2u);
  EXPECT_GT(stats.embedding_max_abs, 0);
  EXPECT_LT(stats.residual_max_abs.back(), 100);
  EXPECT_GT(stats.output_max_abs, 1);
  EXPECT_LT(stats.output_max_abs, 10);
}

TEST(Reference, RejectsWrongSizes) {
  const Workload& w = tiny();
  const ModelWeights m = seeded_weights(w, 1);
  EXPECT_THROW(reference_forward(w, m, std::vector<float>(10)), std::invalid_argument);
  ModelWeights bad = m;
  bad.layers.pop_back();
  EXPECT_THROW(reference_forward(w, bad, decode(seeded_patches(w, 1))), std::invalid_argument);
}

TEST(Compare, CosineAndMaximumError) {
  const std::vector<float> a = {1.5f, -2, 0.25f, 3};
  std::vector<float> neg(a.size()), b = a;
  for (size_t i = 0; i < a.size(); ++i) neg[i] = -a[i];
  EXPECT_EQ(compare(a, a).cosine, 1.0);
  EXPECT_EQ(compare(a, a).max_abs_error, 0.0);
  EXPECT_EQ(compare(a, neg).cosine, -1.0);
  EXPECT_EQ(compare(a, neg).max_abs_error, 6.0);
  b[2] = 0.75f;
  EXPECT_EQ(compare(b, a).max_abs_error, 0.5);
  // cos = (a.b) / (|a||b|) in double.
  const double dot = 1.5 * 1.5 + 4 + 0.25 * 0.75 + 9, na = 1.5 * 1.5 + 4 + 0.0625 + 9, nb = na - 0.0625 + 0.5625;
  EXPECT_DOUBLE_EQ(compare(b, a).cosine, dot / std::sqrt(na * nb));
  EXPECT_EQ(compare({0, 0}, {0, 0}).cosine, 1.0);
  EXPECT_EQ(compare({0, 0}, {1, 0}).cosine, 0.0);
  EXPECT_TRUE(std::isnan(compare({NAN, 1}, {1, 1}).cosine));
  EXPECT_TRUE(std::isnan(compare({NAN, 1}, {1, 1}).max_abs_error));
  EXPECT_THROW(compare({1}, {1, 2}), std::invalid_argument);
}

}  // namespace
}  // namespace lockstep::workload
