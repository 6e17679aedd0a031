// Model weights: names and shapes, the seeded generator, folding and quantisation to the
// device's formats, and back. docs/reference.md.
#include "workload/model_weights.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "formats/package.hpp"
#include "numerics/fp16.hpp"
#include "numerics/fp8.hpp"
#include "numerics/stochastic_rounding.hpp"

namespace lockstep::workload {
namespace {

std::string shape_text(const std::vector<uint32_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

size_t elements(const std::vector<uint32_t>& shape) {
  size_t n = 1;
  for (uint32_t d : shape) n *= d;
  return n;
}

// FNV-1a 64 of the tensor name: the generator's per-tensor key.
uint64_t name_key(const std::string& name) {
  return arch::fnv1a64(reinterpret_cast<const uint8_t*>(name.data()), name.size());
}

// Uniform in [0, 1): the top 53 bits of a SplitMix64 output times 2^-53 (exact).
double unit(uint64_t state, uint64_t index) {
  return static_cast<double>(arch::splitmix64_output(state, index) >> 11) * 0x1p-53;
}

// Half-widths of a tensor's values: `first` for columns below `split` of a row of `columns`,
// `rest` above (the fused QKV weight's Q and K blocks differ from its V block).
struct HalfWidth {
  double first = 0, rest = 0;
  size_t columns = 1, split = 1;
};

// centre + half_width * (2u - 1): 2u - 1 is exact, the product and sum round once each in
// double, then once to float.
void fill_uniform(std::vector<float>& v, size_t n, uint64_t seed, const std::string& name, double centre,
                  HalfWidth half) {
  const uint64_t state = arch::splitmix64_output(seed, name_key(name));
  v.resize(n);
  // Each value depends only on its index, so the split over threads does not matter.
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1 << 16), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i != r.end(); ++i) {
      const double h = i % half.columns < half.split ? half.first : half.rest;
      v[i] = static_cast<float>(centre + h * (2.0 * unit(state, i) - 1.0));
    }
  });
}

// The seeded magnitudes (docs/reference.md): GEMM weights uniform with standard deviation
// gain / sqrt(fan_in), i.e. half-width gain * sqrt(3 / fan_in).
constexpr double kBiasHalfWidth = 0.02;
constexpr double kGammaHalfWidth = 0.1;  // gamma in [0.9, 1.1)
constexpr double kBetaHalfWidth = 0.02;
constexpr double kPositionHalfWidth = 0.1;
constexpr double kQueryKeyGain = 1.4142135623730951;  // sqrt(2): scores of standard deviation ~2
constexpr double kMlpDownGain = 0.5;
double weight_half_width(uint32_t fan_in, double gain) { return gain * std::sqrt(3.0 / fan_in); }

uint16_t fp16(double v) { return arch::fp16_from_double(v); }

std::vector<uint16_t> to_fp16(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = fp16(v[i]);
  return out;
}

std::vector<float> from_fp16(const std::vector<uint16_t>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = arch::fp16_to_float(v[i]);
  return out;
}

// W' = diag(gamma) W, b' = b + beta @ W in double (gamma/beta empty: no folding), then F143 and
// FP16.
DeviceGemm quantize_gemm(const std::vector<float>& weight, const std::vector<float>& bias, uint32_t in, uint32_t out,
                         int8_t scale, const std::vector<float>* gamma = nullptr,
                         const std::vector<float>* beta = nullptr) {
  DeviceGemm g;
  g.in = in;
  g.out = out;
  g.weight.resize(size_t{in} * out);
  g.bias.resize(out);
  std::vector<double> b(bias.begin(), bias.end());
  const double range = arch::f143_to_double(arch::kF143MaxFinite, scale);  // beyond it, f143 saturates
  for (uint32_t k = 0; k < in; ++k) {
    const double gk = gamma ? (*gamma)[k] : 1.0;
    const double bk = beta ? (*beta)[k] : 0.0;
    const float* row = weight.data() + size_t{k} * out;
    uint8_t* q = g.weight.data() + size_t{k} * out;
    for (uint32_t j = 0; j < out; ++j) {
      q[j] = arch::f143_from_double(gk * row[j], scale);
      if (std::abs(gk * row[j]) > range) ++g.saturated;
      b[j] += bk * row[j];
    }
  }
  for (uint32_t j = 0; j < out; ++j) g.bias[j] = fp16(b[j]);
  return g;
}

