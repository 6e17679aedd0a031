// Lowering: balanced placement, the phase sequence and Repeat of a hand-sized model, a
// valid capture for the shipped small default, determinism, and placement failures.
#include "workload/lower.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "arch/machine.hpp"
#include "formats/capture.hpp"
#include "formats/package_io.hpp"
#include "io/errors.hpp"
#include "support/test_support.hpp"
#include "workload/placement.hpp"
#include "workload/workload.hpp"

namespace lockstep::workload {
namespace {

Workload small() { return load_workload(testing::source_path("tests/data/workloads/small.yaml")); }

TEST(Placement, BalancedWholeRowsNoPadding) {
  // 10 rows over 4 owners: 2, 3, 2, 3 (never rounded up to a block of 3).
  std::vector<uint32_t> sizes;
  for (uint32_t i = 0; i < 4; ++i) sizes.push_back(balanced_part(10, 4, i).size());
  EXPECT_EQ(sizes, (std::vector<uint32_t>{2, 3, 2, 3}));
  // The seed's example: 729 rows over 8 owners -> 91 or 92 each, 729 in all.
  uint32_t total = 0;
  for (uint32_t i = 0; i < 8; ++i) {
    const uint32_t n = balanced_part(729, 8, i).size();
    EXPECT_TRUE(n == 91 || n == 92) << n;
    total += n;
  }
  EXPECT_EQ(total, 729u);
  for (uint32_t unit = 0; unit < 729; ++unit) {
    const uint32_t p = balanced_part_of(729, 8, unit);
    EXPECT_LE(balanced_part(729, 8, p).begin, unit);
    EXPECT_GT(balanced_part(729, 8, p).end, unit);
  }
}

TEST(Placement, FailureNamesTileTensorAndBytes) {
  TileMemory memory(2, 0x5c000, 0x5c100, "m.yaml");
  EXPECT_EQ(memory.place(1, "a", 0xf0), 0x5c000u);
  try {
    memory.place(1, "layer.mlp.up.weight", 0x20);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "m.yaml: placement: tile 1: tensor layer.mlp.up.weight: 16 bytes missing (needs 32, "
              "240 of 256 already in use)");
  }
}

TEST(Placement, ScratchKeepsSendsAndReceivesInDifferentElements) {
  // Hazard 2: element 23 is [0x5c000, 0x60000); interleaved elements above 0x80000 are 32 KiB.
  const auto machine = arch::load_machine("ipu21-c600-t16");
  TileMemory memory(2, 0x5c000, 0xe7bb0, "m.yaml", &machine);
  EXPECT_EQ(memory.place(0, "x", 0x100, /*exchanged=*/true), 0x5c000u);
  EXPECT_EQ(memory.place(0, "weight", 0x3000), 0x5c100u);
  EXPECT_EQ(memory.place(1, "weight", 0x3000), 0x5c000u);  // nothing exchanged on tile 1
  memory.begin_scratch();
  EXPECT_EQ(memory.scratch(0, "partial", 0x10), 0x60000u);  // out of x's element 23
  EXPECT_EQ(memory.scratch(1, "partial", 0x10), 0x5f000u);
  EXPECT_EQ(memory.scratch_apart(0, "reduce_in", 8, 0x60010), 0x64000u);
  EXPECT_EQ(memory.scratch_apart(1, "reduce_in", 8, 0x5c000), 0x5f010u);  // already apart
  EXPECT_EQ(memory.apart(0x80010, 0x80008), 0x88000u);
  EXPECT_EQ(memory.apart(0x7fff8, 0x7c008), 0x80000u);
  EXPECT_EQ(memory.apart(0x7fff8, 0x7c000), 0x7fff8u);
  // Without the machine there is no element rule.
  TileMemory plain(1, 0x5c000, 0xe7bb0, "m.yaml");
  plain.place(0, "x", 0x100, true);
  plain.begin_scratch();
  EXPECT_EQ(plain.scratch(0, "partial", 0x10), 0x5c100u);
}

TEST(Lower, SmallModelPhasesAndRepeat) {
  const auto machine = arch::load_machine("ipu21-c600-t16");
  const Lowered lowered = lower_workload(small(), machine);
  EXPECT_EQ(lowered.owners, 4u);  // 4 tokens, one row each
  for (const auto& g : lowered.gemms) EXPECT_EQ(g.chunks, 1u) << g.name;
  std::vector<std::string> labels;
  for (const auto& p : lowered.capture.phases) labels.push_back(p.label);
  const std::vector<std::string> expected = {
      "embed.patch.gather",    "embed.patch.reduce",     "embed.patch.scatter",   "layer.attn.qkv.gather",
      "layer.attn.qkv.reduce", "layer.attn.qkv.scatter", "layer.attn.qkv",        "layer.attn.merge",
      "layer.attn.context",    "layer.attn.out.gather",  "layer.attn.out.reduce", "layer.attn.out.scatter",
      "layer.mlp.up.gather",   "layer.mlp.up.reduce",    "layer.mlp.up.scatter",  "layer.mlp.down.gather",
      "layer.mlp.down.reduce", "layer.mlp.down.scatter"};
  EXPECT_EQ(labels, expected);
  for (const auto& p : lowered.capture.phases) {
    const bool layer = p.label.rfind("layer.", 0) == 0;
    EXPECT_EQ(p.execution_count, layer ? 3u : 1u) << p.label;
    EXPECT_EQ(p.iterations, layer ? 3u : 1u) << p.label;
  }
  EXPECT_NO_THROW(arch::validate_capture(lowered.capture, machine, "small"));

  // Every tile: the embedding's 3 exchange steps, then one Repeat of 3 holding the other 15.
  ASSERT_EQ(lowered.program.tiles.size(), 16u);
  for (const auto& tile : lowered.program.tiles) {
    std::vector<uint32_t> top_phases;
    const arch::RepeatStep* repeat = nullptr;
    for (const auto& step : tile.steps) {
      if (const auto* e = std::get_if<arch::ExchangeStep>(&step.kind)) top_phases.push_back(e->phase);
      if (const auto* r = std::get_if<arch::RepeatStep>(&step.kind)) {
        EXPECT_EQ(repeat, nullptr);
        repeat = r;
      }
    }
    EXPECT_EQ(top_phases, (std::vector<uint32_t>{0, 1, 2})) << "tile " << tile.tile;
    ASSERT_NE(repeat, nullptr);
    EXPECT_EQ(repeat->count, 3u);
    std::vector<uint32_t> body_phases;
    for (const auto& step : repeat->body) {
      if (const auto* e = std::get_if<arch::ExchangeStep>(&step.kind)) {
        body_phases.push_back(e->phase);
        EXPECT_FALSE(e->row_address.has_value());
      }
    }
    EXPECT_EQ(body_phases.size(), 15u);
    for (size_t i = 0; i < body_phases.size(); ++i) EXPECT_EQ(body_phases[i], 3 + i);
    // Each iterated pointer starts at its weights (Bytes segment) and advances by a stride
    // that covers one layer's block.
    for (const auto& pointer : repeat->pointers) {
      EXPECT_GT(pointer.stride, 0);
      EXPECT_EQ(pointer.stride % 8, 0);
      bool found = false;
      for (const auto& segment : tile.segments) {
        if (segment.address != pointer.address) continue;
        found = true;
        ASSERT_EQ(segment.bytes.size(), 4u);
        const uint32_t base =
            segment.bytes[0] | segment.bytes[1] << 8 | segment.bytes[2] << 16 | uint32_t{segment.bytes[3]} << 24;
        bool weights = false;
        for (const auto& w : tile.segments) {
          weights |= w.address == base && w.fill == arch::FillKind::Tokens &&
                     w.size == 3u * static_cast<uint32_t>(pointer.stride);
        }
        EXPECT_TRUE(weights) << "tile " << tile.tile << " pointer " << pointer.address;
      }
      EXPECT_TRUE(found);
    }
  }
}

TEST(Lower, SmallModelMovesEveryActivationWordOnce) {
  // Each scatter phase returns rows x out FP16 values to the owners: words sent plus words
  // copied locally (copy kernels) equal rows * out / 2, and no two spans overlap.
  const auto machine = arch::load_machine("ipu21-c600-t16");
  const Workload w = small();
  const Lowered lowered = lower_workload(w, machine);
  const std::map<std::string, uint32_t> outputs = {{"embed.patch.scatter", w.hidden},
                                                   {"layer.attn.qkv.scatter", 3 * w.hidden},
                                                   {"layer.attn.context", w.hidden},
                                                   {"layer.mlp.up.scatter", w.mlp}};
  for (const auto& phase : lowered.capture.phases) {
    const auto it = outputs.find(phase.label);
    if (it == outputs.end()) continue;
    uint64_t words = 0;
    std::set<std::pair<uint32_t, uint32_t>> spans;
    for (const auto& t : phase.transfers) {
      for (const auto& d : t.destinations) {
        words += t.words;
        EXPECT_TRUE(spans.insert({d.tile, d.address}).second);
      }
    }
    // Local copies right after this phase's exchange step, on every tile.
    for (const auto& tile : lowered.program.tiles) {
      const std::vector<arch::Step>* steps = &tile.steps;
      for (const auto& s : tile.steps) {
        if (const auto* r = std::get_if<arch::RepeatStep>(&s.kind); r && phase.iterations > 1) steps = &r->body;
      }
      bool after = false;
      for (const auto& s : *steps) {
        if (const auto* e = std::get_if<arch::ExchangeStep>(&s.kind)) after = e->phase == phase.id;
        const auto* k = std::get_if<arch::KernelStep>(&s.kind);
        // Not the next GEMM's weight shares, copied from the layer's weights (an iterated
        // pointer) into its block buffer before its gather.
        if (after && k && k->name == "copy" && !k->operands.at(1).indirect) words += k->scalars.at(0) / 4;
      }
    }
    EXPECT_EQ(words, uint64_t{w.rows()} * it->second / 2) << phase.label;
  }
}

TEST(Lower, VitTinyValidatesAndIsDeterministic) {
  const Workload w = load_workload("configs/workloads/vit-tiny.yaml");
  const auto machine = arch::load_machine(w.machine);
  const Lowered a = lower_workload(w, machine);
  const Lowered b = lower_workload(w, machine);
  EXPECT_NO_THROW(arch::validate_capture(a.capture, machine, "vit-tiny"));
  EXPECT_EQ(arch::capture_to_yaml(a.capture), arch::capture_to_yaml(b.capture));
  EXPECT_EQ(arch::package_to_capnp_bytes(a.program), arch::package_to_capnp_bytes(b.program));
  EXPECT_EQ(a.capture.phases.size(), 18u);
  for (const auto& m : a.memory) EXPECT_LE(m.peak_bytes, 0xe7bb0u - 0x5c000u);
}

TEST(Lower, ModelThatCannotFitNamesTileTensorAndBytes) {
  const std::string text = testing::read_file(testing::source_path("tests/data/workloads/small.yaml"));
  std::string big = text;
  big.replace(big.find("hidden: 8"), 9, "hidden: 4096");
  big.replace(big.find("mlp: 16"), 7, "mlp: 16384");
  big.replace(big.find("layers: 3"), 9, "layers: 27");
  const Workload w = parse_workload_yaml(big, "big.yaml");
  try {
    lower_workload(w, arch::load_machine("ipu21-c600-t16"));
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("big.yaml: placement: tile ", 0), 0u) << what;
    EXPECT_NE(what.find(": tensor "), std::string::npos) << what;
    EXPECT_NE(what.find(" bytes missing"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace lockstep::workload

namespace lockstep::workload {
namespace {

// The attention_merge steps' block counts (scalar 2) over the whole program.
std::set<int64_t> merge_block_counts(const Lowered& lowered) {
  std::set<int64_t> counts;
  const std::function<void(const std::vector<arch::Step>&)> walk = [&](const std::vector<arch::Step>& steps) {
    for (const arch::Step& step : steps) {
      if (const auto* r = std::get_if<arch::RepeatStep>(&step.kind)) walk(r->body);
      const auto* k = std::get_if<arch::KernelStep>(&step.kind);
      if (k != nullptr && k->name == "attention_merge") counts.insert(k->scalars[2]);
    }
  };
  for (const auto& tile : lowered.program.tiles) walk(tile.steps);
  return counts;
}

// `build --costs`: fitted kernel costs on the machine steer the lowering's choices. A dearer
// reduce_sum gives GEMM splits with fewer K blocks; a dearer merge, attention in one key block.
TEST(Lower, FittedKernelCostsSteerTheSplitsAndKeyBlocks) {
  const Workload w = load_workload(testing::source_path("configs/workloads/vit-tiny.yaml"));
  arch::MachineDescription machine = arch::load_machine(w.machine);
  const Lowered builtin = lower_workload(w, machine);
  EXPECT_EQ(merge_block_counts(builtin), (std::set<int64_t>{4}));  // docs/lowering.md "Attention"

  machine.kernel_costs["reduce_sum"] = {40, 6, 11};
  machine.kernel_costs["attention_merge"] = {700, 1200, 11};
  const Lowered fitted = lower_workload(w, machine);
  ASSERT_EQ(fitted.gemms.size(), builtin.gemms.size());
  size_t fewer = 0;
  for (size_t i = 0; i < builtin.gemms.size(); ++i) {
    EXPECT_LE(fitted.gemms[i].k_blocks, builtin.gemms[i].k_blocks) << builtin.gemms[i].name;
    fewer += fitted.gemms[i].k_blocks < builtin.gemms[i].k_blocks;
  }
  EXPECT_GT(fewer, 0u);
  EXPECT_EQ(merge_block_counts(fitted), (std::set<int64_t>{1}));
}

// Row groups (docs/lowering.md "GEMMs"): vit-tiny with 256 rows puts each GEMM on two copies
// of its grid. Every weight is resident once, a block's rows shared out over its copies; in the
// gather phase each copy sends its share to the other's block buffer, from its layer-l weights
// in iteration l, and copies it to its own buffer just before.
TEST(Lower, RowGroupsShareEachBlockAndSendItEveryLayer) {
  std::string text = testing::read_file(testing::source_path("configs/workloads/vit-tiny.yaml"));
  text.replace(text.find("image: 128"), 10, "image: 256");
  const Workload w = parse_workload_yaml(text, "vit-tiny-256.yaml");
  const Lowered lowered = lower_workload(w, arch::load_machine(w.machine));
  const GemmPlan& qkv = lowered.gemms.at(1);
  ASSERT_EQ(qkv.name, "layer.attn.qkv");
  ASSERT_EQ(qkv.row_groups, 2u);
  uint64_t elements = 0;
  std::map<uint32_t, uint32_t> stride;  // tile -> its share's per-layer stride
  for (const WeightBlock& b : lowered.weights) {
    if (b.tensor != "layer.attn.qkv.weight") continue;
    elements += uint64_t{b.rows.size()} * b.columns.size();
    stride[b.tile] = b.stride;
  }
  EXPECT_EQ(elements, uint64_t{w.hidden} * 3 * w.hidden);
  const auto& gather = lowered.capture.phases.at(3);
  ASSERT_EQ(gather.label, "layer.attn.qkv.gather");
  size_t shares = 0;
  for (const auto& t : gather.transfers) {
    if (t.source_addresses.front() == t.source_addresses.back()) continue;  // an activation row
    ++shares;
    ASSERT_EQ(t.destinations.size(), 1u);
    EXPECT_NE(t.destinations[0].tile, t.source_tile);
    for (size_t l = 0; l < t.source_addresses.size(); ++l) {
      EXPECT_EQ(t.source_addresses[l], t.source_addresses[0] + l * stride.at(t.source_tile));
    }
  }
  EXPECT_EQ(shares, size_t{qkv.k_blocks} * qkv.o_blocks * 2);
}

// SigLIP's 729 keys in blocks of 112 leave a last block of 57: it gets fewer query groups than
// the full blocks (docs/lowering.md "Attention"), so its tiles' softmax rows are longer in
// rows and shorter in keys, every head still uses at most its 92 tiles, and every row of every
// head is merged exactly once.
TEST(Lower, ShortLastKeyBlockGetsFewerQueryGroups) {
  const Workload w = load_workload(testing::source_path("configs/workloads/siglip-so400m.yaml"));
  const Lowered lowered = lower_workload(w, arch::load_machine(w.machine));
  std::map<int64_t, std::set<int64_t>> softmax_rows;  // keys -> query rows per call
  std::map<int64_t, size_t> softmax_tiles;            // keys -> calls (one a tile)
  int64_t merged_rows = 0;
  const std::function<void(const std::vector<arch::Step>&)> walk = [&](const std::vector<arch::Step>& steps) {
    for (const arch::Step& step : steps) {
      if (const auto* r = std::get_if<arch::RepeatStep>(&step.kind)) walk(r->body);
      const auto* k = std::get_if<arch::KernelStep>(&step.kind);
      if (k != nullptr && k->name == "attention_softmax") {
        softmax_rows[k->scalars[1]].insert(k->scalars[0]);
        ++softmax_tiles[k->scalars[1]];
      }
      if (k != nullptr && k->name == "attention_merge") merged_rows += k->scalars[0];
    }
  };
  for (const auto& tile : lowered.program.tiles) walk(tile.steps);
  ASSERT_EQ(softmax_rows.size(), 2u);
  EXPECT_EQ(softmax_rows.begin()->first, 57);
  EXPECT_EQ(softmax_rows.rbegin()->first, 112);
  EXPECT_EQ(*softmax_rows[112].rbegin(), 53);  // 14 groups of 52 or 53 rows
  EXPECT_EQ(*softmax_rows[57].begin(), 91);    // 8 groups of 91 or 92 rows
  EXPECT_EQ(softmax_tiles[112], 16u * 6 * 14);
  EXPECT_EQ(softmax_tiles[57], 16u * 8);
  EXPECT_EQ(merged_rows, int64_t{16} * 729);
}

}  // namespace
}  // namespace lockstep::workload
