// Transformer-like captures: embedding phases, a layer body that runs as a Repeat of 27
// (execution count 27; phases that stream per-layer weights carry 27 source addresses
// that advance by a fixed stride), and head/output phases. With 80 phases the split is the
// seed capture's: 7 before the body, 34 in it, 39 after.
#include <algorithm>
#include <string>
#include <vector>

#include "workload/synth.hpp"
#include "workload/synth_builder.hpp"
#include "workload/synth_random.hpp"

namespace lockstep::workload {
namespace {

constexpr uint32_t kLayers = 27;
constexpr uint64_t kTransformerStream = 2;

enum class Pattern : uint8_t {
  Multicast,  // activations to the GEMM tiles of the group (k transfers, fan-out 2..4)
  Transpose,  // re-layout across the chip: k transfers at a fixed stride of tiles
  Reduce,     // partial sums / statistics along a butterfly inside the group
  Halo,       // neighbouring tiles (sequence or head neighbours)
};

struct Kind {
  const char* label;
  const char* operation;
  Pattern pattern;
  uint32_t per_tile;
  uint32_t words_lo;
  uint32_t words_hi;
  bool iterated;  // streams per-layer weights: one source address per layer
};

const std::vector<Kind>& embed_kinds() {
  static const std::vector<Kind> kinds = {
      {"embed.patches.scatter", "rearrange", Pattern::Transpose, 24, 8, 128, false},
      {"embed.patch_gemm.broadcast", "gemm", Pattern::Multicast, 8, 8, 288, false},
      {"embed.patch_gemm.reduce", "gemm", Pattern::Reduce, 5, 4, 64, false},
      {"embed.position.add", "add", Pattern::Halo, 16, 16, 256, false},
      {"embed.cast", "cast", Pattern::Halo, 8, 16, 256, false},
      {"embed.redistribute", "rearrange", Pattern::Transpose, 24, 8, 128, false},
      {"embed.ln.stats", "layernorm", Pattern::Reduce, 5, 4, 64, false},
  };
  return kinds;
}

const std::vector<Kind>& layer_kinds() {
  static const std::vector<Kind> kinds = {
      {"layer.ln1.stats", "layernorm", Pattern::Reduce, 5, 4, 64, false},
      {"layer.ln1.broadcast", "layernorm", Pattern::Multicast, 6, 8, 288, false},
      {"layer.attn.qkv.chunk0", "gemm", Pattern::Multicast, 16, 8, 288, true},
      {"layer.attn.qkv.chunk1", "gemm", Pattern::Multicast, 16, 8, 288, true},
      {"layer.attn.qkv.chunk2", "gemm", Pattern::Multicast, 16, 8, 288, true},
      {"layer.attn.qkv.reduce", "gemm", Pattern::Reduce, 5, 4, 64, true},
      {"layer.attn.heads", "rearrange", Pattern::Transpose, 24, 8, 128, false},
      {"layer.attn.kv.exchange", "rearrange", Pattern::Transpose, 24, 8, 128, false},
      {"layer.attn.scores", "gemm", Pattern::Halo, 24, 16, 256, false},
      {"layer.attn.scores.reduce", "gemm", Pattern::Reduce, 5, 4, 64, false},
      {"layer.attn.softmax.stats", "softmax", Pattern::Reduce, 5, 4, 64, false},
      {"layer.attn.softmax.broadcast", "softmax", Pattern::Multicast, 6, 8, 288, false},
      {"layer.attn.context", "gemm", Pattern::Halo, 24, 16, 256, false},
      {"layer.attn.merge", "rearrange", Pattern::Transpose, 24, 8, 128, false},
      {"layer.attn.out", "gemm", Pattern::Multicast, 16, 8, 288, true},
      {"layer.attn.out.reduce", "gemm", Pattern::Reduce, 5, 4, 64, true},
      {"layer.residual1", "add", Pattern::Halo, 8, 16, 256, false},
      {"layer.ln2.stats", "layernorm", Pattern::Reduce, 5, 4, 64, false},
      {"layer.ln2.broadcast", "layernorm", Pattern::Multicast, 6, 8, 288, false},
      {"layer.mlp.up.chunk0", "gemm", Pattern::Multicast, 24, 8, 288, true},
      {"layer.mlp.up.chunk1", "gemm", Pattern::Multicast, 24, 8, 288, true},
      {"layer.mlp.up.chunk2", "gemm", Pattern::Multicast, 24, 8, 288, true},
      {"layer.mlp.up.chunk3", "gemm", Pattern::Multicast, 24, 8, 288, true},
      {"layer.mlp.up.reduce", "gemm", Pattern::Reduce, 5, 4, 64, true},
      {"layer.mlp.gelu.cast", "cast", Pattern::Halo, 8, 16, 256, false},
      {"layer.mlp.redistribute", "rearrange", Pattern::Transpose, 24, 8, 128, false},
      {"layer.mlp.down.chunk0", "gemm", Pattern::Multicast, 24, 8, 288, true},
      {"layer.mlp.down.chunk1", "gemm", Pattern::Multicast, 24, 8, 288, true},
      {"layer.mlp.down.chunk2", "gemm", Pattern::Multicast, 24, 8, 288, true},
      {"layer.mlp.down.chunk3", "gemm", Pattern::Multicast, 24, 8, 288, true},
      {"layer.mlp.down.reduce", "gemm", Pattern::Reduce, 5, 4, 64, true},
      {"layer.residual2", "add", Pattern::Halo, 8, 16, 256, false},
      {"layer.output.cast", "cast", Pattern::Halo, 8, 16, 256, false},
      {"layer.output.redistribute", "rearrange", Pattern::Transpose, 24, 8, 128, false},
  };
  return kinds;
}

const std::vector<Kind>& head_kinds() {
  static const std::vector<Kind> kinds = {
      {"head.ln.stats", "layernorm", Pattern::Reduce, 5, 4, 64, false},
      {"head.ln.broadcast", "layernorm", Pattern::Multicast, 6, 8, 288, false},
      {"head.pool.query", "gemm", Pattern::Multicast, 16, 8, 288, false},
      {"head.pool.kv", "gemm", Pattern::Multicast, 16, 8, 288, false},
      {"head.pool.scores", "gemm", Pattern::Halo, 24, 16, 256, false},
      {"head.pool.softmax.stats", "softmax", Pattern::Reduce, 5, 4, 64, false},
      {"head.pool.softmax.broadcast", "softmax", Pattern::Multicast, 6, 8, 288, false},
      {"head.pool.context", "gemm", Pattern::Halo, 24, 16, 256, false},
      {"head.pool.out", "gemm", Pattern::Multicast, 16, 8, 288, false},
      {"head.pool.out.reduce", "gemm", Pattern::Reduce, 5, 4, 64, false},
      {"head.mlp.up.chunk0", "gemm", Pattern::Multicast, 24, 8, 288, false},
      {"head.mlp.up.chunk1", "gemm", Pattern::Multicast, 24, 8, 288, false},
      {"head.mlp.up.chunk2", "gemm", Pattern::Multicast, 24, 8, 288, false},
      {"head.mlp.up.chunk3", "gemm", Pattern::Multicast, 24, 8, 288, false},
      {"head.mlp.up.reduce", "gemm", Pattern::Reduce, 5, 4, 64, false},
      {"head.mlp.gelu.cast", "cast", Pattern::Halo, 8, 16, 256, false},
      {"head.mlp.down.chunk0", "gemm", Pattern::Multicast, 24, 8, 288, false},
      {"head.mlp.down.chunk1", "gemm", Pattern::Multicast, 24, 8, 288, false},
      {"head.mlp.down.chunk2", "gemm", Pattern::Multicast, 24, 8, 288, false},
      {"head.mlp.down.chunk3", "gemm", Pattern::Multicast, 24, 8, 288, false},
      {"head.mlp.down.reduce", "gemm", Pattern::Reduce, 5, 4, 64, false},
      {"head.residual", "add", Pattern::Halo, 8, 16, 256, false},
      {"head.output.gather", "rearrange", Pattern::Transpose, 24, 8, 128, false},
  };
  return kinds;
}

// Consecutive tiles work together (a GEMM's column group, a head's tiles).
struct Group {
  uint32_t base;
  uint32_t size;
};
Group group_of(uint32_t tile, uint32_t tiles) {
  const uint32_t size = std::min(tiles, 32u);
  const uint32_t base = tile / size * size;
  return {base, std::min(size, tiles - base)};
}

void emit(const Kind& kind, SynthPhaseBuilder& b, SynthRandom& random, uint32_t tiles, uint32_t stride) {
  std::vector<uint32_t> dests;
  for (uint32_t s = 0; s < tiles; ++s) {
    const Group g = group_of(s, tiles);
    const uint32_t k = std::min(kind.per_tile, tiles - 1);
    for (uint32_t j = 0; j < k; ++j) {
      dests.clear();
      switch (kind.pattern) {
        case Pattern::Multicast: {
          // Inside the group when it has room for a fan-out, else anywhere.
          const bool local = g.size >= 4;
          const uint32_t span = local ? g.size : tiles;
          const uint32_t fan = std::min(random.between(2, 4), span - 1);
          const uint32_t first = random.below(span);
          for (uint32_t i = 0; dests.size() < fan && i < span; ++i) {
            const uint32_t d = (local ? g.base : 0) + (first + i * 3) % span;
            if (d != s && std::find(dests.begin(), dests.end(), d) == dests.end()) dests.push_back(d);
          }
          break;
        }
        case Pattern::Transpose: {
          const uint32_t step = std::max(1u, (tiles - 1) / k);
          dests.push_back((s + 1 + j * step) % tiles);
          break;
        }
        case Pattern::Reduce: {
          if (g.size < 2) {
            dests.push_back((s + 1) % tiles);
          } else {
            const uint32_t offset = (s - g.base + (1u << (j % 5))) % g.size;
            dests.push_back(g.base + offset);
          }
          break;
        }
        case Pattern::Halo:
          dests.push_back((s + 1 + j) % tiles);
          break;
      }
      dests.erase(std::remove(dests.begin(), dests.end(), s), dests.end());
      if (dests.empty()) continue;
      b.add(s, dests, random.log_between(kind.words_lo, kind.words_hi), stride);
    }
  }
}

}  // namespace

arch::Capture synthesize_transformer(const SynthOptions& options, const arch::MachineDescription& machine,
                                     uint32_t tiles, uint32_t phases) {
  // The seed capture's proportions: 7 of 80 phases before the layer body, 34 in it.
  uint32_t before = 0;
  uint32_t body = 0;
  if (phases >= 3) {
    before = std::max(1u, (phases * 7 + 40) / 80);
    body = std::max(1u, (phases * 34 + 40) / 80);
  } else if (phases == 2) {
    body = 1;
  }
  const SynthRegions regions = SynthRegions::of(machine);
  arch::Capture capture;
  capture.machine_name = machine.name;
  capture.phases.resize(phases);
  for (uint32_t p = 0; p < phases; ++p) {
    const bool in_body = p >= before && p < before + body;
    const auto& kinds = p < before ? embed_kinds() : in_body ? layer_kinds() : head_kinds();
    const uint32_t index = p < before ? p : in_body ? p - before : p - before - body;
    const Kind& kind = kinds[index % kinds.size()];
    arch::CapturePhase& phase = capture.phases[p];
    phase.id = p;
    phase.label = kind.label;
    if (index >= kinds.size()) phase.label += ".part" + std::to_string(index / kinds.size() + 1);
    phase.operation = kind.operation;
    phase.execution_count = in_body ? kLayers : 1;
    phase.iterations = in_body && kind.iterated ? kLayers : 1;
    SynthRandom random = synth_stream(options.seed, kTransformerStream, p);
    // Per-layer weights of one tile lie one after another: 2, 4 or 8 KiB apart.
    const uint32_t stride = phase.iterations > 1 ? 2048u << random.below(3) : 0;
    SynthPhaseBuilder builder(regions, tiles, random, phase);
    emit(kind, builder, random, tiles, stride);
  }
  return capture;
}

}  // namespace lockstep::workload
