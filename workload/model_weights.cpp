// Model weights: names and shapes, the seeded generator, folding and quantisation to the
// device's formats, and back. docs/reference.md.
#include "workload/model_weights.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <cstring>
#include <exception>
#include <limits>
#include <stdexcept>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "io/errors.hpp"
#include "io/parallel.hpp"
#include "numerics/fp16.hpp"
#include "numerics/fp8.hpp"
#include "io/hex.hpp"
#include "io/mapped_file.hpp"
#include "formats/package.hpp"
#include "numerics/stochastic_rounding.hpp"
#include "workload/weight_layout.hpp"

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
DeviceGemm quantize_gemm(const std::vector<float>& weight, const std::vector<float>& bias, uint32_t in,
                         uint32_t out, int8_t scale, const std::vector<float>* gamma = nullptr,
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

int8_t checked_scale(const Workload& w) {
  if (w.weight_scale < std::numeric_limits<int8_t>::min() || w.weight_scale > std::numeric_limits<int8_t>::max()) {
    throw std::invalid_argument("weight_scale " + std::to_string(w.weight_scale) + " is outside int8");
  }
  return static_cast<int8_t>(w.weight_scale);
}

}  // namespace

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
  for_each_tensor(m, w, [&](const std::string& name, const std::vector<uint32_t>& shape,
                            const std::vector<float>& v) {
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
  } else if (ends_with("layer_norm1.weight") || ends_with("layer_norm2.weight") ||
             n == "post_layernorm.weight") {
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
  d.weight_scale = checked_scale(w);
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

namespace {

// One tensor copy of DeviceWeights as blocks see it: F143 bytes or FP16 halves, row-major
// [rows, columns].
struct TensorRef {
  const uint8_t* bytes = nullptr;
  const uint16_t* halves = nullptr;
  uint32_t rows = 0, columns = 0;
  const void* data() const { return bytes != nullptr ? static_cast<const void*>(bytes) : halves; }
};

bool ends_with(const std::string& t, const std::string& suffix) {
  return t.size() > suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TensorRef named_tensor(const DeviceWeights& d, const std::string& t, uint32_t layer) {
  if (ends_with(t, ".weight")) {
    const DeviceGemm& g = device_gemm(d, t.substr(0, t.size() - 7), layer);
    return {g.weight.data(), nullptr, g.in, g.out};
  }
  if (ends_with(t, ".bias")) {
    const DeviceGemm& g = device_gemm(d, t.substr(0, t.size() - 5), layer);
    return {nullptr, g.bias.data(), 1, g.out};
  }
  if (t == "embed.position") {
    const uint32_t rows = d.hidden == 0 ? 0 : static_cast<uint32_t>(d.position.size() / d.hidden);
    return {nullptr, d.position.data(), rows, d.hidden};
  }
  if (t == "final.ln.gamma" || t == "final.ln.beta") {
    const auto& v = t == "final.ln.gamma" ? d.final_gamma : d.final_beta;
    return {nullptr, v.data(), 1, static_cast<uint32_t>(v.size())};
  }
  throw std::invalid_argument("unknown tensor");
}

// The tensor copy `block` covers for copy `layer`. Throws std::invalid_argument for an unknown
// tensor, a format that is not the tensor's, or a block outside the tensor.
TensorRef block_tensor(const DeviceWeights& d, const WeightBlock& block, uint32_t layer) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument("weight block " + block.tensor + " on tile " + std::to_string(block.tile) + ": " +
                                what);
  };
  TensorRef t;
  try {
    t = named_tensor(d, block.tensor, layer);
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  const WeightFormat format = t.bytes != nullptr ? WeightFormat::F143 : WeightFormat::Fp16;
  if (block.format != format) fail("format is not the tensor's");
  if (block.rows.end > t.rows || block.columns.end > t.columns || block.rows.begin > block.rows.end ||
      block.columns.begin > block.columns.end) {
    fail("block lies outside the tensor [" + std::to_string(t.rows) + ", " + std::to_string(t.columns) + "]");
  }
  return t;
}

}  // namespace

void write_device_block(const DeviceWeights& d, const WeightBlock& block, uint32_t layer, uint8_t* out) {
  const TensorRef t = block_tensor(d, block, layer);
  size_t at = 0;
  for (uint32_t r = block.rows.begin; r < block.rows.end; ++r) {
    for (uint32_t c = block.columns.begin; c < block.columns.end; ++c) {
      const size_t i = size_t{r} * t.columns + c;
      if (t.bytes != nullptr) {
        out[at++] = t.bytes[i];
      } else {
        out[at++] = static_cast<uint8_t>(t.halves[i] & 0xff);
        out[at++] = static_cast<uint8_t>(t.halves[i] >> 8);
      }
    }
  }
}

namespace {

// DeviceWeights of w's shapes, every value zero. The layers' weights (410 MB for
// SigLIP-So400m) are fresh pages, made in parallel and mapped ahead of their zeroing: made one
// after another they were a second of a `run --reference`, most of it first touches.
DeviceWeights zero_device_weights(const Workload& w) {
  const uint32_t H = w.hidden, M = w.mlp;
  const auto gemm = [](uint32_t in, uint32_t out) {
    DeviceGemm g{in, out, {}, std::vector<uint16_t>(out), 0};
    arch::resize_populated(g.weight, size_t{in} * out);
    return g;
  };
  DeviceWeights d;
  d.hidden = H;
  d.weight_scale = checked_scale(w);
  d.patch = gemm(w.patch_values(), H);
  d.position.assign(size_t{w.rows()} * H, 0);
  d.layers.resize(w.layers);
  tbb::parallel_for(uint32_t{0}, w.layers, [&](uint32_t l) {
    d.layers[l] = DeviceLayer{gemm(H, 3 * H), gemm(H, H), gemm(H, M), gemm(M, H)};
  });
  d.final_gamma.assign(H, 0);
  d.final_beta.assign(H, 0);
  return d;
}

size_t value_count(const DeviceWeights& d) {
  size_t n = d.patch.weight.size() + d.patch.bias.size() + d.position.size() + 2 * size_t{d.hidden};
  for (const DeviceLayer& L : d.layers) {
    for (const DeviceGemm* g : {&L.qkv, &L.out, &L.up, &L.down}) n += g->weight.size() + g->bias.size();
  }
  return n;
}

// Reads one block copy's bytes into d (which the caller owns, so the const view may be written);
// a replicated value must agree with what another tile's copy gave. `seen` marks the values
// of the block's tensor read so far.
void read_block_copy(DeviceWeights& d, const WeightBlock& block, uint32_t layer, const uint8_t* in,
                     std::vector<uint8_t>& seen) {
  const TensorRef t = block_tensor(d, block, layer);
  seen.resize(size_t{t.rows} * t.columns);
  size_t at = 0;
  const uint32_t width = block.columns.end - block.columns.begin;
  for (uint32_t r = block.rows.begin; r < block.rows.end; ++r) {
    const auto slice = seen.begin() + static_cast<std::ptrdiff_t>(size_t{r} * t.columns + block.columns.begin);
    if (t.bytes != nullptr && std::find(slice, slice + width, 1) == slice + width) {
      // No value of this row slice was read before (the usual case): nothing to agree with.
      std::memcpy(const_cast<uint8_t*>(t.bytes) + (slice - seen.begin()), in + at, width);
      std::fill_n(slice, width, 1);
      at += width;
      continue;
    }
    for (uint32_t c = block.columns.begin; c < block.columns.end; ++c) {
      const size_t i = size_t{r} * t.columns + c;
      const uint16_t value = t.bytes != nullptr ? in[at] : static_cast<uint16_t>(in[at] | in[at + 1] << 8);
      at += t.bytes != nullptr ? 1 : 2;
      const uint16_t held = t.bytes != nullptr ? t.bytes[i] : t.halves[i];
      if (seen[i] && held != value) {
        throw InputError("tile " + std::to_string(block.tile) + ": tensor " + block.tensor +
                         (block.copies > 1 ? " (layer " + std::to_string(layer) + ")" : "") + ": value [" +
                         std::to_string(r) + ", " + std::to_string(c) + "] differs from another tile's copy");
      }
      seen[i] = 1;
      if (t.bytes != nullptr) {
        const_cast<uint8_t*>(t.bytes)[i] = static_cast<uint8_t>(value);
      } else {
        const_cast<uint16_t*>(t.halves)[i] = value;
      }
    }
  }
}

}  // namespace

DeviceWeights read_device_weights(const arch::Package& package, const std::vector<WeightBlock>& blocks,
                                  const Workload& w) {
  DeviceWeights d = zero_device_weights(w);
  // Every copy of every block, grouped by the tensor it fills. Tensors are read in parallel,
  // each one's copies in order; a failure is the one the first failing copy in order gives.
  struct BlockCopy {
    const WeightBlock* block;
    uint32_t layer;
  };
  std::vector<BlockCopy> copies;
  for (const WeightBlock& block : blocks) {
    for (uint32_t layer = 0; layer < block.copies; ++layer) copies.push_back({&block, layer});
  }
  std::vector<uint32_t> tensor_of(copies.size());
  std::map<const void*, uint32_t> tensor_index;
  size_t named = copies.size();  // copies before this one name a tensor
  std::exception_ptr naming_failure;
  for (size_t i = 0; i < copies.size(); ++i) {
    try {
      const void* data = block_tensor(d, *copies[i].block, copies[i].layer).data();
      tensor_of[i] = tensor_index.try_emplace(data, static_cast<uint32_t>(tensor_index.size())).first->second;
    } catch (...) {
      named = i;
      naming_failure = std::current_exception();
      break;
    }
  }
  const arch::Groups tensors = arch::group_by(named, tensor_index.size(), [&](size_t i) { return tensor_of[i]; });
  std::vector<size_t> failed_copy(tensors.size(), SIZE_MAX);
  std::vector<std::exception_ptr> failure(tensors.size());
  std::vector<size_t> read_values(tensors.size(), 0);
  tbb::parallel_for(size_t{0}, tensors.size(), [&](size_t g) {
    std::vector<uint8_t> seen;
    for (const uint32_t i : tensors.of(g)) {
      try {
        const WeightBlock& block = *copies[i].block;
        const uint32_t stride = block.stride == 0 ? block.bytes() : block.stride;
        const uint32_t address = block.base + copies[i].layer * stride;
        const uint8_t* in = arch::initial_bytes(package, block.tile, address, block.bytes());
        if (in == nullptr) {
          throw InputError("tile " + std::to_string(block.tile) + ": tensor " + block.tensor + ": no weight bytes at " +
                           arch::hex(address) + " (" + std::to_string(block.bytes()) + " bytes)");
        }
        read_block_copy(d, block, copies[i].layer, in, seen);
      } catch (...) {
        failed_copy[g] = i;
        failure[g] = std::current_exception();
        return;
      }
    }
    read_values[g] = static_cast<size_t>(std::count(seen.begin(), seen.end(), 1));
  });
  size_t first_failed = named;
  std::exception_ptr first_failure = naming_failure;
  for (size_t g = 0; g < tensors.size(); ++g) {
    if (failed_copy[g] < first_failed) {
      first_failed = failed_copy[g];
      first_failure = failure[g];
    }
  }
  if (first_failure) std::rethrow_exception(first_failure);
  size_t read = 0;
  for (const size_t n : read_values) read += n;
  if (read != value_count(d)) {
    throw InputError("the weight blocks hold " + std::to_string(read) + " of the model's " +
                     std::to_string(value_count(d)) + " values");
  }
  return d;
}

}  // namespace lockstep::workload
