#pragma once
// A ViT encoder workload (configs/workloads/*.yaml): the model's shape and number formats.
#include <cstdint>
#include <string>

namespace lockstep::workload {

struct Workload {
  std::string file;  // where it came from, for error messages
  std::string name;
  std::string machine;  // machine name or file the lowering targets
  uint32_t layers = 0;
  uint32_t hidden = 0;
  uint32_t mlp = 0;
  uint32_t heads = 0;
  uint32_t image = 0;  // pixels per side
  uint32_t patch = 0;  // pixels per patch side
  uint32_t channels = 3;
  uint32_t batch = 1;
  bool fused_qkv = true;
  bool final_layernorm = true;
  int32_t weight_scale = 0;  // FP8 weights are value * 2^weight_scale

  uint32_t patches_per_side() const { return image / patch; }
  uint32_t tokens() const { return patches_per_side() * patches_per_side(); }
  uint32_t rows() const { return tokens() * batch; }  // activation rows
  uint32_t head_dim() const { return hidden / heads; }
  uint32_t patch_values() const { return patch * patch * channels; }
};

// Reads and checks a workload. `source` is a path or an embedded name such as
// "configs/workloads/vit-tiny.yaml". InputError "file:line: key: what is wrong".
Workload load_workload(const std::string& source);
Workload parse_workload_yaml(const std::string& text, const std::string& file_name);

}  // namespace lockstep::workload
