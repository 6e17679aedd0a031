// The lowering records where every parameter block lives, so real weights can replace the
// payload tokens: blocks tile each tensor exactly once per layer (vectors evenly replicated), every token segment is a
// block, and write_weight_blocks writes each layer's copy where the kernels read it.
#include "workload/weight_layout.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "arch/machine.hpp"
#include "support/test_support.hpp"
#include "workload/lower.hpp"
#include "workload/workload.hpp"

namespace lockstep::workload {
namespace {

const Lowered& tiny() {
  static const Lowered lowered = [] {
    const Workload w = load_workload(testing::source_path("configs/workloads/vit-tiny.yaml"));
    return lower_workload(w, arch::load_machine(w.machine));
  }();
  return lowered;
}

TEST(WeightLayout, BlocksCoverEveryTensorExactlyOnce) {
  const Workload w = load_workload(testing::source_path("configs/workloads/vit-tiny.yaml"));
  std::map<std::string, std::map<std::pair<uint32_t, uint32_t>, int>> covered;  // tensor -> (row, col) -> count
  std::map<std::string, std::pair<uint32_t, uint32_t>> extent;
  for (const WeightBlock& b : tiny().weights) {
    for (uint32_t r = b.rows.begin; r < b.rows.end; ++r)
      for (uint32_t c = b.columns.begin; c < b.columns.end; ++c) ++covered[b.tensor][{r, c}];
    auto& [rows, columns] = extent[b.tensor];
    rows = std::max(rows, b.rows.end);
    columns = std::max(columns, b.columns.end);
    EXPECT_EQ(b.copies, b.tensor.rfind("layer.", 0) == 0 ? w.layers : 1u) << b.tensor;
  }
  const uint32_t H = w.hidden;
  const std::map<std::string, std::pair<uint32_t, uint32_t>> want = {{"embed.patch.weight", {w.patch_values(), H}},
                                                                     {"embed.patch.bias", {1, H}},
                                                                     {"embed.position", {w.rows(), H}},
                                                                     {"final.ln.gamma", {1, H}},
                                                                     {"final.ln.beta", {1, H}},
                                                                     {"layer.attn.qkv.weight", {H, 3 * H}},
                                                                     {"layer.attn.qkv.bias", {1, 3 * H}},
                                                                     {"layer.attn.out.weight", {H, H}},
                                                                     {"layer.attn.out.bias", {1, H}},
                                                                     {"layer.mlp.up.weight", {H, w.mlp}},
                                                                     {"layer.mlp.up.bias", {1, w.mlp}},
                                                                     {"layer.mlp.down.weight", {w.mlp, H}},
                                                                     {"layer.mlp.down.bias", {1, H}}};
  EXPECT_EQ(extent, want);
  for (const auto& [tensor, cells] : covered) {
    const auto [rows, columns] = want.at(tensor);
    EXPECT_EQ(cells.size(), size_t{rows} * columns) << tensor;
    // Vectors are replicated evenly: a GEMM's bias on each of its K reducers of a column
    // block, the final layernorm's gain and bias on every owner.
    const bool vector = rows == 1;
    const int replicas = cells.begin()->second;
    for (const auto& [cell, count] : cells) ASSERT_EQ(count, vector ? replicas : 1) << tensor;
  }
}

TEST(WeightLayout, EveryTokenSegmentIsABlockAndGetsItsBytes) {
  arch::Package program = tiny().program;
  std::set<std::pair<uint32_t, uint32_t>> bases;
  for (const WeightBlock& b : tiny().weights) bases.insert({b.tile, b.base});
  for (const auto& t : program.tiles) {
    for (const auto& s : t.segments) {
      if (s.fill == arch::FillKind::Tokens) {
        EXPECT_TRUE(bases.count({t.tile, s.address})) << t.tile;
      }
    }
  }
  // Each layer copy gets a byte naming its layer; the kernels read layer l at base + l * stride.
  write_weight_blocks(program, tiny().weights, [](const WeightBlock& b, uint32_t layer, uint8_t* out) {
    std::fill(out, out + b.bytes(), static_cast<uint8_t>(layer + 1));
  });
  for (const WeightBlock& b : tiny().weights) {
    const auto& segments = program.tiles[b.tile].segments;
    const auto it = std::find_if(segments.begin(), segments.end(), [&](const auto& s) { return s.address == b.base; });
    ASSERT_NE(it, segments.end());
    ASSERT_EQ(it->fill, arch::FillKind::Bytes);
    const uint32_t last = b.copies - 1;
    EXPECT_EQ(it->bytes.at(uint64_t{last} * b.stride), last + 1) << b.tensor;
    EXPECT_EQ(it->bytes.at(uint64_t{last} * b.stride + b.bytes() - 1), last + 1) << b.tensor;
  }
}

}  // namespace
}  // namespace lockstep::workload
