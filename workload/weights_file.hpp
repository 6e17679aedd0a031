#pragma once
// Real weights by their usual SigLIP tensor names from a safetensors file (float32 or
// float16 tensors in [in, out] orientation, as workload/model_weights.hpp names them).
#include <string>

#include "workload/model_weights.hpp"
#include "workload/workload.hpp"

namespace lockstep::workload {

// InputError "FILE: tensor 'NAME': missing" / "...: shape: expected (a, b), got (c, d)" /
// "...: dtype: expected F32 or F16, got BF16" on the first tensor that does not fit.
// Refuses (InputError naming the tensor and the first element) a NaN or an infinity unless
// `allow_non_finite`: one poisons every output of the model.
ModelWeights load_weights_file(const std::string& path, const Workload& w, bool allow_non_finite = false);

}  // namespace lockstep::workload
