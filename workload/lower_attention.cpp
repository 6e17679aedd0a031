// Attention sharded by head: head h runs on its own group of tiles, each taking a balanced
// block of query rows. Phases:
//   attn.qk      : owners multicast every row's K_h slice to all of head h's tiles, and
//                  send its Q_h slice to the tile holding that query row;
//   gemm_fp16    : scores = Q_h K_h^T (FP32), softmax -> FP16 probabilities;
//   attn.v       : owners multicast V_h slices into the same buffer K_h used;
//   gemm_fp16    : context = P V_h (FP16);
//   attn.context : each context row slice goes back to its owner, columns h * head_dim.
#include <algorithm>

#include "workload/lower_context.hpp"
#include "workload/scratch_liveness.hpp"

namespace lockstep::workload {

void emit_attention(LowerContext& context, const Activation& qkv, const Activation& context_out,
                    uint32_t tile_offset) {
  const Workload& w = context.workload;
  const uint32_t rows = w.rows();
  const uint32_t heads = w.heads;
  const uint32_t dh = w.head_dim();
  const uint32_t hidden = w.hidden;
  const uint32_t group = std::max(1u, context.tiles / heads);
  const uint32_t query_tiles = std::min(group, rows);
  const auto head_tile = [&](uint32_t h, uint32_t i) {
    return (tile_offset + h * group + i) % context.tiles;
  };

  context.memory.begin_scratch();
  const size_t slots = size_t{heads} * query_tiles;
  std::vector<uint32_t> kv(slots), q(slots), scores(slots), probs(slots), ctx(slots);
  for (uint32_t h = 0; h < heads; ++h) {
    for (uint32_t i = 0; i < query_tiles; ++i) {
      const size_t s = size_t{h} * query_tiles + i;
      const uint32_t tile = head_tile(h, i);
      const uint32_t n = balanced_part(rows, query_tiles, i).size();
      // Steps: 0 qk phase, 1 scores gemm, 2 softmax, 3 v phase, 4 context gemm, 5 context
      // phase. The probabilities reuse the queries' memory, the context the scores'
      // (workload/scratch_liveness.hpp).
      const std::vector<ScratchBuffer> buffers = {
          {"layer.attn.kv", uint64_t{rows} * dh * kHalf, 0, 4},
          {"layer.attn.q", uint64_t{n} * dh * kHalf, 0, 1},
          {"layer.attn.scores", uint64_t{n} * rows * kFloat, 1, 2},
          {"layer.attn.probs", uint64_t{n} * rows * kHalf, 2, 4},
          {"layer.attn.ctx", uint64_t{n} * dh * kHalf, 4, 5}};
      const auto address = place_scratch(context.memory, tile, buffers, colour_by_liveness(buffers, {}), {});
      kv[s] = address[0];
      q[s] = address[1];
      scores[s] = address[2];
      probs[s] = address[3];
      ctx[s] = address[4];
    }
  }

  // K_h (column offset hidden) or V_h (2 * hidden) of every row to all of head h's tiles.
  const auto multicast = [&](size_t phase, uint32_t column_base) {
    for (uint32_t r = 0; r < rows; ++r) {
      const uint32_t owner = context.owner_of_row(r);
      const uint32_t owner_tile = context.owner_tile(owner);
      const uint32_t local = r - context.owner_rows(owner).begin;
      for (uint32_t h = 0; h < heads; ++h) {
        const uint32_t source = qkv.address[owner] + (local * qkv.columns + column_base + h * dh) * kHalf;
        std::vector<arch::Destination> dests;
        for (uint32_t i = 0; i < query_tiles; ++i) {
          const size_t s = size_t{h} * query_tiles + i;
          const uint32_t tile = head_tile(h, i);
          const uint32_t address = kv[s] + r * dh * kHalf;
          if (tile == owner_tile) {
            context.kernel(tile, "copy", {{address, false}, {source, false}}, {int64_t{dh} * kHalf});
          } else if (std::none_of(dests.begin(), dests.end(),
                                  [&](const arch::Destination& d) { return d.tile == tile; })) {
            dests.push_back({tile, address});
          }
        }
        if (!dests.empty()) context.transfer(phase, owner_tile, source, std::move(dests), dh / 2);
      }
    }
  };

  const size_t qk = context.phase("layer.attn.qk", "attention");
  multicast(qk, hidden);
  for (uint32_t r = 0; r < rows; ++r) {
    const uint32_t owner = context.owner_of_row(r);
    const uint32_t owner_tile = context.owner_tile(owner);
    const uint32_t local = r - context.owner_rows(owner).begin;
    const uint32_t i = balanced_part_of(rows, query_tiles, r);
    const uint32_t within = r - balanced_part(rows, query_tiles, i).begin;
    for (uint32_t h = 0; h < heads; ++h) {
      const size_t s = size_t{h} * query_tiles + i;
      const uint32_t tile = head_tile(h, i);
      const uint32_t source = qkv.address[owner] + (local * qkv.columns + h * dh) * kHalf;
      const uint32_t address = q[s] + within * dh * kHalf;
      if (tile == owner_tile) {
        context.kernel(tile, "copy", {{address, false}, {source, false}}, {int64_t{dh} * kHalf});
      } else {
        context.transfer(qk, owner_tile, source, {{tile, address}}, dh / 2);
      }
    }
  }
  for (uint32_t h = 0; h < heads; ++h) {
    for (uint32_t i = 0; i < query_tiles; ++i) {
      const size_t s = size_t{h} * query_tiles + i;
      const uint32_t n = balanced_part(rows, query_tiles, i).size();
      const uint32_t tile = head_tile(h, i);
      // scalars: rows, columns, inner, b transposed, output bits (scores are FP32)
      context.kernel(tile, "gemm_fp16", {{scores[s], false}, {q[s], false}, {kv[s], false}},
                     {n, rows, dh, 1, 32});
      context.kernel(tile, "softmax", {{probs[s], false}, {scores[s], false}}, {n, rows, dh});
    }
  }

  const size_t v = context.phase("layer.attn.v", "attention");
  multicast(v, 2 * hidden);
  for (uint32_t h = 0; h < heads; ++h) {
    for (uint32_t i = 0; i < query_tiles; ++i) {
      const size_t s = size_t{h} * query_tiles + i;
      const uint32_t n = balanced_part(rows, query_tiles, i).size();
      context.kernel(head_tile(h, i), "gemm_fp16", {{ctx[s], false}, {probs[s], false}, {kv[s], false}},
                     {n, dh, rows, 0, 16});
    }
  }

  const size_t back = context.phase("layer.attn.context", "attention");
  for (uint32_t h = 0; h < heads; ++h) {
    for (uint32_t i = 0; i < query_tiles; ++i) {
      const size_t s = size_t{h} * query_tiles + i;
      const uint32_t tile = head_tile(h, i);
      const Span block = balanced_part(rows, query_tiles, i);
      for (uint32_t r = block.begin; r < block.end; ++r) {
        const uint32_t owner = context.owner_of_row(r);
        const uint32_t owner_tile = context.owner_tile(owner);
        const uint32_t local = r - context.owner_rows(owner).begin;
        const uint32_t source = ctx[s] + (r - block.begin) * dh * kHalf;
        const uint32_t address = context_out.address[owner] + (local * hidden + h * dh) * kHalf;
        if (tile == owner_tile) {
          context.kernel(tile, "copy", {{address, false}, {source, false}}, {int64_t{dh} * kHalf});
        } else {
          context.transfer(back, tile, source, {{owner_tile, address}}, dh / 2);
        }
      }
    }
  }
}

}  // namespace lockstep::workload
