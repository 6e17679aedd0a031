// Workload files: the two shipped workloads load; bad shapes name file:line: key.
#include "workload/workload.hpp"

#include <gtest/gtest.h>

#include "io/errors.hpp"
#include "support/test_support.hpp"

namespace lockstep::workload {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_workload_yaml(text, "w.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string with(const std::string& from, const std::string& to) {
  std::string text = testing::read_file(testing::source_path("tests/data/workloads/small.yaml"));
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(Workload, SiglipSo400mHasTheIssuesShape) {
  const Workload w = load_workload("configs/workloads/siglip-so400m.yaml");
  EXPECT_EQ(w.layers, 27u);
  EXPECT_EQ(w.hidden, 1152u);
  EXPECT_EQ(w.mlp, 4304u);
  EXPECT_EQ(w.heads, 16u);
  EXPECT_EQ(w.tokens(), 729u);
  EXPECT_EQ(w.head_dim(), 72u);
  EXPECT_EQ(w.patch_values(), 588u);
  EXPECT_EQ(w.weight_scale, -4);
  EXPECT_EQ(w.machine, "ipu21-c600");
}

TEST(Workload, VitTinyIsSmall) {
  const Workload w = load_workload("configs/workloads/vit-tiny.yaml");
  EXPECT_EQ(w.tokens(), 64u);
  EXPECT_EQ(w.hidden, 256u);
  EXPECT_EQ(w.heads, 4u);
  EXPECT_EQ(w.layers, 2u);
  EXPECT_EQ(w.machine, "ipu21-c600-t64");
}

TEST(Workload, BadShapesNameFileLineAndKey) {
  EXPECT_EQ(error_of(with("heads: 2", "heads: 3")), "w.yaml:8: model.heads: 3 does not divide hidden 8");
  EXPECT_EQ(error_of(with("hidden: 8", "hidden: 7")),
            "w.yaml:6: model.hidden: 7 must be even and non-zero (FP16 pairs fill 32-bit words)");
  EXPECT_EQ(error_of(with("patch: 2", "patch: 5")), "w.yaml:10: model.patch: 5 is not between 1 and image 4");
  EXPECT_EQ(error_of(with("batch: 1", "batch: 2")), "w.yaml:12: model.batch: only batch 1 is lowered");
  EXPECT_EQ(error_of(with("  batch: 1\n", "  batch: 1\n  depth: 3\n")), "w.yaml:13: model.depth: unknown key");
  EXPECT_EQ(error_of(with("weights: fp8", "weights: int4")),
            "w.yaml:16: formats.weights: 'int4' is not supported (fp8)");
}

}  // namespace
}  // namespace lockstep::workload