void dequantize_gemm(const DeviceGemm& g, uint32_t in, uint32_t out, int8_t scale, const std::string& name,
                     std::vector<float>& weight, std::vector<float>& bias) {
  if (g.in != in || g.out != out || g.weight.size() != size_t{in} * out || g.bias.size() != out) {
    throw std::invalid_argument(name + ": device GEMM is [" + std::to_string(g.in) + ", " + std::to_string(g.out) +
                                "] with " + std::to_string(g.weight.size()) + " weights and " +
                                std::to_string(g.bias.size()) + " biases, expected [" + std::to_string(in) + ", " +
                                std::to_string(out) + "]");
  }
  const std::array<float, 256> table = arch::f143_float_table(scale);
  weight.resize(g.weight.size());  // the same size again reuses the vector's memory
  tbb::parallel_for(tbb::blocked_range<size_t>(0, g.weight.size(), 1 << 16), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i != r.end(); ++i) weight[i] = table[g.weight[i]];
  });
  bias = from_fp16(g.bias);
}

void check_fp16_size(const std::vector<uint16_t>& v, size_t n, const std::string& name) {
  if (v.size() != n) {
    throw std::invalid_argument(name + ": " + std::to_string(v.size()) + " values, expected " + std::to_string(n));
  }
}

}  // namespace

int8_t device_weight_scale(const Workload& w) {
  if (w.weight_scale < std::numeric_limits<int8_t>::min() || w.weight_scale > std::numeric_limits<int8_t>::max()) {
    throw std::invalid_argument("weight_scale " + std::to_string(w.weight_scale) + " is outside int8");
  }
  return static_cast<int8_t>(w.weight_scale);
}

namespace {

// Calls f(name, shape, values) for every tensor of m (ModelWeights or const ModelWeights, its
// layers already w.layers), in named_tensors' order.
template <class Model, class F>
void for_each_tensor(Model& m, const Workload& w, F&& f) {
  const uint32_t H = w.hidden, M = w.mlp, P = w.patch_values(), R = w.rows();
  f(std::string("embeddings.patch_embedding.weight"), std::vector<uint32_t>{P, H}, m.patch_weight);
  f(std::string("embeddings.patch_embedding.bias"), std::vector<uint32_t>{H}, m.patch_bias);
  f(std::string("embeddings.position_embedding.weight"), std::vector<uint32_t>{R, H}, m.position);
  for (uint32_t l = 0; l < w.layers; ++l) {
    auto& L = m.layers[l];
    const std::string p = "encoder.layers." + std::to_string(l) + ".";
    f(p + "layer_norm1.weight", std::vector<uint32_t>{H}, L.ln1_gamma);
    f(p + "layer_norm1.bias", std::vector<uint32_t>{H}, L.ln1_beta);
    f(p + "self_attn.qkv.weight", std::vector<uint32_t>{H, 3 * H}, L.qkv_weight);
    f(p + "self_attn.qkv.bias", std::vector<uint32_t>{3 * H}, L.qkv_bias);
    f(p + "self_attn.out_proj.weight", std::vector<uint32_t>{H, H}, L.out_weight);
    f(p + "self_attn.out_proj.bias", std::vector<uint32_t>{H}, L.out_bias);
    f(p + "layer_norm2.weight", std::vector<uint32_t>{H}, L.ln2_gamma);
    f(p + "layer_norm2.bias", std::vector<uint32_t>{H}, L.ln2_beta);
    f(p + "mlp.fc1.weight", std::vector<uint32_t>{H, M}, L.up_weight);
    f(p + "mlp.fc1.bias", std::vector<uint32_t>{M}, L.up_bias);
    f(p + "mlp.fc2.weight", std::vector<uint32_t>{M, H}, L.down_weight);
    f(p + "mlp.fc2.bias", std::vector<uint32_t>{H}, L.down_bias);
  }
  f(std::string("post_layernorm.weight"), std::vector<uint32_t>{H}, m.final_gamma);
  f(std::string("post_layernorm.bias"), std::vector<uint32_t>{H}, m.final_beta);
}

}  // namespace

std::vector<NamedTensor> named_tensors(ModelWeights& m, const Workload& w) {
  m.layers.resize(w.layers);
  std::vector<NamedTensor> t;
  for_each_tensor(m, w, [&](const std::string& name, const std::vector<uint32_t>& shape, std::vector<float>& v) {
    t.push_back(NamedTensor{name, shape, &v});
  });
  return t;
}

void check_shapes(const ModelWeights& m, const Workload& w) {
  if (m.layers.size() != w.layers) {
    throw std::invalid_argument("model has " + std::to_string(m.layers.size()) + " layers, expected " +
                                std::to_string(w.layers));
  }
  for_each_tensor(m, w, [&](const std::string& name, const std::vector<uint32_t>& shape, const std::vector<float>& v) {
    if (v.size() != elements(shape)) {
      throw std::invalid_argument(name + ": " + std::to_string(v.size()) + " values, expected " +
                                  std::to_string(elements(shape)) + " (" + shape_text(shape) + ")");
    }
  });
}

