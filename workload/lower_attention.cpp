// Attention in the stack's blocked form (IPU21-KERNELS.md section 9.1), spread over tiles:
// head h runs on its own group of tiles, a grid of query groups x key blocks (multiples of
// 16 keys, as many as the estimate finds fastest). The tile of (query group i, key block b)
// computes that block for the group's queries, and the tiles of group i then merge the
// blocks, each for a balanced share of the group's rows.
// Phases:
//   attn.qkv     : owners multicast every row's Q_h slice to the tiles of its query group,
//                  and its K_h and V_h slices to the tiles of its key block;
//   gemm_fp16    : S = Q K_b^T (FP16); attention_softmax -> P and (m, l) per row;
//   gemm_fp16    : B = P V_b (FP16);
//   attn.merge   : each block tile sends every merge tile of its group the B rows and states
//                  of that tile's share;
//   attention_merge : the blocks merged in order and normalised (FP16 context rows);
//   attn.context : each context row slice goes back to its owner, columns h * head_dim.
#include <algorithm>
#include <limits>

#include "arch/kernel_costs.hpp"

#include "workload/lower_context.hpp"
#include "workload/scratch_liveness.hpp"

namespace lockstep::workload {
namespace {

// Head h runs on `group` consecutive tiles from tile_offset + h * group; slot (i, b) of a
// head, query group i and key block b, is its tile i * blocks + b.
struct HeadGrid {
  uint32_t rows = 0;
  uint32_t heads = 0;
  uint32_t dh = 0;  // head dimension
  uint32_t hidden = 0;
  uint32_t group = 0;
  uint32_t key_block = 0;  // keys per block (the last block may be shorter)
  uint32_t blocks = 0;
  uint32_t query_groups = 0;
  uint32_t tile_offset = 0;
  uint32_t tiles = 0;

  uint32_t tile(uint32_t h, uint32_t i, uint32_t b) const {
    return (tile_offset + h * group + i * blocks + b) % tiles;
  }
  size_t slot(uint32_t h, uint32_t i, uint32_t b) const { return (size_t{h} * query_groups + i) * blocks + b; }
  Span queries(uint32_t i) const { return balanced_part(rows, query_groups, i); }
  Span keys(uint32_t b) const { return {b * key_block, std::min(rows, (b + 1) * key_block)}; }
  // The rows of query group i that block tile j merges, relative to the group's first row.
  Span merged(uint32_t i, uint32_t j) const { return balanced_part(queries(i).size(), blocks, j); }

