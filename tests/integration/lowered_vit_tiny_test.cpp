// End to end on the shipped small default: `lockstep lower` vit-tiny (on its own machine,
// ipu21-c600-t64), `lockstep compile` every phase with the production policy B(1024), and
// `lockstep run` the package: no hazard (the lowering keeps every tile's sends and receives
// in different memory elements), every payload expectation the compiler added holds.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "formats/capture.hpp"
#include "formats/package.hpp"
#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

TEST(LoweredVitTiny, CompilesAndRunsCleanWithItsPayloadProof) {
  const std::string dir = temp_dir("lowered_vit_tiny");
  const std::string capture = dir + "/vit-tiny.capnp";
  const std::string package = dir + "/vit-tiny.pkg";

  const auto lowered = run_lockstep({"lower", source_path("configs/workloads/vit-tiny.yaml"), "-o", capture});
  ASSERT_EQ(lowered.exit_code, 0) << lowered.out << lowered.err;
  const arch::Capture phases = arch::read_capture(capture);
  ASSERT_EQ(phases.machine_name, "ipu21-c600-t64");
  ASSERT_EQ(phases.phases.size(), 18u);  // 3 embedding + 15 in the layer body

  const auto compiled = run_lockstep({"compile", capture, "--exchange-stream-words", "1024", "-o", package});
  ASSERT_EQ(compiled.exit_code, 0) << "lockstep compile " << capture
                                   << " --exchange-stream-words 1024: " << compiled.out << compiled.err;
  const arch::Package program = arch::read_package(package);
  EXPECT_EQ(program.phases.size(), 18u);
  EXPECT_FALSE(program.expectations.empty()) << "the compiler's payload proof is missing";

  const auto ran = run_lockstep({"run", package, "--json"});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  const nlohmann::json result = nlohmann::json::parse(ran.out);
  EXPECT_TRUE(result["hazards"].empty()) << result["hazards"].dump();
  EXPECT_TRUE(result["expectation_failures"].empty()) << result["expectation_failures"].dump();
  EXPECT_TRUE(result["ok"].get<bool>());
  // Every phase ran: 3 embedding phases once, 15 layer phases twice (2 layers).
  EXPECT_EQ(result["executions"].size(), 3u + 15u * 2u);

  // The critical path's split (docs/timing.md, "Where the cycles go") accounts for every cycle
  // (this package is the compiled capture alone: its kernels are the compiler's, if any).
  const auto& split = result["cycle_split"];
  const uint64_t parts = split["exchange"].get<uint64_t>() + split["compute"].get<uint64_t>() +
                         split["sync"].get<uint64_t>() + split["patching"].get<uint64_t>() +
                         split["control"].get<uint64_t>();
  EXPECT_EQ(parts, result["total_cycles"].get<uint64_t>()) << split.dump();
  uint64_t by_kernel = 0;
  for (const auto& item : split["compute_by_kernel"].items()) by_kernel += item.value().get<uint64_t>();
  EXPECT_EQ(by_kernel, split["compute"].get<uint64_t>());
  EXPECT_GT(split["exchange"].get<uint64_t>(), 0u);
}

}  // namespace
}  // namespace lockstep::testing
