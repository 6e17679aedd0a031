// GEMMs: weights resident on a K x O grid of tiles (block (kb, ob) holds rows kb of the
// reduction dimension and columns ob of the output, for every layer). Per row chunk:
//   gather  : owners multicast each row's K-block slices to the O tiles of that block row;
//   gemm_fp8: every grid tile forms an FP32 partial [chunk rows, its columns];
//   reduce  : partial rows are split K ways, reducer (j, ob) receives slice j of all K;
//   reduce_sum: sums the K parts, adds the bias, writes FP16;
//   scatter : reducers send each output row slice back to its owner.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "workload/lower_context.hpp"

namespace lockstep::workload {
namespace {

// Columns are split in FP16 pairs so every slice is whole 32-bit words.
Span pair_columns(uint32_t columns, uint32_t parts, uint32_t i) {
  const Span p = balanced_part(columns / 2, parts, i);
  return {2 * p.begin, 2 * p.end};
}
uint32_t max_columns(uint32_t columns, uint32_t parts) {
  return 2 * ((columns / 2 + parts - 1) / parts);
}

// Scratch of one grid tile for a chunk of `rows`, in placement order: the FP32 partial,
// the gathered input, then the reduce buffers, which must share no memory element with
// the partial (the reduce phase sends the partial while receiving into reduce_in, hazard
// 2); the input between them often keeps them apart for free.
struct ChunkScratch {
  uint32_t part = 0, input = 0, reduce_in = 0, reduce_out = 0;
  uint64_t end = 0;
};
ChunkScratch chunk_scratch(const TileMemory& memory, uint32_t tile, uint32_t rows, uint32_t k_blocks,
                           uint32_t reduce_rows, uint32_t kw, uint32_t ow) {
  const auto next = [](uint64_t address, uint64_t bytes) { return ((address + 7) & ~uint64_t{7}) + bytes; };
  ChunkScratch s;
  s.part = memory.scratch_start(tile);
  const uint64_t part_end = next(s.part, uint64_t{rows} * ow * kFloat);
  const uint64_t input_end = next(part_end, uint64_t{rows} * kw * kHalf);
  s.input = static_cast<uint32_t>(input_end - uint64_t{rows} * kw * kHalf);
  if (input_end > memory.end()) return {0, 0, 0, 0, input_end};
  s.reduce_in = memory.apart(static_cast<uint32_t>(input_end), static_cast<uint32_t>(part_end));
  const uint64_t reduce_in_end = next(s.reduce_in, uint64_t{k_blocks} * reduce_rows * ow * kFloat);
  s.end = next(reduce_in_end, uint64_t{reduce_rows} * ow * kHalf);
  s.reduce_out = static_cast<uint32_t>(s.end - uint64_t{reduce_rows} * ow * kHalf);
  return s;
}

// Resident weights plus a share of the per-row scratch, for choosing K.
uint64_t scratch_bytes(uint32_t rows, uint32_t k_blocks, uint32_t kw, uint32_t ow) {
  const uint64_t reduce_rows = (rows + k_blocks - 1) / k_blocks;
  return uint64_t{rows} * kw * kHalf + uint64_t{rows} * ow * kFloat +
         uint64_t{k_blocks} * reduce_rows * ow * kFloat + reduce_rows * ow * kHalf + 64;
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
  // Smallest resident weights plus a share of the per-row scratch (about four chunks).
  uint64_t best_score = std::numeric_limits<uint64_t>::max();
  uint32_t best_k = 1;
  for (uint32_t k = 1; k <= std::min(tiles, in / 2); ++k) {
    const uint32_t o = std::min(tiles / k, out / 2);
    if (o == 0) break;
    const uint32_t kw = max_columns(in, k);
    const uint32_t ow = max_columns(out, o);
    const uint64_t weights = uint64_t{kw} * ow * copies;
    const uint64_t score = weights + scratch_bytes(rows, k, kw, ow) / 4;
    if (score < best_score) {
      best_score = score;
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

void emit_gemm(LowerContext& context, GemmLayout& layout, const Activation& input,
               const Activation& output) {
  GemmPlan& plan = layout.plan;
  const uint32_t K = plan.k_blocks;
  const uint32_t O = plan.o_blocks;
  const uint32_t rows = context.workload.rows();
  const uint32_t kw_max = max_columns(plan.in, K);
  const uint32_t ow_max = max_columns(plan.out, O);
  // As few row chunks as the scratch allows on every grid tile (each chunk repeats the
  // three phases); the largest chunk and block sizes bound every other.
  const auto fits = [&](uint32_t chunks) {
    const uint32_t crow = (rows + chunks - 1) / chunks;
    const uint32_t reduce_rows = (crow + K - 1) / K;
    for (uint32_t kb = 0; kb < K; ++kb) {
      for (uint32_t ob = 0; ob < O; ++ob) {
        const uint32_t tile = layout.grid_tile(kb, ob);
        if (chunk_scratch(context.memory, tile, crow, K, reduce_rows, kw_max, ow_max).end >
            context.memory.end()) {
          return false;
        }
      }
    }
    return true;
  };
  uint32_t chunks = 1;
  while (chunks < rows && !fits(chunks)) ++chunks;
  plan.chunks = chunks;
  context.gemm_plans.push_back(plan);
  const int64_t scale = context.workload.weight_scale;

  for (uint32_t c = 0; c < chunks; ++c) {
    const Span chunk = balanced_part(rows, chunks, c);
    const uint32_t crow = chunk.size();
    const std::string suffix = chunks > 1 ? ".c" + std::to_string(c) : "";
    context.memory.begin_scratch();
    const size_t grid = size_t{K} * O;
    std::vector<uint32_t> in_buf(grid), part(grid), recv(grid), out_buf(grid);
    for (uint32_t kb = 0; kb < K; ++kb) {
      for (uint32_t ob = 0; ob < O; ++ob) {
        const size_t g = size_t{kb} * O + ob;
        const uint32_t tile = layout.grid_tile(kb, ob);
        const uint32_t kw = pair_columns(plan.in, K, kb).size();
        const uint32_t ow = pair_columns(plan.out, O, ob).size();
        const uint32_t reduce_rows = balanced_part(crow, K, kb).size();
        // Order and element separation as in chunk_scratch().
        part[g] = context.memory.scratch(tile, plan.name + ".partial", uint64_t{crow} * ow * kFloat);
        const uint32_t part_end = part[g] + crow * ow * kFloat;
        in_buf[g] = context.memory.scratch(tile, plan.name + ".input", uint64_t{crow} * kw * kHalf);
        recv[g] = context.memory.scratch_apart(tile, plan.name + ".reduce_in",
                                               uint64_t{K} * reduce_rows * ow * kFloat, part_end);
        out_buf[g] = context.memory.scratch(tile, plan.name + ".reduce_out",
                                            uint64_t{reduce_rows} * ow * kHalf);
      }
    }

    // Gather: each row's K-block slice goes to the O tiles of block row kb.
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
          const uint32_t address = in_buf[g] + (r - chunk.begin) * cols.size() * kHalf;
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
    for (uint32_t kb = 0; kb < K; ++kb) {
      for (uint32_t ob = 0; ob < O; ++ob) {
        const size_t g = size_t{kb} * O + ob;
        context.kernel(layout.grid_tile(kb, ob), "gemm_fp8",
                       {{part[g], false}, {in_buf[g], false}, layout.weights[g].operand()},
                       {crow, pair_columns(plan.in, K, kb).size(),
                        pair_columns(plan.out, O, ob).size(), scale});
      }
    }

    // Reduce: partial rows slice j of every (kb, ob) goes to reducer (j, ob), slot kb.
    const size_t reduce = context.phase(plan.name + ".reduce" + suffix, "gemm");
    for (uint32_t kb = 0; kb < K; ++kb) {
      for (uint32_t ob = 0; ob < O; ++ob) {
        const size_t g = size_t{kb} * O + ob;
        const uint32_t tile = layout.grid_tile(kb, ob);
        const uint32_t ow = pair_columns(plan.out, O, ob).size();
        for (uint32_t j = 0; j < K; ++j) {
          const Span slice = balanced_part(crow, K, j);
          if (slice.size() == 0) continue;
          const size_t reducer = size_t{j} * O + ob;
          const uint32_t reducer_tile = layout.grid_tile(j, ob);
          const uint32_t source = part[g] + slice.begin * ow * kFloat;
          const uint32_t address = recv[reducer] + kb * slice.size() * ow * kFloat;
          if (reducer_tile == tile) {
            context.kernel(tile, "copy", {{address, false}, {source, false}},
                           {int64_t{slice.size()} * ow * kFloat});
          } else {
            context.transfer(reduce, tile, source, {{reducer_tile, address}}, slice.size() * ow);
          }
        }
      }
    }
    for (uint32_t j = 0; j < K; ++j) {
      for (uint32_t ob = 0; ob < O; ++ob) {
        const size_t g = size_t{j} * O + ob;
        const Span slice = balanced_part(crow, K, j);
        if (slice.size() == 0) continue;
        context.kernel(layout.grid_tile(j, ob), "reduce_sum",
                       {{out_buf[g], false}, {recv[g], false}, layout.bias[g].operand()},
                       {K, slice.size(), pair_columns(plan.out, O, ob).size()});
      }
    }

    // Scatter: each reducer's output rows go back to their owners.
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
          const uint32_t source = out_buf[g] + i * cols.size() * kHalf;
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
}

}  // namespace lockstep::workload