  // Calls f(h, i, b) for every slot, head by head.
  template <class F>
  void for_each_slot(F&& f) const {
    for (uint32_t h = 0; h < heads; ++h) {
      for (uint32_t i = 0; i < query_groups; ++i) {
        for (uint32_t b = 0; b < blocks; ++b) f(h, i, b);
      }
    }
  }
};

uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// A head's grid for key blocks of `key_block` keys; query_groups 0 when it does not fit.
HeadGrid grid_for(HeadGrid grid, uint32_t key_block) {
  grid.key_block = key_block;
  grid.blocks = ceil_div(grid.rows, key_block);
  grid.query_groups = grid.blocks > grid.group ? 0 : std::min(grid.group / grid.blocks, grid.rows);
  return grid;
}

// The estimated cycles of one block tile with the most rows, through the three phases: the
// words it receives (one a cycle), QK and PV (arch/amp_cost.hpp), the softmax stage and the
// merge (arch/attention_cost.hpp), fitted ones where the machine carries them (`build
// --costs`). Only used to choose the key blocks.
uint64_t estimated_cycles(const arch::MachineDescription& machine, const HeadGrid& grid) {
  const uint64_t n = ceil_div(grid.rows, grid.query_groups);
  const uint64_t keys = grid.key_block;
  const uint64_t merged = ceil_div(static_cast<uint32_t>(n), grid.blocks);
  const uint64_t words = (n + 2 * keys) * grid.dh / 2 + grid.blocks * merged * (grid.dh / 2 + 2);
  return words + arch::charged_amp_gemm_cycles(machine, "gemm_fp16", n, grid.dh, keys) +
         arch::charged_amp_gemm_cycles(machine, "gemm_fp16", n, keys, grid.dh) +
         arch::charged_attention_softmax_cycles(machine, n, keys) +
         arch::charged_attention_merge_cycles(machine, merged, grid.dh, grid.blocks);
}

HeadGrid head_grid(const LowerContext& context, uint32_t tile_offset) {
  const Workload& w = context.workload;
  HeadGrid grid;
  grid.rows = w.rows();
  grid.heads = w.heads;
  grid.dh = w.head_dim();
  grid.hidden = w.hidden;
  grid.group = std::max(1u, context.tiles / grid.heads);
  grid.tile_offset = tile_offset;
  grid.tiles = context.tiles;
  // Every count of key blocks a head's tiles can hold, each block a multiple of 16 keys (K
  // section 9.1: the flash blocking's 64, or the materialised form's padded count; SigLIP's
  // 729 keys in 12 blocks are the stack's 64-key blocks), the fastest by the estimate
  // [decision].
  HeadGrid best;
  uint64_t best_cycles = std::numeric_limits<uint64_t>::max();
  for (uint32_t blocks = 1; blocks <= std::min(grid.group, grid.rows); ++blocks) {
    const HeadGrid candidate = grid_for(grid, 16 * ceil_div(ceil_div(grid.rows, blocks), 16));
    if (candidate.query_groups == 0 || candidate.blocks != blocks) continue;
    if (const uint64_t cycles = estimated_cycles(context.machine, candidate); cycles < best_cycles) {
      best_cycles = cycles;
      best = candidate;
    }
  }
  return best;
}

// Scratch addresses per slot.
struct AttentionScratch {
  explicit AttentionScratch(size_t slots)
      : q(slots), k(slots), v(slots), scores(slots), state(slots), values(slots), blocks(slots), states(slots),
        ctx(slots) {}
  std::vector<uint32_t> q, k, v, scores, state, values, blocks, states, ctx;
};

AttentionScratch place_attention_scratch(LowerContext& context, const HeadGrid& grid) {
  const uint32_t dh = grid.dh;
  AttentionScratch scratch(size_t{grid.heads} * grid.query_groups * grid.blocks);
  // Steps: 0 qkv phase, 1 QK gemm, 2 softmax stage, 3 PV gemm, 4 merge phase (and the local
  // copies after it), 5 merge, 6 context phase. The weights P overwrite the scores S in
  // place. A tile sends its B rows and states while receiving the merge's, so those stay in
  // different memory elements (hazard 2).
  const std::vector<ApartPair> apart = {{5, 6}, {5, 7}, {4, 6}, {4, 7}};
  grid.for_each_slot([&](uint32_t h, uint32_t i, uint32_t b) {
    const uint64_t n = grid.queries(i).size();
    const uint64_t keys = grid.keys(b).size();
    const uint64_t merged = grid.merged(i, b).size();
    const std::vector<ScratchBuffer> buffers = {
        {"layer.attn.q", n * dh * kHalf, 0, 1},
        {"layer.attn.k", keys * dh * kHalf, 0, 1},
        {"layer.attn.v", keys * dh * kHalf, 0, 3},
        {"layer.attn.scores", n * keys * kHalf, 1, 3},
        {"layer.attn.state", n * 2 * kFloat, 2, 4},
        {"layer.attn.values", n * dh * kHalf, 3, 4},
        {"layer.attn.blocks", grid.blocks * merged * dh * kHalf, 4, 5},
        {"layer.attn.states", grid.blocks * merged * 2 * kFloat, 4, 5},
        {"layer.attn.ctx", merged * dh * kHalf, 5, 6}};
    const uint32_t tile = grid.tile(h, i, b);
    const auto address = place_scratch(context.memory, tile, buffers, colour_by_liveness(buffers, apart), apart);
    const size_t s = grid.slot(h, i, b);
    scratch.q[s] = address[0];
    scratch.k[s] = address[1];
    scratch.v[s] = address[2];
    scratch.scores[s] = address[3];
    scratch.state[s] = address[4];
    scratch.values[s] = address[5];
    scratch.blocks[s] = address[6];
    scratch.states[s] = address[7];
    scratch.ctx[s] = address[8];
  });
  return scratch;
}

// `words` from `source` on `source_tile` to every (tile, address) of `targets`: a local copy
// where the target is the source tile, one multicast transfer to the rest.
void deliver(LowerContext& context, size_t phase, uint32_t source_tile, uint32_t source,
             const std::vector<arch::Destination>& targets, uint32_t words) {
  std::vector<arch::Destination> remote;
  for (const arch::Destination& target : targets) {
    if (target.tile == source_tile) {
      context.kernel(source_tile, "copy", {{target.address, false}, {source, false}}, {int64_t{words} * 4});
    } else {
      remote.push_back(target);
    }
  }
  if (!remote.empty()) context.transfer(phase, source_tile, source, std::move(remote), words);
}

// Every row's Q_h slice to its query group's tiles, K_h and V_h slices to its key block's.
void send_head_slices(LowerContext& context, const HeadGrid& grid, const Activation& qkv,
                      const AttentionScratch& scratch, size_t phase) {
  const uint32_t dh = grid.dh;
  for (uint32_t r = 0; r < grid.rows; ++r) {
    const uint32_t owner = context.owner_of_row(r);
    const uint32_t owner_tile = context.owner_tile(owner);
    const uint32_t row_start = qkv.address[owner] + (r - context.owner_rows(owner).begin) * qkv.columns * kHalf;
    const uint32_t i = balanced_part_of(grid.rows, grid.query_groups, r);
    const uint32_t query = r - grid.queries(i).begin;
    const uint32_t b = r / grid.key_block;
    const uint32_t key = r - grid.keys(b).begin;
    for (uint32_t h = 0; h < grid.heads; ++h) {
      std::vector<arch::Destination> q, k, v;
      for (uint32_t j = 0; j < grid.blocks; ++j) {
        q.push_back({grid.tile(h, i, j), scratch.q[grid.slot(h, i, j)] + query * dh * kHalf});
      }
      for (uint32_t g = 0; g < grid.query_groups; ++g) {
        k.push_back({grid.tile(h, g, b), scratch.k[grid.slot(h, g, b)] + key * dh * kHalf});
        v.push_back({grid.tile(h, g, b), scratch.v[grid.slot(h, g, b)] + key * dh * kHalf});
      }
      deliver(context, phase, owner_tile, row_start + h * dh * kHalf, q, dh / 2);
      deliver(context, phase, owner_tile, row_start + (grid.hidden + h * dh) * kHalf, k, dh / 2);
      deliver(context, phase, owner_tile, row_start + (2 * grid.hidden + h * dh) * kHalf, v, dh / 2);
    }
  }
}

// S = Q K_b^T, the softmax stage, B = P V_b: every slot's block.
void emit_blocks(LowerContext& context, const HeadGrid& grid, const AttentionScratch& scratch) {
  grid.for_each_slot([&](uint32_t h, uint32_t i, uint32_t b) {
    const size_t s = grid.slot(h, i, b);
    const uint32_t tile = grid.tile(h, i, b);
    const int64_t n = grid.queries(i).size();
    const int64_t keys = grid.keys(b).size();
    // gemm_fp16 scalars: rows, columns, inner, b transposed, output bits
    context.kernel(tile, "gemm_fp16", {{scratch.scores[s], false}, {scratch.q[s], false}, {scratch.k[s], false}},
                   {n, keys, grid.dh, 1, 16});
    context.kernel(tile, "attention_softmax",
                   {{scratch.scores[s], false}, {scratch.state[s], false}, {scratch.scores[s], false}},
                   {n, keys, grid.dh});
    context.kernel(tile, "gemm_fp16", {{scratch.values[s], false}, {scratch.scores[s], false}, {scratch.v[s], false}},
                   {n, grid.dh, keys, 0, 16});
  });
}

// Block tile (i, b) sends merge tile (i, j) the B rows and states of j's share, into block
// b's place of j's buffers.
void send_blocks(LowerContext& context, const HeadGrid& grid, const AttentionScratch& scratch, size_t phase) {
  const uint32_t dh = grid.dh;
  grid.for_each_slot([&](uint32_t h, uint32_t i, uint32_t b) {
    const size_t s = grid.slot(h, i, b);
    const uint32_t tile = grid.tile(h, i, b);
    for (uint32_t j = 0; j < grid.blocks; ++j) {
      const Span share = grid.merged(i, j);
      if (share.size() == 0) continue;
      const size_t target = grid.slot(h, i, j);
      const uint32_t target_tile = grid.tile(h, i, j);
      deliver(context, phase, tile, scratch.values[s] + share.begin * dh * kHalf,
              {{target_tile, scratch.blocks[target] + b * share.size() * dh * kHalf}}, share.size() * dh / 2);
      deliver(context, phase, tile, scratch.state[s] + share.begin * 2 * kFloat,
              {{target_tile, scratch.states[target] + b * share.size() * 2 * kFloat}}, share.size() * 2);
    }
  });
}

void emit_merges(LowerContext& context, const HeadGrid& grid, const AttentionScratch& scratch) {
  grid.for_each_slot([&](uint32_t h, uint32_t i, uint32_t j) {
    const int64_t rows = grid.merged(i, j).size();
    if (rows == 0) return;
    const size_t s = grid.slot(h, i, j);
    context.kernel(grid.tile(h, i, j), "attention_merge",
                   {{scratch.ctx[s], false}, {scratch.blocks[s], false}, {scratch.states[s], false}},
                   {rows, grid.dh, grid.blocks});
  });
}

// Each merged context row slice back to its owner, at columns h * head_dim.
void return_context(LowerContext& context, const HeadGrid& grid, const Activation& context_out,
                    const AttentionScratch& scratch, size_t phase) {
  const uint32_t dh = grid.dh;
  grid.for_each_slot([&](uint32_t h, uint32_t i, uint32_t j) {
    const size_t s = grid.slot(h, i, j);
    const Span share = grid.merged(i, j);
    for (uint32_t within = share.begin; within < share.end; ++within) {
      const uint32_t r = grid.queries(i).begin + within;
      const uint32_t owner = context.owner_of_row(r);
      const uint32_t local = r - context.owner_rows(owner).begin;
      const uint32_t address = context_out.address[owner] + (local * grid.hidden + h * dh) * kHalf;
      deliver(context, phase, grid.tile(h, i, j), scratch.ctx[s] + (within - share.begin) * dh * kHalf,
              {{context.owner_tile(owner), address}}, dh / 2);
    }
  });
}

}  // namespace

void emit_attention(LowerContext& context, const Activation& qkv, const Activation& context_out,
                    uint32_t tile_offset) {
  const HeadGrid grid = head_grid(context, tile_offset);
  context.memory.begin_scratch();
  const AttentionScratch scratch = place_attention_scratch(context, grid);

  const size_t slices = context.phase("layer.attn.qkv", "attention");
  send_head_slices(context, grid, qkv, scratch, slices);
  emit_blocks(context, grid, scratch);

  const size_t merge = context.phase("layer.attn.merge", "attention");
  send_blocks(context, grid, scratch, merge);
  emit_merges(context, grid, scratch);

  const size_t back = context.phase("layer.attn.context", "attention");
  return_context(context, grid, context_out, scratch, back);
}

}  // namespace lockstep::workload
