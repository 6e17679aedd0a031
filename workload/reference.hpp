#pragma once
// The FP32 reference of a workload: a plain, separate implementation of the ViT encoder in FP32
// (it shares no code with model/ or the kernels; it reads the same weights and inputs), and the
// agreement measures a simulated output is judged by (cosine similarity, maximum absolute error).
// Order of operations and rules: docs/reference.md.
#include <vector>

#include "workload/model_weights.hpp"
#include "workload/workload.hpp"

namespace lockstep::workload {

// Largest magnitudes seen during a reference run: the tensors the device keeps in FP16 must stay
// below 65504 for the comparison to mean anything.
struct ReferenceStats {
  float embedding_max_abs = 0;            // x after the patch embedding and position
  std::vector<float> residual_max_abs;    // per layer: x after the layer
  std::vector<float> activation_max_abs;  // per layer: ln, qkv, ctx, attn, MLP hidden (before
                                          // and after GELU), MLP out
  float output_max_abs = 0;               // the output (after the final layernorm)
};

// The encoder in FP32 (docs/reference.md "Order of operations"): patches [rows, patch_values]
// FP32 (e.g. the FP16 input decoded), weights as ModelWeights (usually
// dequantized(fold_and_quantize(...))); returns the output [rows, hidden] FP32. Matrix products
// are OpenBLAS SGEMM calls on fixed output tiles (oneTBB runs the tiles, OpenBLAS one thread
// each) and then the bias, so the result does not depend on the thread count. `stats`, when
// given, receives the largest magnitudes. Throws std::invalid_argument on wrong sizes.
std::vector<float> reference_forward(const Workload& w, const ModelWeights& weights, const std::vector<float>& patches,
                                     ReferenceStats* stats = nullptr);

// The same with the device's weights, dequantised one layer at a time as the pass reaches it:
// the values of dequantized(device, w), bit for bit, without holding every layer's FP32
// weights at once (1.6 GB for SigLIP-So400m, and their first-touch page faults).
std::vector<float> reference_forward(const Workload& w, const DeviceWeights& device, const std::vector<float>& patches,
                                     ReferenceStats* stats = nullptr);

struct Agreement {
  double cosine = 0;         // sum(s r) / sqrt(sum(s^2) sum(r^2)), in double
  double max_abs_error = 0;  // max |s - r|
};

// Cosine similarity and maximum absolute error over all elements, in double. Two all-zero
// vectors have cosine 1; one all-zero vector against a non-zero one, 0. A NaN anywhere makes
// both NaN. Throws std::invalid_argument if the sizes differ.
Agreement compare(const std::vector<float>& simulated, const std::vector<float>& reference);

}  // namespace lockstep::workload
