// GEMMs: weights resident on a K x O grid of tiles (block (kb, ob) holds rows kb of the
// reduction dimension and columns ob of the output, for every layer). Per row chunk:
//   gather  : owners multicast each row's K-block slices to the O tiles of that block row;
//   gemm_fp8: every grid tile forms an FP16 partial [chunk rows, its columns];
//   reduce  : partial rows are split K ways, reducer (j, ob) receives slice j of all K;
//   reduce_sum: sums the K parts, adds the bias, writes FP16;
//   scatter : reducers send each output row slice back to its owner.
#include <algorithm>
#include <cstdint>
#include <limits>

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
uint32_t max_columns(uint32_t columns, uint32_t parts) {
  return 2 * ((columns / 2 + parts - 1) / parts);
}

// Scratch of one grid tile for a chunk of `rows`, with the steps of the chunk that write and
// read each buffer: 0 gather, 1 gemm_fp8, 2 reduce, 3 reduce_sum (and epilogue), 4 scatter.
// reduce_in holds the other K - 1 blocks' parts of the tile's slice; reduce_sum reads its own
// part from the partial (K 7's first partial), so the partial lives until then. The reduce
// phase sends the partial while receiving into reduce_in, so those two must share no memory
// element (hazard 2). Buffers never live together share memory
// (workload/scratch_liveness.hpp): the gathered input with reduce_in and with reduce_out.
enum GemmBuffer : size_t { kInput, kPartialSum, kReduceIn, kReduceOut };
std::vector<ScratchBuffer> chunk_buffers(const std::string& name, uint32_t rows, uint32_t k_blocks,
                                         uint32_t reduce_rows, uint32_t kw, uint32_t ow) {
  return {{name + ".input", uint64_t{rows} * kw * kHalf, 0, 1},
          {name + ".partial", uint64_t{rows} * ow * kPartial, 1, 3},
          {name + ".reduce_in", uint64_t{k_blocks - 1} * reduce_rows * ow * kPartial, 2, 3},
          {name + ".reduce_out", uint64_t{reduce_rows} * ow * kHalf, 3, 4}};
}
const std::vector<ApartPair> kChunkApart = {{kPartialSum, kReduceIn}};

// Resident weights plus a share of the per-row scratch, for choosing K.
uint64_t scratch_bytes(uint32_t rows, uint32_t k_blocks, uint32_t kw, uint32_t ow) {
  const uint64_t reduce_rows = (rows + k_blocks - 1) / k_blocks;
  return uint64_t{rows} * kw * kHalf + uint64_t{rows} * ow * kPartial +
         uint64_t{k_blocks - 1} * reduce_rows * ow * kPartial + reduce_rows * ow * kHalf + 64;
}

// The planner's estimate of one layer's cycles for a K x O split, all rows in one chunk: the
// gather and reduce words a grid tile receives (one word per cycle), gemm_fp8's and
// reduce_sum's cycle models (docs/kernels-gemm.md: one AMP call; parts x rows x columns x 2),
// fitted ones where the machine carries them (`build --costs`, arch/kernel_costs.hpp). Only
// used to rank splits.
uint64_t estimated_cycles(const arch::MachineDescription& machine, uint32_t rows, uint32_t k_blocks, uint32_t kw,
                          uint32_t ow) {
  const uint64_t reduce_rows = (rows + k_blocks - 1) / k_blocks;
  const uint64_t gather = uint64_t{rows} * kw / 2;
  const uint64_t gemm = arch::charged_amp_gemm_cycles(machine, "gemm_fp8", rows, kw, ow);
  const uint64_t reduce = k_blocks * reduce_rows * ow * kPartial / 4;
  const uint64_t reduce_sum = arch::charged_reduce_sum_cycles(machine, k_blocks, reduce_rows, ow);
  return gather + gemm + reduce + reduce_sum;
}

}  // namespace

uint32_t GemmLayout::grid_tile(uint32_t kb, uint32_t ob) const {
  return (tile_offset + kb * plan.o_blocks + ob) % tiles;
}

