#pragma once
// The network's parameters: FP32 (ModelWeights, SigLIP-style names, [in, out] orientation so a
// layer is x @ W + b), a deterministic seeded generator for them, and the form they take on the
// device (DeviceWeights: in-layer layernorms folded into the next GEMM, GEMM weights F143 x
// 2^weight_scale, biases and the rest FP16). `dequantized` turns the device form back into the
// FP32 network the device actually computes, which the FP32 reference (workload/reference.hpp)
// runs. Formulas and magnitudes: docs/reference.md.
#include <cstdint>
#include <string>
#include <vector>

#include "workload/workload.hpp"

namespace lockstep::arch {
struct Package;
}

namespace lockstep::workload {

struct WeightBlock;  // workload/weight_layout.hpp

// One encoder layer, FP32, row-major. H = hidden, M = mlp.
struct LayerWeights {
  std::vector<float> ln1_gamma, ln1_beta;     // layer_norm1 [H]
  std::vector<float> qkv_weight;              // self_attn.qkv [H, 3H]: Q, K, V column blocks;
  std::vector<float> qkv_bias;                //   head h at columns h*head_dim of each; bias [3H]
  std::vector<float> out_weight, out_bias;    // self_attn.out_proj [H, H], [H]
  std::vector<float> ln2_gamma, ln2_beta;     // layer_norm2 [H]
  std::vector<float> up_weight, up_bias;      // mlp.fc1 [H, M], [M]
  std::vector<float> down_weight, down_bias;  // mlp.fc2 [M, H], [H]
};

struct ModelWeights {
  std::vector<float> patch_weight;  // embeddings.patch_embedding [patch_values, H]
  std::vector<float> patch_bias;    // [H]
  std::vector<float> position;      // embeddings.position_embedding [rows, H]
  std::vector<LayerWeights> layers;
  std::vector<float> final_gamma, final_beta;  // post_layernorm [H] (unused without final_layernorm)
};

// A named view of one tensor of ModelWeights, for loaders and checks.
struct NamedTensor {
  std::string name;  // e.g. "encoder.layers.3.mlp.fc1.weight"
  std::vector<uint32_t> shape;
  std::vector<float>* values = nullptr;
};

// Every tensor with its SigLIP-style name and expected shape, in a fixed order:
// embeddings.patch_embedding.{weight,bias}, embeddings.position_embedding.weight, then per layer
// l encoder.layers.l.{layer_norm1.{weight,bias}, self_attn.qkv.{weight,bias},
// self_attn.out_proj.{weight,bias}, layer_norm2.{weight,bias}, mlp.fc1.{weight,bias},
// mlp.fc2.{weight,bias}}, then post_layernorm.{weight,bias}. `m.layers` is resized to w.layers;
// the vectors themselves are not touched.
std::vector<NamedTensor> named_tensors(ModelWeights& m, const Workload& w);

// Throws std::invalid_argument "NAME: N values, expected M ([a, b])" on the first tensor whose
// size is not its shape's, or a layer count that is not w.layers.
void check_shapes(const ModelWeights& m, const Workload& w);

// Deterministic weights for `w` (docs/reference.md "Seeded weights"): every value is
// counter-based SplitMix64 keyed by (seed, FNV-1a of the tensor's name, index), mapped to a
// uniform value in [-a, a) with only exact double operations, so the bits are the same on every
// machine, compiler and standard library.
ModelWeights seeded_weights(const Workload& w, uint64_t seed);

// Deterministic FP16 input patches [rows, patch_values], uniform in [-1, 1] (one rounding to
// FP16 from the double value).
std::vector<uint16_t> seeded_patches(const Workload& w, uint64_t seed);

// One GEMM as the device holds it: weight F143 bytes [in][out] (value = decode x 2^scale), bias
// FP16 [out].
struct DeviceGemm {
  uint32_t in = 0, out = 0;
  std::vector<uint8_t> weight;
  std::vector<uint16_t> bias;
  size_t saturated = 0;  // weights beyond F143's range at the scale, clipped by quantisation
};

struct DeviceLayer {
  DeviceGemm qkv, out, up, down;  // qkv and up carry layer_norm1 / layer_norm2 folded in
};

struct DeviceWeights {
  uint32_t hidden = 0;
  int8_t weight_scale = 0;  // the workload's
  DeviceGemm patch;
  std::vector<uint16_t> position;  // FP16 [rows, H]
  std::vector<DeviceLayer> layers;
  std::vector<uint16_t> final_gamma, final_beta;  // FP16 [H]
};

// Folds each in-layer layernorm into the GEMM after it (W' = diag(gamma) W, b' = b + beta @ W,
// in double from the FP32 values) and quantises: GEMM weights to F143 at w.weight_scale
// (arch::f143_from_double: nearest even, saturating at +-240 x 2^scale), everything else to FP16
// (nearest even). Throws std::invalid_argument on wrong shapes or a weight_scale outside int8.
// Each weight tensor (by its file name) whose FP8 quantisation clipped values, with how many
// of how many: clipping changes the model the package runs, so `build` warns of it.
struct SaturatedTensor {
  std::string name;
  size_t saturated = 0, values = 0;
};
std::vector<SaturatedTensor> saturated_tensors(const DeviceWeights& d);

// w.weight_scale as the device's int8 power-of-two scale; std::invalid_argument outside int8.
int8_t device_weight_scale(const Workload& w);

DeviceWeights fold_and_quantize(const ModelWeights& m, const Workload& w);
// fold_and_quantize(seeded_weights(w, seed), w), the same bits, with one layer's FP32 weights at
// a time on each thread: a SigLIP-So400m build never holds its 1.6 GB of FP32 weights at once.
DeviceWeights seeded_device_weights(const Workload& w, uint64_t seed);

// The FP32 network the device computes: GEMM weights and every FP16 value decoded exactly, the
// folded layernorms' gamma = 1 and beta = 0. Throws std::invalid_argument on wrong sizes.
ModelWeights dequantized(const DeviceWeights& d, const Workload& w);

// The same in two parts, so that a forward pass can hold one layer's FP32 weights at a time:
// everything but the layers (`layers` left empty; the same checks), and one layer into `L`,
// whose vectors are reused when they already have the sizes.
ModelWeights dequantized_without_layers(const DeviceWeights& d, const Workload& w);
void dequantize_layer(const DeviceWeights& d, const Workload& w, uint32_t layer, LayerWeights& L);

// The device GEMM named as in the lowering ("embed.patch", "layer.attn.qkv", "layer.attn.out",
// "layer.mlp.up", "layer.mlp.down"); `layer` is ignored for "embed.patch". Throws
// std::invalid_argument for another name or a layer out of range.
const DeviceGemm& device_gemm(const DeviceWeights& d, const std::string& gemm, uint32_t layer);

// A workload::BlockWriter for DeviceWeights (workload/weight_layout.hpp): writes block's bytes
// for copy `layer` into `out` (block.bytes() bytes, row-major over block.rows x block.columns,
// FP16 little-endian). Tensors: "<gemm>.weight" (F143), "<gemm>.bias", "embed.position",
// "final.ln.gamma", "final.ln.beta" (FP16). Throws std::invalid_argument for an unknown tensor,
// a format that is not the tensor's, or a block outside the tensor.
void write_device_block(const DeviceWeights& d, const WeightBlock& block, uint32_t layer, uint8_t* out);

// The inverse of write_weight_blocks with write_device_block: every block's bytes for every
// layer copy, read from the package's bytes segments at block.base + layer * stride, back into
// DeviceWeights of w's shapes (weight_scale the workload's). InputError naming the tile and
// tensor when a block's bytes are not in a bytes segment or a replicated vector's copies differ,
// or when the blocks leave values unread; std::invalid_argument for a block that names no tensor
// of w (as write_device_block).
DeviceWeights read_device_weights(const arch::Package& package, const std::vector<WeightBlock>& blocks,
                                  const Workload& w);

}  // namespace lockstep::workload
