// Model weights: the seeded generator is deterministic, shaped and pinned against a textbook
// SplitMix64; folding and quantisation give the device's bytes; dequantizing is exact (a second
// fold of the dequantized network gives the same bytes); every block of the tiny lowering can be
// written from the device weights.
#include "workload/model_weights.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>

#include "arch/machine.hpp"
#include "io/errors.hpp"
#include "numerics/fp16.hpp"
#include "numerics/fp8.hpp"
#include "support/test_support.hpp"
#include "workload/lower.hpp"
#include "workload/weight_layout.hpp"
#include "workload/workload.hpp"

namespace lockstep::workload {
namespace {

const Workload& tiny() {
  static const Workload w = load_workload(testing::source_path("configs/workloads/vit-tiny.yaml"));
  return w;
}

// The textbook sequential SplitMix64 (Steele, Lea, Flood 2014).
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

bool same_device(const DeviceGemm& a, const DeviceGemm& b) {
  return a.in == b.in && a.out == b.out && a.weight == b.weight && a.bias == b.bias;
}

TEST(ModelWeights, SeededWeightsAreShapedAndDeterministic) {
  const Workload& w = tiny();
  ModelWeights a = seeded_weights(w, 7);
  ModelWeights b = seeded_weights(w, 7);
  ModelWeights c = seeded_weights(w, 8);
  EXPECT_NO_THROW(check_shapes(a, w));
  const auto ta = named_tensors(a, w), tb = named_tensors(b, w), tc = named_tensors(c, w);
  ASSERT_EQ(ta.size(), 3u + 12u * w.layers + 2u);
  std::map<std::string, std::vector<uint32_t>> shapes;
  for (size_t i = 0; i < ta.size(); ++i) {
    shapes[ta[i].name] = ta[i].shape;
    EXPECT_TRUE(same_bits(*ta[i].values, *tb[i].values)) << ta[i].name;
    EXPECT_FALSE(same_bits(*ta[i].values, *tc[i].values)) << ta[i].name;
    size_t n = 1;
    for (uint32_t d : ta[i].shape) n *= d;
    EXPECT_EQ(ta[i].values->size(), n) << ta[i].name;
  }
  using S = std::vector<uint32_t>;
  EXPECT_EQ(shapes["embeddings.patch_embedding.weight"], (S{768, 256}));
  EXPECT_EQ(shapes["embeddings.position_embedding.weight"], (S{64, 256}));
  EXPECT_EQ(shapes["encoder.layers.1.self_attn.qkv.weight"], (S{256, 768}));
  EXPECT_EQ(shapes["encoder.layers.1.self_attn.qkv.bias"], (S{768}));
  EXPECT_EQ(shapes["encoder.layers.0.self_attn.out_proj.weight"], (S{256, 256}));
  EXPECT_EQ(shapes["encoder.layers.0.mlp.fc1.weight"], (S{256, 1024}));
  EXPECT_EQ(shapes["encoder.layers.0.mlp.fc2.weight"], (S{1024, 256}));
  EXPECT_EQ(shapes["post_layernorm.bias"], (S{256}));
  // Layers differ from one another (each tensor has its own key).
  EXPECT_FALSE(same_bits(a.layers[0].qkv_weight, a.layers[1].qkv_weight));
}

TEST(ModelWeights, SeededValuesFollowTheDocumentedFormula) {
  const Workload& w = tiny();
  const uint64_t seed = 12345;
  const ModelWeights m = seeded_weights(w, seed);
  // Second method: a sequential SplitMix64 started at seed + key * gamma yields the tensor's
  // state first, then started at that state yields values 0, 1, 2, ...
  const auto check = [&](const std::string& name, const std::vector<float>& v, double centre, double half,
                         size_t first = 0) {
    SplitMix64 keyed{seed + fnv1a(name) * 0x9e3779b97f4a7c15ull};
    SplitMix64 values{keyed.next()};
    for (size_t i = 0; i < first; ++i) values.next();
    for (size_t i = first; i < first + 5; ++i) {
      const double u = std::ldexp(static_cast<double>(values.next() >> 11), -53);
      EXPECT_EQ(v[i], static_cast<float>(centre + half * (2 * u - 1))) << name << " " << i;
    }
  };
  check("embeddings.patch_embedding.weight", m.patch_weight, 0, std::sqrt(3.0 / 768));
  check("encoder.layers.1.mlp.fc2.weight", m.layers[1].down_weight, 0, 0.5 * std::sqrt(3.0 / 1024));
  check("encoder.layers.0.layer_norm2.weight", m.layers[0].ln2_gamma, 1, 0.1);
  check("post_layernorm.bias", m.final_beta, 0, 0.02);
  check("embeddings.position_embedding.weight", m.position, 0, 0.1);
  // The fused QKV weight: Q and K columns at gain sqrt(2), V columns at gain 1.
  check("encoder.layers.0.self_attn.qkv.weight", m.layers[0].qkv_weight, 0, std::sqrt(2.0) * std::sqrt(3.0 / 256),
        768 + 256);  // row 1, K column 0
  check("encoder.layers.0.self_attn.qkv.weight", m.layers[0].qkv_weight, 0, std::sqrt(3.0 / 256),
        768 + 512);  // row 1, V column 0
  check("encoder.layers.1.self_attn.out_proj.weight", m.layers[1].out_weight, 0, std::sqrt(3.0 / 256));
  check("encoder.layers.1.mlp.fc1.weight", m.layers[1].up_weight, 0, std::sqrt(3.0 / 256));
}

TEST(ModelWeights, SeededMagnitudes) {
  const Workload& w = tiny();
  const ModelWeights m = seeded_weights(w, 1);
  const auto within = [](const std::vector<float>& v, double lo, double hi) {
    for (float x : v) {
      if (!(x >= lo && x <= hi)) return false;
    }
    return true;
  };
  const double qk = std::sqrt(2.0) * std::sqrt(3.0 / 256), v = std::sqrt(3.0 / 256);
  const double down = 0.5 * std::sqrt(3.0 / 1024);
  for (const LayerWeights& L : m.layers) {
    for (size_t i = 0; i < L.qkv_weight.size(); ++i) {
      const double bound = i % 768 < 512 ? qk : v;
      ASSERT_TRUE(std::fabs(L.qkv_weight[i]) <= bound) << i;
    }
    EXPECT_TRUE(within(L.out_weight, -v, v));
    EXPECT_TRUE(within(L.down_weight, -down, down));
    EXPECT_TRUE(within(L.ln1_gamma, 0.9, 1.1));
    EXPECT_TRUE(within(L.ln2_beta, -0.02, 0.02));
    EXPECT_TRUE(within(L.up_bias, -0.02, 0.02));
  }
  EXPECT_TRUE(within(m.position, -0.1, 0.1));
  // Uniform: the sample standard deviation of a large tensor is half-width / sqrt(3).
  double sum_sq = 0;
  for (float x : m.layers[0].up_weight) sum_sq += double{x} * x;
  EXPECT_NEAR(std::sqrt(sum_sq / m.layers[0].up_weight.size()), 1 / std::sqrt(256.0), 0.01 / std::sqrt(256.0));
}

TEST(ModelWeights, SeededPatchesAreFp16InUnitRange) {
  const Workload& w = tiny();
  const auto a = seeded_patches(w, 3), b = seeded_patches(w, 3), c = seeded_patches(w, 4);
  ASSERT_EQ(a.size(), size_t{64} * 768);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double sum = 0;
  for (uint16_t h : a) {
    const float x = arch::fp16_to_float(h);
    ASSERT_TRUE(x >= -1 && x <= 1) << x;
    sum += x;
  }
  EXPECT_NEAR(sum / a.size(), 0, 0.02);
}

TEST(ModelWeights, FoldAndQuantizeGivesTheDeviceBytes) {
  const Workload& w = tiny();
  const int8_t s = static_cast<int8_t>(w.weight_scale);
  const ModelWeights m = seeded_weights(w, 5);
  const DeviceWeights d = fold_and_quantize(m, w);
  EXPECT_EQ(d.weight_scale, -4);
  EXPECT_EQ(d.hidden, 256u);
  ASSERT_EQ(d.layers.size(), 2u);
  EXPECT_EQ(d.patch.in, 768u);
  EXPECT_EQ(d.patch.out, 256u);
  EXPECT_EQ(d.layers[1].qkv.out, 768u);
  EXPECT_EQ(d.layers[1].down.in, 1024u);
  EXPECT_EQ(d.position.size(), size_t{64} * 256);
  // Unfolded GEMMs: the weights rounded once to F143, the biases to FP16.
  for (size_t i = 0; i < m.patch_weight.size(); i += 97) {
    EXPECT_EQ(d.patch.weight[i], arch::f143_from_double(m.patch_weight[i], s));
  }
  const LayerWeights& L = m.layers[1];
  for (size_t i = 0; i < L.out_weight.size(); i += 31) {
    EXPECT_EQ(d.layers[1].out.weight[i], arch::f143_from_double(L.out_weight[i], s));
    EXPECT_EQ(d.layers[1].down.weight[i], arch::f143_from_double(L.down_weight[i], s));
  }
  EXPECT_EQ(d.layers[1].out.bias[5], arch::fp16_from_double(L.out_bias[5]));
  EXPECT_EQ(d.position[1000], arch::fp16_from_double(m.position[1000]));
  EXPECT_EQ(d.final_gamma[3], arch::fp16_from_double(m.final_gamma[3]));
  // Folded: W'[k][j] = gamma[k] W[k][j]; b'[j] = b[j] + sum_k beta[k] W[k][j].
  const uint32_t H = 256, N = 3 * H;
  for (uint32_t k : {0u, 17u, 255u}) {
    for (uint32_t j : {0u, 300u, 767u}) {
      EXPECT_EQ(d.layers[1].qkv.weight[k * N + j],
                arch::f143_from_double(double{L.ln1_gamma[k]} * L.qkv_weight[k * N + j], s));
      EXPECT_EQ(d.layers[1].up.weight[k * 1024 + j],
                arch::f143_from_double(double{L.ln2_gamma[k]} * L.up_weight[k * 1024 + j], s));
    }
  }
  for (uint32_t j : {0u, 400u, 767u}) {
    double b = L.qkv_bias[j];
    for (uint32_t k = 0; k < H; ++k) b += double{L.ln1_beta[k]} * L.qkv_weight[k * N + j];
    EXPECT_EQ(d.layers[1].qkv.bias[j], arch::fp16_from_double(b));
    EXPECT_NE(d.layers[1].qkv.bias[j], arch::fp16_from_double(L.qkv_bias[j]));  // beta matters
  }
  // Nothing saturates or becomes NaN at these magnitudes.
  for (const DeviceLayer& dl : d.layers) {
    for (const DeviceGemm* g : {&dl.qkv, &dl.out, &dl.up, &dl.down}) {
      for (uint8_t code : g->weight) ASSERT_TRUE((code & 0x7f) != 0x7f && code != arch::kF143NaN);
    }
  }
}

// Seeded and quantised a layer at a time (what `build` does), the same bits as the whole FP32
// model made first; 12 layers, so that layer 1's tensor names are told from layer 10's.
TEST(ModelWeights, SeededDeviceWeightsAreTheWholeModelFoldedAndQuantized) {
  Workload w = tiny();
  w.layers = 12;
  const DeviceWeights whole = fold_and_quantize(seeded_weights(w, 3), w);
  const DeviceWeights layered = seeded_device_weights(w, 3);
  EXPECT_EQ(layered.hidden, whole.hidden);
  EXPECT_EQ(layered.weight_scale, whole.weight_scale);
  EXPECT_TRUE(same_device(layered.patch, whole.patch));
  EXPECT_EQ(layered.position, whole.position);
  EXPECT_EQ(layered.final_gamma, whole.final_gamma);
  EXPECT_EQ(layered.final_beta, whole.final_beta);
  ASSERT_EQ(layered.layers.size(), 12u);
  for (uint32_t l = 0; l < w.layers; ++l) {
    SCOPED_TRACE(l);
    EXPECT_TRUE(same_device(layered.layers[l].qkv, whole.layers[l].qkv));
    EXPECT_TRUE(same_device(layered.layers[l].out, whole.layers[l].out));
    EXPECT_TRUE(same_device(layered.layers[l].up, whole.layers[l].up));
    EXPECT_TRUE(same_device(layered.layers[l].down, whole.layers[l].down));
  }
  // The comparison can fail: another seed's layer differs.
  EXPECT_FALSE(same_device(seeded_device_weights(w, 4).layers[10].up, whole.layers[10].up));
}

TEST(ModelWeights, DequantizedIsExactAndFoldsToItself) {
  const Workload& w = tiny();
  const int8_t s = static_cast<int8_t>(w.weight_scale);
  const DeviceWeights d = fold_and_quantize(seeded_weights(w, 9), w);
  const ModelWeights q = dequantized(d, w);
  EXPECT_NO_THROW(check_shapes(q, w));
  for (const LayerWeights& L : q.layers) {
    for (float g : L.ln1_gamma) ASSERT_EQ(g, 1.0f);
    for (float g : L.ln2_gamma) ASSERT_EQ(g, 1.0f);
    for (float b : L.ln1_beta) ASSERT_EQ(b, 0.0f);
    for (float b : L.ln2_beta) ASSERT_EQ(b, 0.0f);
  }
  EXPECT_EQ(q.layers[0].qkv_weight[123], static_cast<float>(arch::f143_to_double(d.layers[0].qkv.weight[123], s)));
  EXPECT_EQ(q.layers[0].up_bias[7], arch::fp16_to_float(d.layers[0].up.bias[7]));
  EXPECT_EQ(q.final_beta[9], arch::fp16_to_float(d.final_beta[9]));
  // Folding identity layernorms into exactly representable weights changes nothing.
  const DeviceWeights again = fold_and_quantize(q, w);
  EXPECT_TRUE(same_device(again.patch, d.patch));
  for (uint32_t l = 0; l < w.layers; ++l) {
    EXPECT_TRUE(same_device(again.layers[l].qkv, d.layers[l].qkv));
    EXPECT_TRUE(same_device(again.layers[l].out, d.layers[l].out));
    EXPECT_TRUE(same_device(again.layers[l].up, d.layers[l].up));
    EXPECT_TRUE(same_device(again.layers[l].down, d.layers[l].down));
  }
  EXPECT_EQ(again.position, d.position);
  EXPECT_EQ(again.final_gamma, d.final_gamma);
  EXPECT_EQ(again.final_beta, d.final_beta);
}

TEST(ModelWeights, WrongShapesAreNamed) {
  const Workload& w = tiny();
  ModelWeights m = seeded_weights(w, 1);
  m.layers[1].up_bias.pop_back();
  try {
    check_shapes(m, w);
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "encoder.layers.1.mlp.fc1.bias: 1023 values, expected 1024 ([1024])");
  }
  EXPECT_THROW(fold_and_quantize(m, w), std::invalid_argument);
  DeviceWeights d = fold_and_quantize(seeded_weights(w, 1), w);
  d.layers[0].down.bias.pop_back();
  EXPECT_THROW(dequantized(d, w), std::invalid_argument);
  EXPECT_THROW(device_gemm(d, "layer.mlp.sideways", 0), std::invalid_argument);
  EXPECT_THROW(device_gemm(d, "layer.mlp.up", 2), std::invalid_argument);
  EXPECT_EQ(&device_gemm(d, "embed.patch", 99), &d.patch);
  EXPECT_EQ(&device_gemm(d, "layer.attn.out", 1), &d.layers[1].out);
}

TEST(ModelWeights, EveryBlockOfTheTinyLoweringIsWritten) {
  const Workload& w = tiny();
  const Lowered lowered = lower_workload(w, arch::load_machine(w.machine));
  const DeviceWeights d = fold_and_quantize(seeded_weights(w, 2), w);
  ASSERT_FALSE(lowered.weights.empty());
  size_t gemm_bytes = 0;
  for (const WeightBlock& block : lowered.weights) {
    for (uint32_t layer = 0; layer < block.copies; ++layer) {
      std::vector<uint8_t> bytes(block.bytes());
      ASSERT_NO_THROW(write_device_block(d, block, layer, bytes.data())) << block.tensor;
      // Spot-check the first and last value of the block against the tensor.
      const uint32_t r0 = block.rows.begin, c0 = block.columns.begin;
      const uint32_t r1 = block.rows.end - 1, c1 = block.columns.end - 1;
      if (block.format == WeightFormat::F143) {
        const DeviceGemm& g = device_gemm(d, block.tensor.substr(0, block.tensor.size() - 7), layer);
        EXPECT_EQ(bytes.front(), g.weight[size_t{r0} * g.out + c0]) << block.tensor;
        EXPECT_EQ(bytes.back(), g.weight[size_t{r1} * g.out + c1]) << block.tensor;
        gemm_bytes += bytes.size();
      } else {
        const uint16_t first = static_cast<uint16_t>(bytes[0] | bytes[1] << 8);
        const uint16_t last = static_cast<uint16_t>(bytes[bytes.size() - 2] | bytes.back() << 8);
        if (block.tensor == "embed.position") {
          EXPECT_EQ(first, d.position[size_t{r0} * w.hidden + c0]);
          EXPECT_EQ(last, d.position[size_t{r1} * w.hidden + c1]);
        } else if (block.tensor == "final.ln.gamma") {
          EXPECT_EQ(first, d.final_gamma[c0]);
          EXPECT_EQ(last, d.final_gamma[c1]);
        } else if (block.tensor == "final.ln.beta") {
          EXPECT_EQ(first, d.final_beta[c0]);
        } else {
          const DeviceGemm& g = device_gemm(d, block.tensor.substr(0, block.tensor.size() - 5), layer);
          EXPECT_EQ(first, g.bias[c0]) << block.tensor;
          EXPECT_EQ(last, g.bias[c1]) << block.tensor;
        }
      }
    }
  }
  // Every GEMM weight is written exactly once per layer.
  const size_t H = w.hidden, M = w.mlp;
  EXPECT_EQ(gemm_bytes, w.patch_values() * H + w.layers * (H * 3 * H + H * H + 2 * H * M));
  WeightBlock wrong = lowered.weights.front();
  wrong.tensor = "layer.attn.qkv.weights";
  std::vector<uint8_t> sink(1 << 20);
  EXPECT_THROW(write_device_block(d, wrong, 0, sink.data()), std::invalid_argument);
}

bool ends_with_bias(const std::string& tensor) {
  return tensor.size() > 5 && tensor.compare(tensor.size() - 5, 5, ".bias") == 0;
}

bool same_device(const DeviceWeights& a, const DeviceWeights& b) {
  if (a.hidden != b.hidden || a.weight_scale != b.weight_scale || !same_device(a.patch, b.patch) ||
      a.position != b.position || a.final_gamma != b.final_gamma || a.final_beta != b.final_beta ||
      a.layers.size() != b.layers.size()) {
    return false;
  }
  for (size_t l = 0; l < a.layers.size(); ++l) {
    const DeviceLayer &x = a.layers[l], &y = b.layers[l];
    if (!same_device(x.qkv, y.qkv) || !same_device(x.out, y.out) || !same_device(x.up, y.up) ||
        !same_device(x.down, y.down)) {
      return false;
    }
  }
  return true;
}

// The tiny lowering's program with seeded device weights (seed 5) written into its blocks.
struct WrittenTiny {
  Lowered lowered;
  DeviceWeights device;
};

WrittenTiny written_tiny() {
  const Workload& w = tiny();
  WrittenTiny t{lower_workload(w, arch::load_machine(w.machine)), fold_and_quantize(seeded_weights(w, 5), w)};
  write_weight_blocks(t.lowered.program, t.lowered.weights, [&](const WeightBlock& b, uint32_t layer, uint8_t* out) {
    write_device_block(t.device, b, layer, out);
  });
  return t;
}

TEST(ModelWeights, ReadDeviceWeightsGivesBackWhatWasWritten) {
  const WrittenTiny t = written_tiny();
  const DeviceWeights back = read_device_weights(t.lowered.program, t.lowered.weights, tiny());
  EXPECT_TRUE(same_device(back, t.device));
}

TEST(ModelWeights, ReadDeviceWeightsRefusesDisagreeingCopiesAndMissingBytes) {
  WrittenTiny t = written_tiny();
  // The second copy of a replicated bias, on another tile, changed in layer 1.
  std::map<std::string, int> seen;
  const WeightBlock* replica = nullptr;
  for (const WeightBlock& b : t.lowered.weights) {
    if (b.tensor == "layer.mlp.up.bias" && b.rows.size() == 1 && ++seen[std::to_string(b.columns.begin)] == 2) {
      replica = &b;
      break;
    }
  }
  ASSERT_NE(replica, nullptr);
  for (auto& tile : t.lowered.program.tiles) {
    for (auto& s : tile.segments) {
      if (tile.tile == replica->tile && s.address == replica->base) s.bytes.at(replica->stride) ^= 1;
    }
  }
  const std::string where = "tile " + std::to_string(replica->tile) + ": tensor layer.mlp.up.bias (layer 1)";
  try {
    read_device_weights(t.lowered.program, t.lowered.weights, tiny());
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
  }
  // A program whose blocks still hold payload tokens has no weights to read.
  const Lowered unwritten = lower_workload(tiny(), arch::load_machine(tiny().machine));
  EXPECT_THROW(read_device_weights(unwritten.program, unwritten.weights, tiny()), InputError);
}

// Tensors are read in parallel; with two bad copies the error is the first one's in block order.
TEST(ModelWeights, ReadDeviceWeightsReportsTheFirstBadCopyInBlockOrder) {
  WrittenTiny t = written_tiny();
  // The second copy of each replicated bias, in block order.
  std::vector<const WeightBlock*> replicas;
  std::map<std::string, int> seen;
  for (const WeightBlock& b : t.lowered.weights) {
    if (ends_with_bias(b.tensor) && b.rows.size() == 1 && ++seen[b.tensor + std::to_string(b.columns.begin)] == 2) {
      if (replicas.empty() || replicas.front()->tensor != b.tensor) replicas.push_back(&b);
    }
  }
  ASSERT_GE(replicas.size(), 2u);
  const WeightBlock* first = replicas[0];
  const WeightBlock* later = replicas.back();
  for (const WeightBlock* b : {later, first}) {  // the later one spoiled first: order must not matter
    for (auto& tile : t.lowered.program.tiles) {
      for (auto& s : tile.segments) {
        if (tile.tile == b->tile && s.address == b->base) s.bytes.at(0) ^= 1;
      }
    }
  }
  const std::string where = "tile " + std::to_string(first->tile) + ": tensor " + first->tensor;
  for (int round = 0; round < 5; ++round) {
    try {
      read_device_weights(t.lowered.program, t.lowered.weights, tiny());
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace lockstep::workload
