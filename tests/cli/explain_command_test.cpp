// `lockstep explain PACKAGE --output NAME --index I` (issue 27 item 4): the chain from one output
// element of the whole vit-tiny model back to the input patch it came from.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

TEST(ExplainCommand, AVitTinyOutputElementLeadsBackThroughTheLastGemmItsPhasesAndTheInputPatch) {
  const std::string dir = temp_dir("explain");
  const std::string package = dir + "/tiny.lkspkg";
  auto r = run_lockstep({"build", "vit-tiny", "-o", package});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_lockstep({"explain", package, "--output", "output", "--index", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& out = r.out;
  EXPECT_EQ(out.rfind("output[5] is tile 0 word 0x5e814\n1. tile 0 word 0x5e814 = ", 0), 0u) << out;
  // The last layer's MLP down-projection: its scatter, its reduction, its GEMM and gather.
  const size_t scatter = out.find("exchange from tile 48 address 0x89014");
  const size_t reduce = out.find("kernel reduce_sum at cycle", scatter);
  const size_t gemm = out.find("kernel gemm_fp8 at cycle", reduce);
  const size_t gather = out.find("phase 15 (layer.mlp.down.gather)", gemm);
  ASSERT_NE(scatter, std::string::npos) << out;
  EXPECT_NE(out.find("phase 16 (layer.mlp.down.reduce)", reduce), std::string::npos) << out;
  ASSERT_NE(gemm, std::string::npos) << out;
  EXPECT_NE(gather, std::string::npos) << out;
  // The walk ends where the data began: the input patch, loaded with the package.
  const size_t last = out.rfind('\n', out.size() - 2);
  EXPECT_NE(out.find("loader: segment at 0x5c800 (holding input patches) at cycle 0", last), std::string::npos) << out;
}

TEST(ExplainCommand, AnUnknownOutputOrAnIndexPastItIsRefused) {
  const std::string dir = temp_dir("explain_bad");
  const std::string package = source_path("tests/integration/packages/p2p_3w.yaml");
  std::string text = read_file(package);
  text +=
      "bindings:\n  - {name: received, kind: output, element: float16, shape: [6], slices: [{tile: 1, address: "
      "0x70000, bytes: 12}]}\n";
  write_file(dir + "/p.yaml", text);
  auto r = run_lockstep({"explain", dir + "/p.yaml", "--output", "sent", "--index", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--output sent: no output binding by that name"), std::string::npos) << r.err;
  r = run_lockstep({"explain", dir + "/p.yaml", "--output", "received", "--index", "6"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--index 6: output received has 6 elements"), std::string::npos) << r.err;
  r = run_lockstep({"explain", dir + "/p.yaml", "--output", "received", "--index", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find(
          "1. tile 1 word 0x70008 = 0x40018002: exchange from tile 0 address 0x60008 at cycle 139, phase 1 (p2p)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("2. tile 0 word 0x60008 = 0x40018002: loader: segment at 0x60000 at cycle 0"), std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace lockstep::testing