GemmLayout plan_gemm(LowerContext& context, const std::string& name, uint32_t in, uint32_t out,
                     bool per_layer, uint32_t tile_offset) {
  const uint32_t tiles = context.tiles;
  const uint32_t rows = context.workload.rows();
  const uint32_t copies = per_layer ? context.workload.layers : 1;
  // Among the splits whose resident weights plus a share of the per-row scratch (about four
  // chunks) come within 10% of the smallest, the fewest estimated cycles: SRAM stays near its
  // minimum, and ceil(k/64) x ceil(n/16) AMP calls favour some block shapes strongly
  // (docs/lowering.md, "Choices and their measured effect").
  const auto split_bytes = [&](uint32_t k) {
    const uint32_t o = std::min(tiles / k, out / 2);
    const uint32_t kw = max_columns(in, k);
    const uint32_t ow = max_columns(out, o);
    return uint64_t{kw} * ow * copies + scratch_bytes(rows, k, kw, ow) / 4;
  };
  const uint32_t k_limit = std::min(tiles, in / 2);
  uint64_t least_bytes = std::numeric_limits<uint64_t>::max();
  for (uint32_t k = 1; k <= k_limit && std::min(tiles / k, out / 2) > 0; ++k) {
    least_bytes = std::min(least_bytes, split_bytes(k));
  }
  uint64_t best_cycles = std::numeric_limits<uint64_t>::max();
  uint32_t best_k = 1;
  for (uint32_t k = 1; k <= k_limit && std::min(tiles / k, out / 2) > 0; ++k) {
    if (split_bytes(k) * 10 > least_bytes * 11) continue;
    const uint32_t o = std::min(tiles / k, out / 2);
    const uint64_t cycles = estimated_cycles(context.machine, rows, k, max_columns(in, k), max_columns(out, o));
    if (cycles < best_cycles) {
      best_cycles = cycles;
      best_k = k;
    }
  }
  GemmLayout layout;
  layout.tiles = tiles;
  layout.tile_offset = tile_offset % tiles;
  layout.plan.name = name;
  layout.plan.in = in;
  layout.plan.out = out;
  layout.plan.k_blocks = best_k;
  layout.plan.o_blocks = std::min(tiles / best_k, out / 2);
  for (uint32_t kb = 0; kb < layout.plan.k_blocks; ++kb) {
    for (uint32_t ob = 0; ob < layout.plan.o_blocks; ++ob) {
      const uint32_t tile = layout.grid_tile(kb, ob);
      const Span k_rows = pair_columns(in, layout.plan.k_blocks, kb);
      const Span o_columns = pair_columns(out, layout.plan.o_blocks, ob);
      layout.weights.push_back(
          context.place_weights(tile, name + ".weight", k_rows, o_columns, WeightFormat::F143, per_layer));
      layout.bias.push_back(
          context.place_weights(tile, name + ".bias", Span{0, 1}, o_columns, WeightFormat::Fp16, per_layer));
    }
  }
  return layout;
}

