// The encoder, in program order:
//   embed: patches [rows, patch values] x W_patch -> x; x += position embedding
//   Repeat layers (27 for So400m):
//     layernorm(x) -> ln; ln x W_qkv -> qkv (fused); attention(qkv) -> ctx;
//     ctx x W_o -> attn; x += attn; layernorm(x) -> ln; ln x W_up -> h, gelu(h) on the
//     GEMM's reducers;
//     h x W_down -> mlp; x += mlp
//   final layernorm (affine) -> y16; cast y16 -> y (FP32 output)
// Layernorm gains and biases inside the layers are folded into the following GEMM's
// weights and bias, so the in-layer layernorm kernels take no parameters.
#include "workload/lower.hpp"

#include <functional>

#include "workload/lower_context.hpp"

namespace lockstep::workload {
namespace {

void on_owners(LowerContext& c, const std::function<void(uint32_t owner, uint32_t tile, uint32_t rows)>& f) {
  for (uint32_t o = 0; o < c.owners; ++o) f(o, c.owner_tile(o), c.owner_rows(o).size());
}

arch::Binding binding(LowerContext& c, const std::string& name, arch::BindingKind kind, const Activation& a,
                      uint32_t bytes_per_value) {
  arch::Binding b;
  b.name = name;
  b.kind = kind;
  b.element = bytes_per_value == kHalf ? arch::ElementType::Float16 : arch::ElementType::Float32;
  b.shape = {c.workload.rows(), a.columns};  // the owners' rows in order make the whole tensor
  for (uint32_t o = 0; o < c.owners; ++o) {
    b.slices.push_back(
        arch::Slice{c.owner_tile(o), a.address[o], c.owner_rows(o).size() * a.columns * bytes_per_value});
  }
  return b;
}

}  // namespace

Lowered lower_workload(const Workload& w, const arch::MachineDescription& machine) {
  LowerContext c(w, machine);
  const uint32_t H = w.hidden;
  const uint32_t tiles = machine.tiles;

  // Resident activations on the owners.
  const Activation patches = place_activation(c, "patches", w.patch_values());
  const Activation x = place_activation(c, "x", H);
  const Activation ln = place_activation(c, "ln", H);
  const Activation qkv = place_activation(c, "qkv", 3 * H);
  const Activation ctx = place_activation(c, "ctx", H);
  const Activation attn = place_activation(c, "attn", H);
  const Activation hidden = place_activation(c, "mlp_hidden", w.mlp);
  const Activation mlp = place_activation(c, "mlp_out", H);
  const Activation y16 = place_activation(c, "y16", H);
  const Activation y = place_activation(c, "y", H, kFloat);
  std::vector<LayerTensor> position, gamma, beta;
  for (uint32_t o = 0; o < c.owners; ++o) {
    const uint32_t t = c.owner_tile(o);
    const Span all{0, H}, one{0, 1};
    position.push_back(c.place_weights(t, "embed.position", c.owner_rows(o), all, WeightFormat::Fp16, false));
    gamma.push_back(c.place_weights(t, "final.ln.gamma", one, all, WeightFormat::Fp16, false));
    beta.push_back(c.place_weights(t, "final.ln.beta", one, all, WeightFormat::Fp16, false));
  }

  // Resident weights: each GEMM's grid starts a quarter of the chip further on, so the
  // four layer GEMMs spread their blocks evenly.
  GemmLayout patch = plan_gemm(c, "embed.patch", w.patch_values(), H, false, 0);
  GemmLayout wqkv = plan_gemm(c, "layer.attn.qkv", H, 3 * H, true, 0);
  GemmLayout wo = plan_gemm(c, "layer.attn.out", H, H, true, tiles / 4);
  GemmLayout up = plan_gemm(c, "layer.mlp.up", H, w.mlp, true, tiles / 2);
  GemmLayout down = plan_gemm(c, "layer.mlp.down", w.mlp, H, true, 3 * tiles / 4);

  emit_gemm(c, patch, patches, x);
  on_owners(c, [&](uint32_t o, uint32_t t, uint32_t n) {
    c.kernel(t, "add", {{x.address[o], false}, {x.address[o], false}, position[o].operand()}, {int64_t{n} * H});
  });

  c.begin_layers();
  on_owners(c, [&](uint32_t o, uint32_t t, uint32_t n) {
    c.kernel(t, "layernorm", {{ln.address[o], false}, {x.address[o], false}}, {n, H});
  });
  emit_gemm(c, wqkv, ln, qkv);
  emit_attention(c, qkv, ctx, 0);
  emit_gemm(c, wo, ctx, attn);
  on_owners(c, [&](uint32_t o, uint32_t t, uint32_t n) {
    c.kernel(t, "add", {{x.address[o], false}, {x.address[o], false}, {attn.address[o], false}}, {int64_t{n} * H});
    c.kernel(t, "layernorm", {{ln.address[o], false}, {x.address[o], false}}, {n, H});
  });
  emit_gemm(c, up, ln, hidden, GemmEpilogue::Gelu);  // gelu on the reducers, before the scatter
  emit_gemm(c, down, hidden, mlp);
  on_owners(c, [&](uint32_t o, uint32_t t, uint32_t n) {
    c.kernel(t, "add", {{x.address[o], false}, {x.address[o], false}, {mlp.address[o], false}}, {int64_t{n} * H});
  });
  c.end_layers();

  on_owners(c, [&](uint32_t o, uint32_t t, uint32_t n) {
    if (w.final_layernorm) {
      c.kernel(t, "layernorm", {{y16.address[o], false}, {x.address[o], false}, gamma[o].operand(), beta[o].operand()},
               {n, H});
    } else {
      c.kernel(t, "copy", {{y16.address[o], false}, {x.address[o], false}}, {int64_t{n} * H * kHalf});
    }
    c.kernel(t, "cast", {{y.address[o], false}, {y16.address[o], false}}, {int64_t{n} * H, 16, 32});
  });

  Lowered out;
  out.gemms = c.gemm_plans;
  out.owners = c.owners;
  out.weights = c.weights;
  for (uint32_t t = 0; t < tiles; ++t) {
    out.memory.push_back(TileMemoryUse{t, c.memory.persistent_bytes(t), c.memory.peak_bytes(t)});
  }
  out.program = c.finish({binding(c, "patches", arch::BindingKind::Input, patches, kHalf),
                          binding(c, "output", arch::BindingKind::Output, y, kFloat)});
  out.capture = std::move(c.capture);
  return out;
}

}  // namespace lockstep::workload