namespace {

// One tensor's seeded values, by its name (docs/reference.md "Seeded weights").
void seed_tensor(const NamedTensor& t, const Workload& w, uint64_t seed) {
  const uint32_t H = w.hidden, M = w.mlp, P = w.patch_values();
  const std::string& n = t.name;
  const auto ends_with = [&](const char* suffix) {
    const size_t s = std::strlen(suffix);
    return n.size() >= s && n.compare(n.size() - s, s, suffix) == 0;
  };
  double centre = 0.0, half = kBiasHalfWidth;
  HalfWidth widths;
  if (n == "embeddings.patch_embedding.weight") {
    half = weight_half_width(P, 1.0);
  } else if (n == "embeddings.position_embedding.weight") {
    half = kPositionHalfWidth;
  } else if (ends_with("self_attn.qkv.weight")) {
    widths = HalfWidth{weight_half_width(H, kQueryKeyGain), weight_half_width(H, 1.0), size_t{3} * H, size_t{2} * H};
  } else if (ends_with("self_attn.out_proj.weight")) {
    half = weight_half_width(H, 1.0);
  } else if (ends_with("mlp.fc1.weight")) {
    half = weight_half_width(H, 1.0);
  } else if (ends_with("mlp.fc2.weight")) {
    half = weight_half_width(M, kMlpDownGain);
  } else if (ends_with("layer_norm1.weight") || ends_with("layer_norm2.weight") || n == "post_layernorm.weight") {
    centre = 1.0;
    half = kGammaHalfWidth;
  } else if (ends_with("layer_norm1.bias") || ends_with("layer_norm2.bias") || n == "post_layernorm.bias") {
    half = kBetaHalfWidth;
  }
  if (widths.columns == 1) widths = HalfWidth{half, half, 1, 1};
  fill_uniform(*t.values, elements(t.shape), seed, n, centre, widths);
}

}  // namespace

ModelWeights seeded_weights(const Workload& w, uint64_t seed) {
  ModelWeights m;
  for (const NamedTensor& t : named_tensors(m, w)) seed_tensor(t, w, seed);
  return m;
}

std::vector<uint16_t> seeded_patches(const Workload& w, uint64_t seed) {
  const size_t n = size_t{w.rows()} * w.patch_values();
  const uint64_t state = arch::splitmix64_output(seed, name_key("patches"));
  std::vector<uint16_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = fp16(2.0 * unit(state, i) - 1.0);
  return out;
}

namespace {

DeviceLayer quantize_layer(const LayerWeights& L, const Workload& w, int8_t s) {
  const uint32_t H = w.hidden, M = w.mlp;
  DeviceLayer dl;
  dl.qkv = quantize_gemm(L.qkv_weight, L.qkv_bias, H, 3 * H, s, &L.ln1_gamma, &L.ln1_beta);
  dl.out = quantize_gemm(L.out_weight, L.out_bias, H, H, s);
  dl.up = quantize_gemm(L.up_weight, L.up_bias, H, M, s, &L.ln2_gamma, &L.ln2_beta);
  dl.down = quantize_gemm(L.down_weight, L.down_bias, M, H, s);
  return dl;
}

// Everything but the layers: the patch GEMM, the position embedding, the final layernorm.
DeviceWeights quantize_without_layers(const ModelWeights& m, const Workload& w) {
  DeviceWeights d;
  d.hidden = w.hidden;
  d.weight_scale = device_weight_scale(w);
  d.patch = quantize_gemm(m.patch_weight, m.patch_bias, w.patch_values(), w.hidden, d.weight_scale);
  d.position = to_fp16(m.position);
  d.final_gamma = to_fp16(m.final_gamma);
  d.final_beta = to_fp16(m.final_beta);
  return d;
}

}  // namespace

DeviceWeights fold_and_quantize(const ModelWeights& m, const Workload& w) {
  check_shapes(m, w);
  DeviceWeights d = quantize_without_layers(m, w);
  d.layers.resize(m.layers.size());
  tbb::parallel_for(size_t{0}, m.layers.size(), [&](size_t l) {  // layers are independent
    d.layers[l] = quantize_layer(m.layers[l], w, d.weight_scale);
  });
  return d;
}

DeviceWeights seeded_device_weights(const Workload& w, uint64_t seed) {
  ModelWeights m;  // a layer's tensors hold values only while that layer is quantised
  const std::vector<NamedTensor> tensors = named_tensors(m, w);
  const std::string layers = "encoder.layers.";
  for (const NamedTensor& t : tensors) {
    if (!t.name.starts_with(layers)) seed_tensor(t, w, seed);
  }
  DeviceWeights d = quantize_without_layers(m, w);
  d.layers.resize(w.layers);
  tbb::parallel_for(uint32_t{0}, w.layers, [&](uint32_t l) {  // layers are independent
    const std::string prefix = layers + std::to_string(l) + ".";
    for (const NamedTensor& t : tensors) {
      if (t.name.starts_with(prefix)) seed_tensor(t, w, seed);
    }
    d.layers[l] = quantize_layer(m.layers[l], w, d.weight_scale);
    m.layers[l] = LayerWeights{};
  });
  return d;
}

