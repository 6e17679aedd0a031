// The FP32 reference at full size (label slow): the seeded SigLIP-So400m's activations.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "numerics/fp16.hpp"
#include "support/test_support.hpp"
#include "workload/model_weights.hpp"
#include "workload/reference.hpp"
#include "workload/workload.hpp"

namespace lockstep::workload {
namespace {

std::vector<float> decode(const std::vector<uint16_t>& h) {
  std::vector<float> out;
  out.reserve(h.size());
  for (uint16_t v : h) out.push_back(arch::fp16_to_float(v));
  return out;
}

// The full SigLIP-So400m (27 layers, 729 tokens) with its seeded weights: every activation
// stays inside FP16's range, so the device's FP16 arithmetic can represent the network the
// reference computes. Prints the time (a figure, not asserted) and the largest magnitudes.
TEST(Reference, FullSiglipSo400mStaysInFp16Range) {
  const Workload w = load_workload(testing::source_path("configs/workloads/siglip-so400m.yaml"));
  const auto t_seed = std::chrono::steady_clock::now();
  const ModelWeights original = seeded_weights(w, 1);
  const double seed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_seed).count();
  const auto t_fold = std::chrono::steady_clock::now();
  const ModelWeights device = dequantized(fold_and_quantize(original, w), w);
  const double fold_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_fold).count();
  const std::vector<float> p = decode(seeded_patches(w, 1));
  ReferenceStats stats;
  const auto t0 = std::chrono::steady_clock::now();
  const auto y = reference_forward(w, device, p, &stats);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("siglip-so400m reference forward %.2f s (seeding %.2f s, fold+quantise+dequantise %.2f s)\n", seconds,
              seed_s, fold_s);
  std::printf("max |x|: embedding %.4f\n", stats.embedding_max_abs);
  for (size_t l = 0; l < stats.residual_max_abs.size(); ++l) {
    std::printf("  layer %2zu: residual %.4f, activations %.4f\n", l, stats.residual_max_abs[l],
                stats.activation_max_abs[l]);
  }
  std::printf("  output %.4f\n", stats.output_max_abs);
  ASSERT_EQ(y.size(), size_t{729} * 1152);
  for (float r : stats.residual_max_abs) EXPECT_LT(r, 65504.0f);
  for (float a : stats.activation_max_abs) EXPECT_LT(a, 65504.0f);
  if (std::getenv("LOCKSTEP_REFERENCE_FULL_UNFOLDED") != nullptr) {
    const auto t1 = std::chrono::steady_clock::now();
    const auto z = reference_forward(w, original, p);
    const Agreement a = compare(y, z);
    std::printf("unfolded FP32 weights: %.2f s; folded F143 vs FP32 weights: cosine %.9f, max abs error %.6f\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count(), a.cosine,
                a.max_abs_error);
  }
}

}  // namespace
}  // namespace lockstep::workload