namespace {

// As few row chunks as the scratch allows on every grid tile (each chunk repeats the
// three phases); the largest chunk and block sizes bound every other.
uint32_t choose_chunks(LowerContext& context, const GemmLayout& layout) {
  const GemmPlan& plan = layout.plan;
  const uint32_t K = plan.k_blocks;
  const uint32_t O = plan.o_blocks;
  const uint32_t rows = context.workload.rows();
  const uint32_t kw_max = max_columns(plan.in, K);
  const uint32_t ow_max = max_columns(plan.out, O);
  const auto fits = [&](uint32_t chunks) {
    const uint32_t crow = (rows + chunks - 1) / chunks;
    const uint32_t reduce_rows = (crow + K - 1) / K;
    const auto buffers = chunk_buffers(plan.name, crow, K, reduce_rows, kw_max, ow_max);
    const auto colours = colour_by_liveness(buffers, kChunkApart);
    for (uint32_t kb = 0; kb < K; ++kb) {
      for (uint32_t ob = 0; ob < O; ++ob) {
        const uint32_t tile = layout.grid_tile(kb, ob);
        if (layout_scratch(context.memory, tile, buffers, colours, kChunkApart).end > context.memory.end()) {
          return false;
        }
      }
    }
    return true;
  };
  uint32_t chunks = 1;
  while (chunks < rows && !fits(chunks)) ++chunks;
  return chunks;
}

// Scratch addresses of one chunk, per grid tile (kb * O + ob).
struct ChunkScratch {
  explicit ChunkScratch(size_t grid)
      : input(grid), partial(grid), reduce_in(grid), reduce_out(grid) {}
  std::vector<uint32_t> input, partial, reduce_in, reduce_out;
};

ChunkScratch place_chunk_scratch(LowerContext& context, const GemmLayout& layout, uint32_t crow) {
  const GemmPlan& plan = layout.plan;
  const uint32_t K = plan.k_blocks;
  const uint32_t O = plan.o_blocks;
  const size_t grid = size_t{K} * O;
  ChunkScratch scratch(grid);
  for (uint32_t kb = 0; kb < K; ++kb) {
    for (uint32_t ob = 0; ob < O; ++ob) {
      const size_t g = size_t{kb} * O + ob;
      const uint32_t tile = layout.grid_tile(kb, ob);
      const uint32_t kw = pair_columns(plan.in, K, kb).size();
      const uint32_t ow = pair_columns(plan.out, O, ob).size();
      const uint32_t reduce_rows = balanced_part(crow, K, kb).size();
      const auto buffers = chunk_buffers(plan.name, crow, K, reduce_rows, kw, ow);
      const auto address = place_scratch(context.memory, tile, buffers,
                                         colour_by_liveness(buffers, kChunkApart), kChunkApart);
      scratch.input[g] = address[kInput];
      scratch.partial[g] = address[kPartialSum];
      scratch.reduce_in[g] = address[kReduceIn];
      scratch.reduce_out[g] = address[kReduceOut];
    }
  }
  return scratch;
}

// Gather: each row's K-block slice goes to the O tiles of block row kb.
void emit_gather(LowerContext& context, const GemmLayout& layout, const Activation& input,
                 Span chunk, const std::string& suffix, const ChunkScratch& scratch) {
  const GemmPlan& plan = layout.plan;
  const uint32_t K = plan.k_blocks;
  const uint32_t O = plan.o_blocks;
  const size_t gather = context.phase(plan.name + ".gather" + suffix, "gemm");
  for (uint32_t r = chunk.begin; r < chunk.end; ++r) {
    const uint32_t owner = context.owner_of_row(r);
    const uint32_t owner_tile = context.owner_tile(owner);
    const uint32_t local = r - context.owner_rows(owner).begin;
    for (uint32_t kb = 0; kb < K; ++kb) {
      const Span cols = pair_columns(plan.in, K, kb);
      const uint32_t source =
          input.address[owner] + (local * input.columns + cols.begin) * kHalf;
      std::vector<arch::Destination> dests;
      for (uint32_t ob = 0; ob < O; ++ob) {
        const size_t g = size_t{kb} * O + ob;
        const uint32_t tile = layout.grid_tile(kb, ob);
        const uint32_t address = scratch.input[g] + (r - chunk.begin) * cols.size() * kHalf;
        if (tile == owner_tile) {
          context.kernel(tile, "copy", {{address, false}, {source, false}},
                         {int64_t{cols.size()} * kHalf});
        } else {
          dests.push_back({tile, address});
        }
      }
      if (!dests.empty()) context.transfer(gather, owner_tile, source, std::move(dests), cols.size() / 2);
    }
  }
}

// Every grid tile's FP16 partial [crow rows, its columns].
void emit_partial_gemms(LowerContext& context, const GemmLayout& layout, uint32_t crow,
                        const ChunkScratch& scratch) {
  const GemmPlan& plan = layout.plan;
  const uint32_t K = plan.k_blocks;
  const uint32_t O = plan.o_blocks;
  const int64_t scale = context.workload.weight_scale;
  for (uint32_t kb = 0; kb < K; ++kb) {
    for (uint32_t ob = 0; ob < O; ++ob) {
      const size_t g = size_t{kb} * O + ob;
      context.kernel(layout.grid_tile(kb, ob), "gemm_fp8",
                     {{scratch.partial[g], false}, {scratch.input[g], false},
                      layout.weights[g].operand()},
                     {crow, pair_columns(plan.in, K, kb).size(),
                      pair_columns(plan.out, O, ob).size(), scale, kPartialBits});
    }
  }
}

// Reduce: partial rows slice j of every other (kb, ob) goes to reducer (j, ob), into slot kb
// of reduce_in (kb - 1 past the reducer's own block, whose part stays in its partial).
// Emitted in rounds: in round t block row kb sends to reducer row (kb + t) mod K, so each
// round pairs every sender with a different receiver, an order the exchange compiler's list
// scheduling keeps free of conflicts (each reducer receives from one sender at a time).
void emit_reduce(LowerContext& context, const GemmLayout& layout, uint32_t crow,
                 const std::string& suffix, const ChunkScratch& scratch) {
  const GemmPlan& plan = layout.plan;
  const uint32_t K = plan.k_blocks;
  const uint32_t O = plan.o_blocks;
  const size_t reduce = context.phase(plan.name + ".reduce" + suffix, "gemm");
  for (uint32_t round = 1; round < K; ++round) {  // round 0 would be each tile's own slice
    for (uint32_t kb = 0; kb < K; ++kb) {
      for (uint32_t ob = 0; ob < O; ++ob) {
        const size_t g = size_t{kb} * O + ob;
        const uint32_t ow = pair_columns(plan.out, O, ob).size();
        const uint32_t j = (kb + round) % K;
        const Span slice = balanced_part(crow, K, j);
        if (slice.size() == 0) continue;
        const size_t reducer = size_t{j} * O + ob;
        const uint32_t slot = kb < j ? kb : kb - 1;  // the reducer's own block has no slot
        const uint32_t source = scratch.partial[g] + slice.begin * ow * kPartial;
        const uint32_t address = scratch.reduce_in[reducer] + slot * slice.size() * ow * kPartial;
        context.transfer(reduce, layout.grid_tile(kb, ob), source, {{layout.grid_tile(j, ob), address}},
                         slice.size() * ow * kPartial / 4);
      }
    }
  }
}

// Each reducer sums its own part (read in place from its partial, K 7's first partial) and
// the other blocks' in block order, with the bias, into FP16, then applies the epilogue.
void emit_reduce_sums(LowerContext& context, const GemmLayout& layout, uint32_t crow,
                      const ChunkScratch& scratch, GemmEpilogue epilogue) {
  const GemmPlan& plan = layout.plan;
  const uint32_t K = plan.k_blocks;
  const uint32_t O = plan.o_blocks;
  for (uint32_t j = 0; j < K; ++j) {
    for (uint32_t ob = 0; ob < O; ++ob) {
      const size_t g = size_t{j} * O + ob;
      const Span slice = balanced_part(crow, K, j);
      if (slice.size() == 0) continue;
      const uint32_t ow = pair_columns(plan.out, O, ob).size();
      context.kernel(layout.grid_tile(j, ob), "reduce_sum",
                     {{scratch.reduce_out[g], false}, {scratch.reduce_in[g], false},
                      layout.bias[g].operand(), {scratch.partial[g] + slice.begin * ow * kPartial, false}},
                     {K, slice.size(), ow, kPartialBits});
      if (epilogue == GemmEpilogue::Gelu) {
        // On the reducers' slices (about a fifth of an owner's row each) rather than on the
        // owners' whole rows: the same element-wise values, spread over the grid.
        context.kernel(layout.grid_tile(j, ob), "gelu",
                       {{scratch.reduce_out[g], false}, {scratch.reduce_out[g], false}},
                       {int64_t{slice.size()} * ow});
      }
    }
  }
}

// Scatter: each reducer's output rows go back to their owners.
void emit_scatter(LowerContext& context, const GemmLayout& layout, const Activation& output,
                  Span chunk, const std::string& suffix, const ChunkScratch& scratch) {
  const GemmPlan& plan = layout.plan;
  const uint32_t K = plan.k_blocks;
  const uint32_t O = plan.o_blocks;
  const uint32_t crow = chunk.size();
  const size_t scatter = context.phase(plan.name + ".scatter" + suffix, "gemm");
  for (uint32_t j = 0; j < K; ++j) {
    const Span slice = balanced_part(crow, K, j);
    for (uint32_t ob = 0; ob < O; ++ob) {
      const size_t g = size_t{j} * O + ob;
      const uint32_t tile = layout.grid_tile(j, ob);
      const Span cols = pair_columns(plan.out, O, ob);
      for (uint32_t i = 0; i < slice.size(); ++i) {
        const uint32_t r = chunk.begin + slice.begin + i;
        const uint32_t owner = context.owner_of_row(r);
        const uint32_t owner_tile = context.owner_tile(owner);
        const uint32_t local = r - context.owner_rows(owner).begin;
        const uint32_t source = scratch.reduce_out[g] + i * cols.size() * kHalf;
        const uint32_t address =
            output.address[owner] + (local * output.columns + cols.begin) * kHalf;
        if (owner_tile == tile) {
          context.kernel(tile, "copy", {{address, false}, {source, false}},
                         {int64_t{cols.size()} * kHalf});
        } else {
          context.transfer(scatter, tile, source, {{owner_tile, address}}, cols.size() / 2);
        }
      }
    }
  }
}

}  // namespace

void emit_gemm(LowerContext& context, GemmLayout& layout, const Activation& input,
               const Activation& output, GemmEpilogue epilogue) {
  GemmPlan& plan = layout.plan;
  const uint32_t rows = context.workload.rows();
  const uint32_t chunks = choose_chunks(context, layout);
  plan.chunks = chunks;
  context.gemm_plans.push_back(plan);

  for (uint32_t c = 0; c < chunks; ++c) {
    const Span chunk = balanced_part(rows, chunks, c);
    const uint32_t crow = chunk.size();
    const std::string suffix = chunks > 1 ? ".c" + std::to_string(c) : "";
    context.memory.begin_scratch();
    const ChunkScratch scratch = place_chunk_scratch(context, layout, crow);
    emit_gather(context, layout, input, chunk, suffix, scratch);
    emit_partial_gemms(context, layout, crow, scratch);
    emit_reduce(context, layout, crow, suffix, scratch);
    emit_reduce_sums(context, layout, crow, scratch, epilogue);
    emit_scatter(context, layout, output, chunk, suffix, scratch);
  }
}

}  // namespace lockstep::workload
