// Attention in the stack's blocked form (IPU21-KERNELS.md section 9.1), spread over tiles:
// head h runs on its own group of tiles. Each key block (a multiple of 16 keys, as many as
// the estimate finds fastest) has its own query groups, more for a full block than for a
// short last one, so every block tile's work is about the same; the tile of (key block b,
// query group i) computes that block for the group's queries. The head's rows are then shared
// out over all its tiles for the merge.
// Phases:
//   attn.qkv     : owners multicast every row's Q_h slice to the tile of each key block that
//                  holds its query, and its K_h and V_h slices to the tiles of its key block;
//   gemm_fp16    : S = Q K_b^T (FP16); attention_softmax -> P and (m, l) per row;
//   gemm_fp16    : B = P V_b (FP16);
//   attn.merge   : each block tile sends every merge tile the B rows and states of that
//                  tile's share that it holds;
//   attention_merge : the blocks merged in order and normalised (FP16 context rows);
//   attn.context : each context row slice goes back to its owner, columns h * head_dim.
#include <algorithm>
#include <limits>

#include "arch/kernel_costs.hpp"
#include "workload/lower_context.hpp"
#include "workload/scratch_liveness.hpp"

namespace lockstep::workload {
namespace {

// Head h runs on `group` consecutive tiles from tile_offset + h * group. Key block b's query
// group i is the block slot first[b] + i, on the head's tile at position[first[b] + i]; the
// tile at position p also merges the rows share[p].
struct HeadGrid {
  uint32_t rows = 0;
  uint32_t heads = 0;
  uint32_t dh = 0;  // head dimension
  uint32_t hidden = 0;
  uint32_t group = 0;
  uint32_t key_block = 0;  // keys per block (the last block may be shorter)
  uint32_t blocks = 0;
  std::vector<uint32_t> groups;    // query groups of key block b
  std::vector<uint32_t> first;     // block slot of key block b's query group 0
  uint32_t slots = 0;              // block slots (and used tiles) per head: the sum of groups
  std::vector<uint32_t> position;  // a block slot's tile within the head
  std::vector<uint32_t> slot_at;   // the block slot at a position (the inverse)
  std::vector<Span> share;         // the rows the tile at a position merges
  std::vector<uint32_t> merger;    // the position that merges row r
  uint32_t tile_offset = 0;
  uint32_t tiles = 0;

  uint32_t tile(uint32_t h, uint32_t p) const { return (tile_offset + h * group + p) % tiles; }
  size_t slot(uint32_t h, uint32_t p) const { return size_t{h} * slots + p; }
  uint32_t position_of(uint32_t b, uint32_t i) const { return position[first[b] + i]; }
  Span queries(uint32_t b, uint32_t i) const { return balanced_part(rows, groups[b], i); }
  Span keys(uint32_t b) const { return {b * key_block, std::min(rows, (b + 1) * key_block)}; }

