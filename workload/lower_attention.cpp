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
namespace {

// Head h runs on `group` consecutive tiles from tile_offset + h * group; query rows are
// balanced over the first `query_tiles` of them.
struct HeadGrid {
  uint32_t rows = 0;
  uint32_t heads = 0;
  uint32_t dh = 0;  // head dimension
  uint32_t hidden = 0;
  uint32_t group = 0;
  uint32_t query_tiles = 0;
  uint32_t tile_offset = 0;
  uint32_t tiles = 0;

  uint32_t head_tile(uint32_t h, uint32_t i) const { return (tile_offset + h * group + i) % tiles; }
  size_t slot(uint32_t h, uint32_t i) const { return size_t{h} * query_tiles + i; }

  // Calls f(tile, slot, query rows) for each head's query blocks, head by head.
  template <class F>
  void for_each_query_block(F&& f) const {
    for (uint32_t h = 0; h < heads; ++h) {
      for (uint32_t i = 0; i < query_tiles; ++i) {
        f(head_tile(h, i), slot(h, i), static_cast<uint32_t>(balanced_part(rows, query_tiles, i).size()));
      }
    }
  }
};

HeadGrid head_grid(const LowerContext& context, uint32_t tile_offset) {
  const Workload& w = context.workload;
  HeadGrid grid;
  grid.rows = w.rows();
  grid.heads = w.heads;
  grid.dh = w.head_dim();
  grid.hidden = w.hidden;
  grid.group = std::max(1u, context.tiles / grid.heads);
  grid.query_tiles = std::min(grid.group, grid.rows);
  grid.tile_offset = tile_offset;
  grid.tiles = context.tiles;
  return grid;
}

// Scratch addresses per (head, query tile) slot.
struct AttentionScratch {
  explicit AttentionScratch(size_t slots)
      : kv(slots), q(slots), scores(slots), probs(slots), ctx(slots) {}
  std::vector<uint32_t> kv, q, scores, probs, ctx;
};

AttentionScratch place_attention_scratch(LowerContext& context, const HeadGrid& grid) {
  const uint32_t rows = grid.rows;
  const uint32_t dh = grid.dh;
  AttentionScratch scratch(size_t{grid.heads} * grid.query_tiles);
  for (uint32_t h = 0; h < grid.heads; ++h) {
    for (uint32_t i = 0; i < grid.query_tiles; ++i) {
      const size_t s = grid.slot(h, i);
      const uint32_t tile = grid.head_tile(h, i);
      const uint32_t n = balanced_part(rows, grid.query_tiles, i).size();
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
      scratch.kv[s] = address[0];
      scratch.q[s] = address[1];
      scratch.scores[s] = address[2];
      scratch.probs[s] = address[3];
      scratch.ctx[s] = address[4];
    }
  }
  return scratch;
}

// K_h (column offset hidden) or V_h (2 * hidden) of every row to all of head h's tiles.
void multicast_head_slices(LowerContext& context, const HeadGrid& grid, const Activation& qkv,
                           const AttentionScratch& scratch, size_t phase, uint32_t column_base) {
  const uint32_t dh = grid.dh;
  for (uint32_t r = 0; r < grid.rows; ++r) {
    const uint32_t owner = context.owner_of_row(r);
    const uint32_t owner_tile = context.owner_tile(owner);
    const uint32_t local = r - context.owner_rows(owner).begin;
    for (uint32_t h = 0; h < grid.heads; ++h) {
      const uint32_t source = qkv.address[owner] + (local * qkv.columns + column_base + h * dh) * kHalf;
      std::vector<arch::Destination> dests;
      for (uint32_t i = 0; i < grid.query_tiles; ++i) {
        const size_t s = grid.slot(h, i);
        const uint32_t tile = grid.head_tile(h, i);
        const uint32_t address = scratch.kv[s] + r * dh * kHalf;
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
}

// Each row's Q_h slice to the tile of head h holding that query row.
void send_queries(LowerContext& context, const HeadGrid& grid, const Activation& qkv,
                  const AttentionScratch& scratch, size_t phase) {
  const uint32_t rows = grid.rows;
  const uint32_t dh = grid.dh;
  for (uint32_t r = 0; r < rows; ++r) {
    const uint32_t owner = context.owner_of_row(r);
    const uint32_t owner_tile = context.owner_tile(owner);
    const uint32_t local = r - context.owner_rows(owner).begin;
    const uint32_t i = balanced_part_of(rows, grid.query_tiles, r);
    const uint32_t within = r - balanced_part(rows, grid.query_tiles, i).begin;
    for (uint32_t h = 0; h < grid.heads; ++h) {
      const size_t s = grid.slot(h, i);
      const uint32_t tile = grid.head_tile(h, i);
      const uint32_t source = qkv.address[owner] + (local * qkv.columns + h * dh) * kHalf;
      const uint32_t address = scratch.q[s] + within * dh * kHalf;
      if (tile == owner_tile) {
        context.kernel(tile, "copy", {{address, false}, {source, false}}, {int64_t{dh} * kHalf});
      } else {
        context.transfer(phase, owner_tile, source, {{tile, address}}, dh / 2);
      }
    }
  }
}

// scores = Q_h K_h^T (FP32), then softmax into FP16 probabilities.
void emit_probabilities(LowerContext& context, const HeadGrid& grid,
                        const AttentionScratch& scratch) {
  grid.for_each_query_block([&](uint32_t tile, size_t s, uint32_t n) {
    // scalars: rows, columns, inner, b transposed, output bits (scores are FP32)
    context.kernel(tile, "gemm_fp16",
                   {{scratch.scores[s], false}, {scratch.q[s], false}, {scratch.kv[s], false}},
                   {n, grid.rows, grid.dh, 1, 32});
    context.kernel(tile, "softmax", {{scratch.probs[s], false}, {scratch.scores[s], false}},
                   {n, grid.rows, grid.dh});
  });
}

// context = P V_h (FP16).
void emit_context_gemms(LowerContext& context, const HeadGrid& grid,
                        const AttentionScratch& scratch) {
  grid.for_each_query_block([&](uint32_t tile, size_t s, uint32_t n) {
    context.kernel(tile, "gemm_fp16",
                   {{scratch.ctx[s], false}, {scratch.probs[s], false}, {scratch.kv[s], false}},
                   {n, grid.dh, grid.rows, 0, 16});
  });
}

// Each context row slice back to its owner, at columns h * head_dim.
void return_context(LowerContext& context, const HeadGrid& grid, const Activation& context_out,
                    const AttentionScratch& scratch, size_t phase) {
  const uint32_t dh = grid.dh;
  for (uint32_t h = 0; h < grid.heads; ++h) {
    for (uint32_t i = 0; i < grid.query_tiles; ++i) {
      const size_t s = grid.slot(h, i);
      const uint32_t tile = grid.head_tile(h, i);
      const Span block = balanced_part(grid.rows, grid.query_tiles, i);
      for (uint32_t r = block.begin; r < block.end; ++r) {
        const uint32_t owner = context.owner_of_row(r);
        const uint32_t owner_tile = context.owner_tile(owner);
        const uint32_t local = r - context.owner_rows(owner).begin;
        const uint32_t source = scratch.ctx[s] + (r - block.begin) * dh * kHalf;
        const uint32_t address =
            context_out.address[owner] + (local * grid.hidden + h * dh) * kHalf;
        if (tile == owner_tile) {
          context.kernel(tile, "copy", {{address, false}, {source, false}}, {int64_t{dh} * kHalf});
        } else {
          context.transfer(phase, tile, source, {{owner_tile, address}}, dh / 2);
        }
      }
    }
  }
}

}  // namespace

void emit_attention(LowerContext& context, const Activation& qkv, const Activation& context_out,
                    uint32_t tile_offset) {
  const HeadGrid grid = head_grid(context, tile_offset);
  context.memory.begin_scratch();
  const AttentionScratch scratch = place_attention_scratch(context, grid);

  const size_t qk = context.phase("layer.attn.qk", "attention");
  multicast_head_slices(context, grid, qkv, scratch, qk, grid.hidden);
  send_queries(context, grid, qkv, scratch, qk);
  emit_probabilities(context, grid, scratch);

  const size_t v = context.phase("layer.attn.v", "attention");
  multicast_head_slices(context, grid, qkv, scratch, v, 2 * grid.hidden);
  emit_context_gemms(context, grid, scratch);

  const size_t back = context.phase("layer.attn.context", "attention");
  return_context(context, grid, context_out, scratch, back);
}

}  // namespace lockstep::workload
