// GEMMs: weights resident on a K x O grid of tiles (block (kb, ob) holds rows kb of the
// reduction dimension and columns ob of the output, for every layer), or on M copies of a
// smaller grid with bigger blocks, each copy holding a share of every block's rows and taking
// one group of each chunk's rows. Per row chunk and group:
//   gather  : owners multicast each row's K-block slices to the O tiles of that block row of
//             the group's grid; with M copies, each copy also sends its share of its block
//             to the others (and copies it to its own block buffer just before);
//   gemm_fp8: every grid tile forms an FP16 partial [group rows, its columns];
//   reduce  : partial rows are split K ways, reducer (j, ob) receives slice j of all K;
//   reduce_sum: sums the K parts, adds the bias, writes FP16;
//   scatter : reducers send each output row slice back to its owner.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "arch/kernel_costs.hpp"
#include "workload/lower_context.hpp"
#include "workload/scratch_liveness.hpp"

namespace lockstep::workload {
namespace {

// Bytes of one partial-sum value. gemm_fp8 accumulates in FP16 (the AMP rule, docs/kernels-gemm.md)
// so its partials are FP16 values whatever their storage; storing them as FP16 rather than FP32
// halves the reduce phase's words and the partial scratch and changes no bit of the output
// (docs/lowering.md, "Choices and their measured effect").
constexpr uint32_t kPartial = kHalf;
constexpr int64_t kPartialBits = 8 * kPartial;

// Columns are split in FP16 pairs so every slice is whole 32-bit words.
Span pair_columns(uint32_t columns, uint32_t parts, uint32_t i) {
  const Span p = balanced_part(columns / 2, parts, i);
  return {2 * p.begin, 2 * p.end};
}
uint32_t max_columns(uint32_t columns, uint32_t parts) { return 2 * ((columns / 2 + parts - 1) / parts); }

// Scratch of one grid tile for a group of `rows`, with the steps of the chunk that write and
// read each buffer: 0 gather, 1 gemm_fp8, 2 reduce, 3 reduce_sum (and epilogue), 4 scatter.
// With row groups, `block` gathers the tile's whole weight block (`block_bytes`, else 0).
// reduce_in holds the other K - 1 blocks' parts of the tile's slice; reduce_sum reads its own
// part from the partial (K 7's first partial), so the partial lives until then. The reduce
// phase sends the partial while receiving into reduce_in, so those two must share no memory
// element (hazard 2). Buffers never live together share memory
// (workload/scratch_liveness.hpp): the gathered input with reduce_in and with reduce_out.
enum GemmBuffer : size_t { kInput, kPartialSum, kReduceIn, kReduceOut, kBlock };
std::vector<ScratchBuffer> chunk_buffers(const std::string& name, uint32_t rows, uint32_t k_blocks,
                                         uint32_t reduce_rows, uint32_t kw, uint32_t ow, uint64_t block_bytes) {
  return {{name + ".input", uint64_t{rows} * kw * kHalf, 0, 1},
          {name + ".partial", uint64_t{rows} * ow * kPartial, 1, 3},
          {name + ".reduce_in", uint64_t{k_blocks - 1} * reduce_rows * ow * kPartial, 2, 3},
          {name + ".reduce_out", uint64_t{reduce_rows} * ow * kHalf, 3, 4},
          {name + ".block", block_bytes, 0, 1}};
}
const std::vector<ApartPair> kChunkApart = {{kPartialSum, kReduceIn}};

// The per-row scratch of a group of `rows`, for choosing the split (the block buffer of row
// groups is per block, not per row, and small).
uint64_t scratch_bytes(uint32_t rows, uint32_t k_blocks, uint32_t kw, uint32_t ow) {
  const uint64_t reduce_rows = (rows + k_blocks - 1) / k_blocks;
  return uint64_t{rows} * kw * kHalf + uint64_t{rows} * ow * kPartial +
         uint64_t{k_blocks - 1} * reduce_rows * ow * kPartial + reduce_rows * ow * kHalf + 64;
}

// A block's K rows [0, kw) shared over its copies in runs of 4 rows (the last share also takes
// the last 2 rows when kw is not a multiple of 4): copy i's share. A share then starts at a
// multiple of 8 bytes of the block (4 rows of an even number of columns), so the stack's 64-bit
// local copy can stage it (`ipu_stack_copy_u64`).
Span block_share(uint32_t kw, uint32_t copies, uint32_t i) {
  const Span quads = balanced_part(kw / 4, copies, i);
  return {4 * quads.begin, i + 1 == copies ? kw : 4 * quads.end};
}

// Copying `bytes` of a share into the block buffer: the stack's 64-bit local copy when whole
// 8-byte words (both ends are 8-aligned then), else Lockstep's 32-bit copy.
uint64_t share_copy_cycles(const arch::MachineDescription& machine, uint64_t bytes) {
  return bytes % 8 == 0 ? arch::stack_local_copy_cycles(bytes) : arch::charged_copy_cycles(machine, bytes);
}

// The planner's estimate of one layer's cycles for a K x O split of a group of `rows`, all
// rows in one chunk: the gather and reduce words a grid tile receives (one word per cycle),
// gemm_fp8's and reduce_sum's cycle models (docs/kernels-gemm.md: one AMP call; K 7's
// schedule), fitted ones where the machine carries them (`build --costs`,
// arch/kernel_costs.hpp); with `copies` of the grid, the block shares a tile receives and the
// copy of its own. Only used to rank splits.
uint64_t estimated_cycles(const arch::MachineDescription& machine, uint32_t rows, uint32_t k_blocks, uint32_t kw,
                          uint32_t ow, uint32_t copies) {
  const uint64_t reduce_rows = (rows + k_blocks - 1) / k_blocks;
  const uint64_t gather = uint64_t{rows} * kw / 2;
  const uint64_t gemm = arch::charged_amp_gemm_cycles(machine, "gemm_fp8", rows, kw, ow);
  const uint64_t reduce = uint64_t{k_blocks - 1} * reduce_rows * ow * kPartial / 4;
  const uint64_t reduce_sum = arch::charged_reduce_sum_cycles(machine, k_blocks, reduce_rows, ow);
  uint64_t shares = 0;  // copy 0 receives the other shares and copies its own
  if (copies > 1) {
    const uint64_t own = uint64_t{block_share(kw, copies, 0).size()} * ow;
    shares = (uint64_t{kw} * ow - own) / 4 + share_copy_cycles(machine, own);
  }
  return gather + gemm + reduce + reduce_sum + shares;
}

}  // namespace

uint32_t GemmLayout::grid_tile(uint32_t kb, uint32_t ob, uint32_t m) const {
  return static_cast<uint32_t>((tile_offset + index(kb, ob, m)) % tiles);
}

// Grid copies tried: one to eight (each a group of rows, the blocks' rows shared out); more
// groups halve each copy's gather and reduce again but multiply the shares each copy receives.
constexpr uint32_t kMostRowGroups = 8;

GemmLayout plan_gemm(LowerContext& context, const std::string& name, uint32_t in, uint32_t out, bool per_layer,
                     uint32_t tile_offset) {
  const uint32_t tiles = context.tiles;
  const uint32_t rows = context.workload.rows();
  const uint32_t layers = per_layer ? context.workload.layers : 1;
  // Among the splits (row groups M, K blocks; O = min(tiles / M / K, out / 2)) whose resident
  // weights plus a share of the per-row scratch (about four chunks) come within 10% of the
  // smallest with as many row groups, the fewest estimated cycles: SRAM stays near its
  // minimum, and the AMP call's rounding of K and columns to 16 favours some block shapes
  // strongly (docs/lowering.md, "Choices and their measured effect").
  struct Split {
    uint32_t groups, k, o, kw, ow;
  };
  const auto split_of = [&](uint32_t groups, uint32_t k) {
    const uint32_t o = std::min(tiles / groups / k, out / 2);
    return Split{groups, k, o, max_columns(in, k), max_columns(out, o)};
  };
  const auto split_bytes = [&](const Split& p) {
    const uint64_t resident = uint64_t{block_share(p.kw, p.groups, 0).size()} * p.ow * layers;
    const uint32_t group_rows = (rows + p.groups - 1) / p.groups;
    return resident + scratch_bytes(group_rows, p.k, p.kw, p.ow) / 4;
  };
  std::vector<Split> splits;
  for (uint32_t groups = 1; groups <= kMostRowGroups && groups <= rows; ++groups) {
    const uint32_t k_limit = std::min(tiles / groups, in / 2);
    for (uint32_t k = 1; k <= k_limit && std::min(tiles / groups / k, out / 2) > 0; ++k) {
      const Split p = split_of(groups, k);
      if (in / 2 / k * 2 / 4 < groups) continue;  // the smallest block must give every copy a share
      splits.push_back(p);
    }
  }
  // The SRAM rule holds per number of row groups (with M groups a tile's scratch holds 1/M
  // of the rows).
  std::vector<uint64_t> least_bytes(kMostRowGroups + 1, std::numeric_limits<uint64_t>::max());
  for (const Split& p : splits) least_bytes[p.groups] = std::min(least_bytes[p.groups], split_bytes(p));
  if (splits.empty())
    throw std::logic_error("plan_gemm: " + name + ": no split of " + std::to_string(in) + " x " + std::to_string(out) +
                           " on " + std::to_string(tiles) + " tiles");
  uint64_t best_cycles = std::numeric_limits<uint64_t>::max();
  Split best = splits.front();
  for (const Split& p : splits) {
    if (split_bytes(p) * 10 > least_bytes[p.groups] * 11) continue;
    const uint32_t group_rows = (rows + p.groups - 1) / p.groups;
    const uint64_t cycles = estimated_cycles(context.machine, group_rows, p.k, p.kw, p.ow, p.groups);
    if (cycles < best_cycles) {
      best_cycles = cycles;
      best = p;
    }
  }
  GemmLayout layout;
  layout.tiles = tiles;
  layout.tile_offset = tile_offset % tiles;
  layout.plan.name = name;
  layout.plan.in = in;
  layout.plan.out = out;
  layout.plan.k_blocks = best.k;
  layout.plan.o_blocks = best.o;
  layout.plan.row_groups = best.groups;
  for (uint32_t kb = 0; kb < best.k; ++kb) {
    for (uint32_t ob = 0; ob < best.o; ++ob) {
      const Span k_rows = pair_columns(in, best.k, kb);
      const Span o_columns = pair_columns(out, best.o, ob);
      for (uint32_t m = 0; m < best.groups; ++m) {
        const uint32_t tile = layout.grid_tile(kb, ob, m);
        const Span share = block_share(k_rows.size(), best.groups, m);
        // With copies the share is sent every layer, so scratch keeps out of its element.
        layout.weights.push_back(context.place_weights(tile, name + ".weight",
                                                       Span{k_rows.begin + share.begin, k_rows.begin + share.end},
                                                       o_columns, WeightFormat::F143, per_layer, best.groups > 1));
        layout.bias.push_back(
            context.place_weights(tile, name + ".bias", Span{0, 1}, o_columns, WeightFormat::Fp16, per_layer));
      }
    }
  }
  return layout;
}

namespace {

// Group m of a chunk's rows (absolute row numbers).
Span group_rows(Span chunk, uint32_t groups, uint32_t m) {
  const Span p = balanced_part(chunk.size(), groups, m);
  return {chunk.begin + p.begin, chunk.begin + p.end};
}

// Calls f(kb, ob, m, g) for every grid tile, g = layout.index(kb, ob, m).
template <class F>
void for_each_grid_tile(const GemmLayout& layout, F&& f) {
  for (uint32_t kb = 0; kb < layout.plan.k_blocks; ++kb) {
    for (uint32_t ob = 0; ob < layout.plan.o_blocks; ++ob) {
      for (uint32_t m = 0; m < layout.plan.row_groups; ++m) f(kb, ob, m, layout.index(kb, ob, m));
    }
  }
}

// A group's scratch on one grid tile (the block buffer only with row groups).
std::vector<ScratchBuffer> tile_buffers(const GemmPlan& plan, uint32_t rows, uint32_t reduce_rows, uint32_t kw,
                                        uint32_t ow) {
  auto buffers = chunk_buffers(plan.name, rows, plan.k_blocks, reduce_rows, kw, ow, uint64_t{kw} * ow);
  if (plan.row_groups == 1) buffers.pop_back();
  return buffers;
}

// As few row chunks as the scratch allows on every grid tile (each chunk repeats the
// three phases); the largest group and block sizes bound every other.
uint32_t choose_chunks(LowerContext& context, const GemmLayout& layout) {
  const GemmPlan& plan = layout.plan;
  const uint32_t K = plan.k_blocks;
  const uint32_t rows = context.workload.rows();
  const uint32_t kw_max = max_columns(plan.in, K);
  const uint32_t ow_max = max_columns(plan.out, plan.o_blocks);
  const auto fits = [&](uint32_t chunks) {
    const uint32_t crow = (rows + chunks - 1) / chunks;
    const uint32_t grow = (crow + plan.row_groups - 1) / plan.row_groups;
    const auto buffers = tile_buffers(plan, grow, (grow + K - 1) / K, kw_max, ow_max);
    const auto colours = colour_by_liveness(buffers, kChunkApart);
    bool fit = true;
    for_each_grid_tile(layout, [&](uint32_t kb, uint32_t ob, uint32_t m, size_t) {
      fit = fit && layout_scratch(context.memory, layout.grid_tile(kb, ob, m), buffers, colours, kChunkApart).end <=
                       context.memory.end();
    });
    return fit;
  };
  uint32_t chunks = 1;
  while (chunks < rows && !fits(chunks)) ++chunks;
  return chunks;
}

// Scratch addresses of one chunk, per grid tile (layout.index()).
struct ChunkScratch {
  explicit ChunkScratch(size_t grid) : input(grid), partial(grid), reduce_in(grid), reduce_out(grid), block(grid) {}
  std::vector<uint32_t> input, partial, reduce_in, reduce_out, block;
};

ChunkScratch place_chunk_scratch(LowerContext& context, const GemmLayout& layout, Span chunk) {
  const GemmPlan& plan = layout.plan;
  ChunkScratch scratch(layout.weights.size());
  for_each_grid_tile(layout, [&](uint32_t kb, uint32_t ob, uint32_t m, size_t g) {
    const uint32_t grow = group_rows(chunk, plan.row_groups, m).size();
    const uint32_t kw = pair_columns(plan.in, plan.k_blocks, kb).size();
    const uint32_t ow = pair_columns(plan.out, plan.o_blocks, ob).size();
    const uint32_t reduce_rows = balanced_part(grow, plan.k_blocks, kb).size();
    const auto buffers = tile_buffers(plan, grow, reduce_rows, kw, ow);
    const auto address = place_scratch(context.memory, layout.grid_tile(kb, ob, m), buffers,
                                       colour_by_liveness(buffers, kChunkApart), kChunkApart);
    scratch.input[g] = address[kInput];
    scratch.partial[g] = address[kPartialSum];
    scratch.reduce_in[g] = address[kReduceIn];
    scratch.reduce_out[g] = address[kReduceOut];
    if (plan.row_groups > 1) scratch.block[g] = address[kBlock];
  });
  return scratch;
}

// Copy m's share of block (kb, ob): its byte offset in the block and its bytes.
struct ShareBytes {
  uint32_t offset;
  uint32_t bytes;
};
ShareBytes share_bytes(const GemmPlan& plan, uint32_t kb, uint32_t ob, uint32_t m) {
  const uint32_t ow = pair_columns(plan.out, plan.o_blocks, ob).size();
  const Span share = block_share(pair_columns(plan.in, plan.k_blocks, kb).size(), plan.row_groups, m);
  return {share.begin * ow, share.size() * ow};
}

// With row groups, every copy of block (kb, ob) assembles the whole block in its block
// buffer: its own share by a local copy before the gather phase, the others' in it.
void copy_own_shares(LowerContext& context, const GemmLayout& layout, const ChunkScratch& scratch) {
  const GemmPlan& plan = layout.plan;
  if (plan.row_groups == 1) return;
  for_each_grid_tile(layout, [&](uint32_t kb, uint32_t ob, uint32_t m, size_t g) {
    const ShareBytes share = share_bytes(plan, kb, ob, m);
    const int64_t bytes = share.bytes;
    const arch::Operand to{scratch.block[g] + share.offset, false};
    if (bytes % 8 == 0) {
      const int64_t words = bytes / 8;
      context.kernel(layout.grid_tile(kb, ob, m), "ipu_stack_copy_u64", {to, layout.weights[g].operand()},
                     {words / 6, words % 6});
    } else {
      context.kernel(layout.grid_tile(kb, ob, m), "copy", {to, layout.weights[g].operand()}, {bytes});
    }
  });
}

void send_shares(LowerContext& context, const GemmLayout& layout, const ChunkScratch& scratch, size_t phase) {
  const GemmPlan& plan = layout.plan;
  if (plan.row_groups == 1) return;
  for_each_grid_tile(layout, [&](uint32_t kb, uint32_t ob, uint32_t m, size_t g) {
    const ShareBytes share = share_bytes(plan, kb, ob, m);
    std::vector<arch::Destination> others;
    for (uint32_t other = 0; other < plan.row_groups; ++other) {
      if (other != m) {
        others.push_back({layout.grid_tile(kb, ob, other), scratch.block[layout.index(kb, ob, other)] + share.offset});
      }
    }
    context.transfer(phase, layout.grid_tile(kb, ob, m), layout.weights[g], std::move(others), share.bytes / 4);
  });
}

// Gather: each row's K-block slice goes to the O tiles of block row kb of its group's grid.
void emit_gather(LowerContext& context, const GemmLayout& layout, const Activation& input, Span chunk,
                 const std::string& suffix, const ChunkScratch& scratch) {
  const GemmPlan& plan = layout.plan;
  const uint32_t K = plan.k_blocks;
  const uint32_t O = plan.o_blocks;
  copy_own_shares(context, layout, scratch);
  const size_t gather = context.phase(plan.name + ".gather" + suffix, "gemm");
  send_shares(context, layout, scratch, gather);
  for (uint32_t m = 0; m < plan.row_groups; ++m) {
    const Span group = group_rows(chunk, plan.row_groups, m);
    for (uint32_t r = group.begin; r < group.end; ++r) {
      const uint32_t owner = context.owner_of_row(r);
      const uint32_t owner_tile = context.owner_tile(owner);
      const uint32_t local = r - context.owner_rows(owner).begin;
      for (uint32_t kb = 0; kb < K; ++kb) {
        const Span cols = pair_columns(plan.in, K, kb);
        const uint32_t source = input.address[owner] + (local * input.columns + cols.begin) * kHalf;
        std::vector<arch::Destination> dests;
        for (uint32_t ob = 0; ob < O; ++ob) {
          const uint32_t tile = layout.grid_tile(kb, ob, m);
          const uint32_t address = scratch.input[layout.index(kb, ob, m)] + (r - group.begin) * cols.size() * kHalf;
          if (tile == owner_tile) {
            context.kernel(tile, "copy", {{address, false}, {source, false}}, {int64_t{cols.size()} * kHalf});
          } else {
            dests.push_back({tile, address});
          }
        }
        if (!dests.empty()) context.transfer(gather, owner_tile, source, std::move(dests), cols.size() / 2);
      }
    }
  }
}

// Every grid tile's FP16 partial [group rows, its columns], from its resident block or, with
// row groups, the block buffer.
void emit_partial_gemms(LowerContext& context, const GemmLayout& layout, Span chunk, const ChunkScratch& scratch) {
  const GemmPlan& plan = layout.plan;
  const int64_t scale = context.workload.weight_scale;
  for_each_grid_tile(layout, [&](uint32_t kb, uint32_t ob, uint32_t m, size_t g) {
    const arch::Operand weights =
        plan.row_groups > 1 ? arch::Operand{scratch.block[g], false} : layout.weights[g].operand();
    // A block buffer in interleaved memory takes the AMP's interleaved-weights cost (K 11.1).
    const bool interleaved = plan.row_groups > 1 && scratch.block[g] >= context.machine.interleaved_base;
    context.kernel(layout.grid_tile(kb, ob, m), interleaved ? "gemm_fp8_interleaved" : "gemm_fp8",
                   {{scratch.partial[g], false}, {scratch.input[g], false}, weights},
                   {group_rows(chunk, plan.row_groups, m).size(), pair_columns(plan.in, plan.k_blocks, kb).size(),
                    pair_columns(plan.out, plan.o_blocks, ob).size(), scale, kPartialBits});
  });
}

// Reduce: in each group, partial rows slice j of every other (kb, ob) goes to reducer (j, ob),
// into slot kb of reduce_in (kb - 1 past the reducer's own block, whose part stays in its
// partial). Emitted in rounds: in round t block row kb sends to reducer row (kb + t) mod K,
// so each round pairs every sender with a different receiver, an order the exchange
// compiler's list scheduling keeps free of conflicts (each reducer receives from one sender
// at a time).
void emit_reduce(LowerContext& context, const GemmLayout& layout, Span chunk, const std::string& suffix,
                 const ChunkScratch& scratch) {
  const GemmPlan& plan = layout.plan;
  const uint32_t K = plan.k_blocks;
  const uint32_t O = plan.o_blocks;
  const size_t reduce = context.phase(plan.name + ".reduce" + suffix, "gemm");
  for (uint32_t round = 1; round < K; ++round) {  // round 0 would be each tile's own slice
    for (uint32_t kb = 0; kb < K; ++kb) {
      for (uint32_t ob = 0; ob < O; ++ob) {
        for (uint32_t m = 0; m < plan.row_groups; ++m) {
          const uint32_t ow = pair_columns(plan.out, O, ob).size();
          const uint32_t j = (kb + round) % K;
          const Span slice = balanced_part(group_rows(chunk, plan.row_groups, m).size(), K, j);
          if (slice.size() == 0) continue;
          const uint32_t slot = kb < j ? kb : kb - 1;  // the reducer's own block has no slot
          const uint32_t source = scratch.partial[layout.index(kb, ob, m)] + slice.begin * ow * kPartial;
          const uint32_t address = scratch.reduce_in[layout.index(j, ob, m)] + slot * slice.size() * ow * kPartial;
          context.transfer(reduce, layout.grid_tile(kb, ob, m), source, {{layout.grid_tile(j, ob, m), address}},
                           slice.size() * ow * kPartial / 4);
        }
      }
    }
  }
}

// Each reducer sums its own part (read in place from its partial, K 7's first partial) and
// the other blocks' in block order, with the bias, into FP16, then applies the epilogue.
void emit_reduce_sums(LowerContext& context, const GemmLayout& layout, Span chunk, const ChunkScratch& scratch,
                      GemmEpilogue epilogue) {
  const GemmPlan& plan = layout.plan;
  for_each_grid_tile(layout, [&](uint32_t j, uint32_t ob, uint32_t m, size_t g) {
    const Span slice = balanced_part(group_rows(chunk, plan.row_groups, m).size(), plan.k_blocks, j);
    if (slice.size() == 0) return;
    const uint32_t ow = pair_columns(plan.out, plan.o_blocks, ob).size();
    const uint32_t tile = layout.grid_tile(j, ob, m);
    context.kernel(tile, "reduce_sum",
                   {{scratch.reduce_out[g], false},
                    {scratch.reduce_in[g], false},
                    layout.bias[g].operand(),
                    {scratch.partial[g] + slice.begin * ow * kPartial, false}},
                   {plan.k_blocks, slice.size(), ow, kPartialBits});
    if (epilogue == GemmEpilogue::Gelu) {
      // On the reducers' slices (about a fifth of an owner's row each) rather than on the
      // owners' whole rows: the same element-wise values, spread over the grid.
      context.kernel(tile, "gelu", {{scratch.reduce_out[g], false}, {scratch.reduce_out[g], false}},
                     {int64_t{slice.size()} * ow});
    }
  });
}

// Scatter: each reducer's output rows go back to their owners.
void emit_scatter(LowerContext& context, const GemmLayout& layout, const Activation& output, Span chunk,
                  const std::string& suffix, const ChunkScratch& scratch) {
  const GemmPlan& plan = layout.plan;
  const size_t scatter = context.phase(plan.name + ".scatter" + suffix, "gemm");
  for_each_grid_tile(layout, [&](uint32_t j, uint32_t ob, uint32_t m, size_t g) {
    const Span group = group_rows(chunk, plan.row_groups, m);
    const Span slice = balanced_part(group.size(), plan.k_blocks, j);
    const uint32_t tile = layout.grid_tile(j, ob, m);
    const Span cols = pair_columns(plan.out, plan.o_blocks, ob);
    for (uint32_t i = 0; i < slice.size(); ++i) {
      const uint32_t r = group.begin + slice.begin + i;
      const uint32_t owner = context.owner_of_row(r);
      const uint32_t owner_tile = context.owner_tile(owner);
      const uint32_t local = r - context.owner_rows(owner).begin;
      const uint32_t source = scratch.reduce_out[g] + i * cols.size() * kHalf;
      const uint32_t address = output.address[owner] + (local * output.columns + cols.begin) * kHalf;
      if (owner_tile == tile) {
        context.kernel(tile, "copy", {{address, false}, {source, false}}, {int64_t{cols.size()} * kHalf});
      } else {
        context.transfer(scatter, tile, source, {{owner_tile, address}}, cols.size() / 2);
      }
    }
  });
}

}  // namespace

void emit_gemm(LowerContext& context, GemmLayout& layout, const Activation& input, const Activation& output,
               GemmEpilogue epilogue) {
  GemmPlan& plan = layout.plan;
  const uint32_t rows = context.workload.rows();
  const uint32_t chunks = choose_chunks(context, layout);
  plan.chunks = chunks;
  context.gemm_plans.push_back(plan);

  for (uint32_t c = 0; c < chunks; ++c) {
    const Span chunk = balanced_part(rows, chunks, c);
    const std::string suffix = chunks > 1 ? ".c" + std::to_string(c) : "";
    context.memory.begin_scratch();
    const ChunkScratch scratch = place_chunk_scratch(context, layout, chunk);
    emit_gather(context, layout, input, chunk, suffix, scratch);
    emit_partial_gemms(context, layout, chunk, scratch);
    emit_reduce(context, layout, chunk, suffix, scratch);
    emit_reduce_sums(context, layout, chunk, scratch, epilogue);
    emit_scatter(context, layout, output, chunk, suffix, scratch);
  }
}

}  // namespace lockstep::workload