  // Calls f(h, b, i, p) for every block slot, head by head, in tile order.
  template <class F>
  void for_each_slot(F&& f) const {
    for (uint32_t h = 0; h < heads; ++h) {
      for (uint32_t p = 0; p < slots; ++p) {
        const uint32_t k = slot_at[p];
        const uint32_t b = static_cast<uint32_t>(std::upper_bound(first.begin(), first.end(), k) - first.begin()) - 1;
        f(h, b, k - first[b], p);
      }
    }
  }
};

uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// One block tile of n queries and `keys` keys, estimated: the words it receives in the qkv
// phase and sends in the merge phase (one a cycle), and its compute: QK and PV
// (arch/amp_cost.hpp) and the softmax stage (arch/attention_cost.hpp), fitted ones where the
// machine carries them (`build --costs`).
struct BlockTileCost {
  uint64_t receive = 0;
  uint64_t compute = 0;
  uint64_t send = 0;
};
BlockTileCost block_tile_cost(const arch::MachineDescription& machine, uint64_t dh, uint64_t n, uint64_t keys) {
  return {(n + 2 * keys) * dh / 2,
          arch::charged_amp_gemm_cycles(machine, "gemm_fp16", n, dh, keys) +
              arch::charged_amp_gemm_cycles(machine, "gemm_fp16", n, keys, dh) +
              arch::charged_attention_softmax_cycles(machine, n, keys),
          n * (dh / 2 + 2)};
}

// The estimate of a grid with `full` query groups for each full key block and `last` for a
// shorter last one: the phases run one after another, so the slowest block tile's receive,
// plus the slowest compute, plus the merge phase (the slowest send or a merge tile's
// receive), plus the merge.
uint64_t grid_cycles(const arch::MachineDescription& machine, const HeadGrid& grid, uint32_t full, uint32_t last) {
  const uint32_t slots = (grid.blocks - 1) * full + last;
  const uint64_t merged = ceil_div(grid.rows, slots);
  BlockTileCost slowest{0, 0, grid.blocks * merged * (grid.dh / 2 + 2)};
  for (uint32_t b = 0; b < grid.blocks; ++b) {
    const uint32_t groups = b + 1 < grid.blocks ? full : last;
    const BlockTileCost c = block_tile_cost(machine, grid.dh, ceil_div(grid.rows, groups), grid.keys(b).size());
    slowest = {std::max(slowest.receive, c.receive), std::max(slowest.compute, c.compute),
               std::max(slowest.send, c.send)};
  }
  return slowest.receive + slowest.compute + slowest.send +
         arch::charged_attention_merge_cycles(machine, merged, grid.dh, grid.blocks);
}

// A head's grid for key blocks of `key_block` keys; blocks 0 when they outnumber its tiles.
// Every full key block gets the same number of query groups and a shorter last one its own
// (fewer, so that its tiles' work is about the full ones'): the pair with the lowest
// estimate, then the most tiles [decision]. `cycles` gets the estimate (used only to choose
// the key blocks).
HeadGrid grid_for(const arch::MachineDescription& machine, HeadGrid grid, uint32_t key_block, uint64_t& cycles) {
  grid.key_block = key_block;
  grid.blocks = ceil_div(grid.rows, key_block);
  if (grid.blocks > grid.group) {
    grid.blocks = 0;
    return grid;
  }
  // The last block's groups are its own when it is shorter (or the only one).
  const bool own_last = grid.blocks == 1 || grid.keys(grid.blocks - 1).size() < key_block;
  uint32_t best_full = 0, best_last = 0;
  cycles = std::numeric_limits<uint64_t>::max();
  const uint32_t most_full = grid.blocks == 1 ? 1 : std::min(grid.rows, (grid.group - 1) / (grid.blocks - 1));
  for (uint32_t full = 1; full <= most_full; ++full) {
    const uint32_t room = std::min(grid.rows, grid.group - (grid.blocks - 1) * full);
    const uint32_t fewest = own_last ? 1 : full;
    const uint32_t most = own_last ? room : std::min(full, room);
    for (uint32_t last = fewest; last <= most; ++last) {
      const uint64_t c = grid_cycles(machine, grid, full, last);
      if (c < cycles || (c == cycles && (grid.blocks - 1) * full + last > (grid.blocks - 1) * best_full + best_last)) {
        cycles = c;
        best_full = full;
        best_last = last;
      }
    }
  }
  grid.groups.assign(grid.blocks, best_full);
  grid.groups.back() = best_last;
  grid.first.assign(grid.blocks, 0);
  for (uint32_t b = 1; b < grid.blocks; ++b) grid.first[b] = grid.first[b - 1] + grid.groups[b - 1];
  grid.slots = grid.first.back() + grid.groups.back();
  return grid;
}

// Which tile merges which rows: the head's rows in one balanced part per block slot, each part
// to a slot that holds all its rows already (the first free one in block order), so that its
// own B rows are a local copy; a part no free slot holds goes to a free slot left over. Tiles
// are numbered by block 0's query groups: the slots of blocks with as many groups under their
// group i, another block's slot under the group of its middle row. With equal groups, tile
// i * blocks + b holds (b, i) and merges part b of group i's rows.
void arrange_merges(HeadGrid& grid) {
  std::vector<std::vector<uint32_t>> under(grid.groups[0]);  // block slots by reference group
  std::vector<std::vector<uint32_t>> others(grid.groups[0]);
  for (uint32_t b = 0; b < grid.blocks; ++b) {
    for (uint32_t i = 0; i < grid.groups[b]; ++i) {
      const Span q = grid.queries(b, i);
      const uint32_t middle = balanced_part_of(grid.rows, grid.groups[0], (q.begin + q.end - 1) / 2);
      (grid.groups[b] == grid.groups[0] ? under[i] : others[middle]).push_back(grid.first[b] + i);
    }
  }
  grid.position.assign(grid.slots, 0);
  grid.slot_at.clear();
  for (uint32_t r = 0; r < grid.groups[0]; ++r) {
    for (const auto* list : {&under[r], &others[r]}) {
      for (const uint32_t k : *list) {
        grid.position[k] = static_cast<uint32_t>(grid.slot_at.size());
        grid.slot_at.push_back(k);
      }
    }
  }
  std::vector<uint32_t> slot_of_part(grid.slots, grid.slots);
  std::vector<bool> used(grid.slots, false);
  for (uint32_t j = 0; j < grid.slots; ++j) {
    const Span part = balanced_part(grid.rows, grid.slots, j);
    for (uint32_t b = 0; b < grid.blocks && part.size() > 0; ++b) {
      const uint32_t i = balanced_part_of(grid.rows, grid.groups[b], part.begin);
      const uint32_t k = grid.first[b] + i;
      if (!used[k] && grid.queries(b, i).end >= part.end) {
        used[k] = true;
        slot_of_part[j] = k;
        break;
      }
    }
  }
  uint32_t free_slot = 0;
  grid.share.assign(grid.slots, Span{});
  grid.merger.assign(grid.rows, 0);
  for (uint32_t j = 0; j < grid.slots; ++j) {
    if (slot_of_part[j] == grid.slots) {
      while (used[free_slot]) ++free_slot;
      used[free_slot] = true;
      slot_of_part[j] = free_slot;
    }
    const uint32_t p = grid.position[slot_of_part[j]];
    grid.share[p] = balanced_part(grid.rows, grid.slots, j);
    for (uint32_t row = grid.share[p].begin; row < grid.share[p].end; ++row) grid.merger[row] = p;
  }
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
  // section 9.1: the flash blocking's 64, or the materialised form's padded count), the
  // fastest by the estimate [decision].
  HeadGrid best;
  uint64_t best_cycles = std::numeric_limits<uint64_t>::max();
  for (uint32_t blocks = 1; blocks <= std::min(grid.group, grid.rows); ++blocks) {
    uint64_t cycles = 0;
    const HeadGrid candidate = grid_for(context.machine, grid, 16 * ceil_div(ceil_div(grid.rows, blocks), 16), cycles);
    if (candidate.blocks != blocks) continue;
    if (cycles < best_cycles) {
      best_cycles = cycles;
      best = candidate;
    }
  }
  arrange_merges(best);
  return best;
}

// Scratch addresses per slot.
struct AttentionScratch {
  explicit AttentionScratch(size_t slots)
      : q(slots),
        k(slots),
        v(slots),
        scores(slots),
        state(slots),
        values(slots),
        blocks(slots),
        states(slots),
        ctx(slots) {}
  std::vector<uint32_t> q, k, v, scores, state, values, blocks, states, ctx;
};

AttentionScratch place_attention_scratch(LowerContext& context, const HeadGrid& grid) {
  const uint32_t dh = grid.dh;
  AttentionScratch scratch(size_t{grid.heads} * grid.slots);
  // Steps: 0 qkv phase, 1 QK gemm, 2 softmax stage, 3 PV gemm, 4 merge phase (and the local
  // copies after it), 5 merge, 6 context phase. The weights P overwrite the scores S in
  // place. A tile sends its B rows and states while receiving the merge's, so those stay in
  // different memory elements (hazard 2).
  const std::vector<ApartPair> apart = {{5, 6}, {5, 7}, {4, 6}, {4, 7}};
  grid.for_each_slot([&](uint32_t h, uint32_t b, uint32_t i, uint32_t m) {
    const uint64_t n = grid.queries(b, i).size();
    const uint64_t keys = grid.keys(b).size();
    const uint64_t merged = grid.share[m].size();
    const std::vector<ScratchBuffer> buffers = {{"layer.attn.q", n * dh * kHalf, 0, 1},
                                                {"layer.attn.k", keys * dh * kHalf, 0, 1},
                                                {"layer.attn.v", keys * dh * kHalf, 0, 3},
                                                {"layer.attn.scores", n * keys * kHalf, 1, 3},
                                                {"layer.attn.state", n * 2 * kFloat, 2, 4},
                                                {"layer.attn.values", n * dh * kHalf, 3, 4},
                                                {"layer.attn.blocks", grid.blocks * merged * dh * kHalf, 4, 5},
                                                {"layer.attn.states", grid.blocks * merged * 2 * kFloat, 4, 5},
                                                {"layer.attn.ctx", merged * dh * kHalf, 5, 6}};
    const uint32_t tile = grid.tile(h, m);
    const auto address = place_scratch(context.memory, tile, buffers, colour_by_liveness(buffers, apart), apart);
    const size_t s = grid.slot(h, m);
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

// Key blocks with the same number of query groups, in block order: their tiles of one row
// receive its Q slice together, in one multicast.
std::vector<std::vector<uint32_t>> blocks_by_group_count(const HeadGrid& grid) {
  std::vector<std::vector<uint32_t>> sets;
  for (uint32_t b = 0; b < grid.blocks; ++b) {
    auto same = std::find_if(sets.begin(), sets.end(),
                             [&](const std::vector<uint32_t>& set) { return grid.groups[set[0]] == grid.groups[b]; });
    if (same == sets.end()) {
      sets.push_back({b});
    } else {
      same->push_back(b);
    }
  }
  return sets;
}

// Every row's Q_h slice to the tile of each key block that holds its query, K_h and V_h
// slices to every tile of its key block. A row's Q goes out in one multicast per group count:
// one multicast to every block would make each whole key block wait for the tiles of another
// split, whose rows fall in two of its groups (the transfers of a multicast start together).
void send_head_slices(LowerContext& context, const HeadGrid& grid, const Activation& qkv,
                      const AttentionScratch& scratch, size_t phase) {
  const uint32_t dh = grid.dh;
  const std::vector<std::vector<uint32_t>> query_multicasts = blocks_by_group_count(grid);
  std::vector<uint32_t> query_slot(grid.blocks), query_row(grid.blocks);
  for (uint32_t r = 0; r < grid.rows; ++r) {
    const uint32_t owner = context.owner_of_row(r);
    const uint32_t owner_tile = context.owner_tile(owner);
    const uint32_t row_start = qkv.address[owner] + (r - context.owner_rows(owner).begin) * qkv.columns * kHalf;
    for (uint32_t b = 0; b < grid.blocks; ++b) {
      const uint32_t i = balanced_part_of(grid.rows, grid.groups[b], r);
      query_slot[b] = grid.position_of(b, i);
      query_row[b] = r - grid.queries(b, i).begin;
    }
    const uint32_t kb = r / grid.key_block;
    const uint32_t key = r - grid.keys(kb).begin;
    for (uint32_t h = 0; h < grid.heads; ++h) {
      for (const std::vector<uint32_t>& blocks : query_multicasts) {
        std::vector<arch::Destination> q;
        for (const uint32_t b : blocks) {
          const uint32_t m = query_slot[b];
          q.push_back({grid.tile(h, m), scratch.q[grid.slot(h, m)] + query_row[b] * dh * kHalf});
        }
        deliver(context, phase, owner_tile, row_start + h * dh * kHalf, q, dh / 2);
      }
      std::vector<arch::Destination> k, v;
      for (uint32_t i = 0; i < grid.groups[kb]; ++i) {
        const uint32_t m = grid.position_of(kb, i);
        k.push_back({grid.tile(h, m), scratch.k[grid.slot(h, m)] + key * dh * kHalf});
        v.push_back({grid.tile(h, m), scratch.v[grid.slot(h, m)] + key * dh * kHalf});
      }
      deliver(context, phase, owner_tile, row_start + (grid.hidden + h * dh) * kHalf, k, dh / 2);
      deliver(context, phase, owner_tile, row_start + (2 * grid.hidden + h * dh) * kHalf, v, dh / 2);
    }
  }
}

// S = Q K_b^T, the softmax stage, B = P V_b: every slot's block.
void emit_blocks(LowerContext& context, const HeadGrid& grid, const AttentionScratch& scratch) {
  grid.for_each_slot([&](uint32_t h, uint32_t b, uint32_t i, uint32_t m) {
    const size_t s = grid.slot(h, m);
    const uint32_t tile = grid.tile(h, m);
    const int64_t n = grid.queries(b, i).size();
    const int64_t keys = grid.keys(b).size();
    // gemm_fp16 scalars: rows, columns, inner, b transposed, output bits. Keys and values in
    // interleaved memory take the AMP's interleaved-weights cost (K 11.1).
    const auto gemm = [&](uint32_t b_address) {
      return b_address >= context.machine.interleaved_base ? "gemm_fp16_interleaved" : "gemm_fp16";
    };
    context.kernel(tile, gemm(scratch.k[s]), {{scratch.scores[s], false}, {scratch.q[s], false}, {scratch.k[s], false}},
                   {n, keys, grid.dh, 1, 16});
    context.kernel(tile, "attention_softmax",
                   {{scratch.scores[s], false}, {scratch.state[s], false}, {scratch.scores[s], false}},
                   {n, keys, grid.dh});
    context.kernel(tile, gemm(scratch.v[s]),
                   {{scratch.values[s], false}, {scratch.scores[s], false}, {scratch.v[s], false}},
                   {n, grid.dh, keys, 0, 16});
  });
}

// Block tile (b, i) sends each merge tile whose share overlaps its queries the B rows and
// states of the overlap, into block b's place of that tile's buffers (a local copy where it
// merges them itself).
void send_blocks(LowerContext& context, const HeadGrid& grid, const AttentionScratch& scratch, size_t phase) {
  const uint32_t dh = grid.dh;
  grid.for_each_slot([&](uint32_t h, uint32_t b, uint32_t i, uint32_t m) {
    const size_t s = grid.slot(h, m);
    const uint32_t tile = grid.tile(h, m);
    const Span queries = grid.queries(b, i);
    for (uint32_t begin = queries.begin; begin < queries.end;) {
      const uint32_t j = grid.merger[begin];
      const Span share = grid.share[j];
      const uint32_t end = std::min(share.end, queries.end);
      const size_t target = grid.slot(h, j);
      const uint32_t at = b * share.size() + (begin - share.begin);  // row in the target's blocks
      deliver(context, phase, tile, scratch.values[s] + (begin - queries.begin) * dh * kHalf,
              {{grid.tile(h, j), scratch.blocks[target] + at * dh * kHalf}}, (end - begin) * dh / 2);
      deliver(context, phase, tile, scratch.state[s] + (begin - queries.begin) * 2 * kFloat,
              {{grid.tile(h, j), scratch.states[target] + at * 2 * kFloat}}, (end - begin) * 2);
      begin = end;
    }
  });
}

void emit_merges(LowerContext& context, const HeadGrid& grid, const AttentionScratch& scratch) {
  for (uint32_t h = 0; h < grid.heads; ++h) {
    for (uint32_t m = 0; m < grid.slots; ++m) {
      const int64_t rows = grid.share[m].size();
      if (rows == 0) continue;
      const size_t s = grid.slot(h, m);
      context.kernel(grid.tile(h, m), "attention_merge",
                     {{scratch.ctx[s], false}, {scratch.blocks[s], false}, {scratch.states[s], false}},
                     {rows, grid.dh, grid.blocks});
    }
  }
}

// Each merged context row slice back to its owner, at columns h * head_dim.
void return_context(LowerContext& context, const HeadGrid& grid, const Activation& context_out,
                    const AttentionScratch& scratch, size_t phase) {
  const uint32_t dh = grid.dh;
  for (uint32_t h = 0; h < grid.heads; ++h) {
    for (uint32_t m = 0; m < grid.slots; ++m) {
      const size_t s = grid.slot(h, m);
      const Span share = grid.share[m];
      for (uint32_t r = share.begin; r < share.end; ++r) {
        const uint32_t owner = context.owner_of_row(r);
        const uint32_t local = r - context.owner_rows(owner).begin;
        const uint32_t address = context_out.address[owner] + (local * grid.hidden + h * dh) * kHalf;
        deliver(context, phase, grid.tile(h, m), scratch.ctx[s] + (r - share.begin) * dh * kHalf,
                {{context.owner_tile(owner), address}}, dh / 2);
      }
    }
  }
}

}  // namespace

void emit_attention(LowerContext& context, const Activation& qkv, const Activation& context_out, uint32_t tile_offset) {
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
