#include "workload/workload.hpp"

#include "io/errors.hpp"
#include "io/yaml_reader.hpp"

namespace lockstep::workload {
namespace {

// Fails at the key's line: "file:line: model.heads: 5 does not divide hidden 256".
[[noreturn]] void fail_at(arch::YamlMap& map, const std::string& key, const std::string& what) {
  arch::yaml_fail(map.file(), map.node()[key], map.key_path(key), what);
}

}  // namespace

Workload parse_workload_yaml(const std::string& text, const std::string& file_name) {
  arch::YamlMap root(arch::parse_yaml_text(text, file_name), file_name, "");
  Workload w;
  w.file = file_name;
  w.name = root.string("name");
  w.machine = root.string("machine");
  arch::YamlMap model = root.map("model");
  w.layers = model.required_unsigned<uint32_t>("layers", 4096);
  w.hidden = model.required_unsigned<uint32_t>("hidden", 1u << 16);
  w.mlp = model.required_unsigned<uint32_t>("mlp", 1u << 18);
  w.heads = model.required_unsigned<uint32_t>("heads", 4096);
  w.image = model.required_unsigned<uint32_t>("image", 1u << 16);
  w.patch = model.required_unsigned<uint32_t>("patch", 1u << 16);
  w.channels = model.optional_unsigned<uint32_t>("channels", 3, 64);
  w.batch = model.optional_unsigned<uint32_t>("batch", 1, 1u << 10);
  w.fused_qkv = model.has("fused_qkv") ? model.boolean("fused_qkv") : true;
  w.final_layernorm = model.has("final_layernorm") ? model.boolean("final_layernorm") : true;
  if (w.layers == 0) fail_at(model, "layers", "must be at least 1");
  if (w.hidden == 0 || w.hidden % 2 != 0) {
    fail_at(model, "hidden", std::to_string(w.hidden) + " must be even and non-zero (FP16 pairs fill 32-bit words)");
  }
  if (w.mlp == 0 || w.mlp % 2 != 0) {
    fail_at(model, "mlp", std::to_string(w.mlp) + " must be even and non-zero (FP16 pairs fill 32-bit words)");
  }
  if (w.heads == 0 || w.hidden % w.heads != 0) {
    fail_at(model, "heads", std::to_string(w.heads) + " does not divide hidden " + std::to_string(w.hidden));
  }
  if (w.head_dim() % 2 != 0) {
    fail_at(model, "heads",
            "head size " + std::to_string(w.head_dim()) + " must be even (FP16 pairs fill 32-bit words)");
  }
  // A stride-`patch` convolution: the last image % patch pixels of each side are unused.
  if (w.patch == 0 || w.image < w.patch) {
    fail_at(model, "patch", std::to_string(w.patch) + " is not between 1 and image " + std::to_string(w.image));
  }
  if (w.channels == 0) fail_at(model, "channels", "must be at least 1");
  // Attention would need per-image key sets; the workloads are batch 1.
  if (w.batch != 1) fail_at(model, "batch", "only batch 1 is lowered");
  if (w.patch_values() % 2 != 0) {
    fail_at(model, "patch",
            "patch values (patch^2 x channels = " + std::to_string(w.patch_values()) +
                ") must be even (FP16 pairs fill 32-bit words)");
  }
  if (!w.fused_qkv) fail_at(model, "fused_qkv", "only the fused QKV projection is lowered");
  model.finish();

  arch::YamlMap formats = root.map("formats");
  const std::string weights = formats.string("weights");
  if (weights != "fp8") fail_at(formats, "weights", "'" + weights + "' is not supported (fp8)");
  const std::string activations = formats.string("activations");
  if (activations != "fp16") {
    fail_at(formats, "activations", "'" + activations + "' is not supported (fp16)");
  }
  w.weight_scale = static_cast<int32_t>(formats.signed_value("weight_scale", -64, 64));
  formats.finish();
  root.finish();
  return w;
}

Workload load_workload(const std::string& source) { return parse_workload_yaml(arch::read_text_file(source), source); }

}  // namespace lockstep::workload