std::vector<SaturatedTensor> saturated_tensors(const DeviceWeights& d) {
  std::vector<SaturatedTensor> out;
  auto add = [&](const std::string& name, const DeviceGemm& g) {
    if (g.saturated > 0) out.push_back({name, g.saturated, g.weight.size()});
  };
  add("embeddings.patch_embedding.weight", d.patch);
  for (size_t l = 0; l < d.layers.size(); ++l) {
    const std::string p = "encoder.layers." + std::to_string(l) + ".";
    add(p + "self_attn.qkv.weight", d.layers[l].qkv);
    add(p + "self_attn.out_proj.weight", d.layers[l].out);
    add(p + "mlp.fc1.weight", d.layers[l].up);
    add(p + "mlp.fc2.weight", d.layers[l].down);
  }
  return out;
}

ModelWeights dequantized_without_layers(const DeviceWeights& d, const Workload& w) {
  const uint32_t H = w.hidden;
  if (d.weight_scale != w.weight_scale) {
    throw std::invalid_argument("device weights have weight_scale " + std::to_string(d.weight_scale) +
                                ", the workload " + std::to_string(w.weight_scale));
  }
  if (d.layers.size() != w.layers) {
    throw std::invalid_argument("device weights have " + std::to_string(d.layers.size()) + " layers, expected " +
                                std::to_string(w.layers));
  }
  ModelWeights m;
  dequantize_gemm(d.patch, w.patch_values(), H, d.weight_scale, "embed.patch", m.patch_weight, m.patch_bias);
  check_fp16_size(d.position, size_t{w.rows()} * H, "embed.position");
  m.position = from_fp16(d.position);
  check_fp16_size(d.final_gamma, H, "final.ln.gamma");
  check_fp16_size(d.final_beta, H, "final.ln.beta");
  m.final_gamma = from_fp16(d.final_gamma);
  m.final_beta = from_fp16(d.final_beta);
  return m;
}

void dequantize_layer(const DeviceWeights& d, const Workload& w, uint32_t layer, LayerWeights& L) {
  const uint32_t H = w.hidden, M = w.mlp;
  if (layer >= d.layers.size()) {
    throw std::invalid_argument("layer " + std::to_string(layer) + " of " + std::to_string(d.layers.size()));
  }
  const DeviceLayer& dl = d.layers[layer];
  const int8_t s = d.weight_scale;
  const std::string p = "layer " + std::to_string(layer) + " ";
  L.ln1_gamma.assign(H, 1.0f);
  L.ln1_beta.assign(H, 0.0f);
  dequantize_gemm(dl.qkv, H, 3 * H, s, p + "layer.attn.qkv", L.qkv_weight, L.qkv_bias);
  dequantize_gemm(dl.out, H, H, s, p + "layer.attn.out", L.out_weight, L.out_bias);
  L.ln2_gamma.assign(H, 1.0f);
  L.ln2_beta.assign(H, 0.0f);
  dequantize_gemm(dl.up, H, M, s, p + "layer.mlp.up", L.up_weight, L.up_bias);
  dequantize_gemm(dl.down, M, H, s, p + "layer.mlp.down", L.down_weight, L.down_bias);
}

ModelWeights dequantized(const DeviceWeights& d, const Workload& w) {
  ModelWeights m = dequantized_without_layers(d, w);
  m.layers.resize(w.layers);
  tbb::parallel_for(uint32_t{0}, w.layers, [&](uint32_t l) { dequantize_layer(d, w, l, m.layers[l]); });
  return m;
}

const DeviceGemm& device_gemm(const DeviceWeights& d, const std::string& gemm, uint32_t layer) {
  if (gemm == "embed.patch") return d.patch;
  if (layer >= d.layers.size()) {
    throw std::invalid_argument(gemm + ": layer " + std::to_string(layer) + " of " + std::to_string(d.layers.size()));
  }
  const DeviceLayer& L = d.layers[layer];
  if (gemm == "layer.attn.qkv") return L.qkv;
  if (gemm == "layer.attn.out") return L.out;
  if (gemm == "layer.mlp.up") return L.up;
  if (gemm == "layer.mlp.down") return L.down;
  throw std::invalid_argument("unknown GEMM '" + gemm + "'");
}

}  // namespace lockstep::workload
