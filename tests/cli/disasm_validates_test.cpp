// `lockstep disasm PACKAGE --tile T --code` lowers code, so it validates the package first,
// as `run` does: a package that fails validation is bad input with the validator's line, never
// an internal error from the encoder (issue 26, finding 3).
#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

std::string package_with(const std::string& name, const std::string& from, const std::string& to) {
  std::string text = read_file(source_path("tests/data/packages/point_to_point.yaml"));
  text.replace(text.find(from), from.size(), to);
  const std::string path = temp_dir("disasm-validates-" + name) + "/p.yaml";
  write_file(path, text);
  return path;
}

TEST(DisasmValidates, CodeOfAnInvalidPackageIsBadInputWithTheValidatorsLine) {
  const std::string path = package_with("incoming-base", "incoming_base: 0x60000", "incoming_base: 0x100000");
  const std::string line = "error: " + path +
                           ": tile 1: step 0 (exchange): incoming_base: 0x100000 does not fit "
                           "setzi's 20-bit immediate (0..0xfffff)\n";
  const auto disasm = run_lockstep({"disasm", path, "--tile", "1", "--code"});
  EXPECT_EQ(disasm.exit_code, 2);
  EXPECT_EQ(disasm.err, line);
  EXPECT_EQ(disasm.out, "");
  const auto run = run_lockstep({"run", path});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find(line), std::string::npos) << run.err;
}

TEST(DisasmValidates, AnyRuleRefusesTheCodeNotOnlyTheLoweredTile) {
  // Tile 0's code would lower; tile 1's kernel breaks a rule that has nothing to encode.
  const std::string path = package_with("kernel", "scalars: [12]", "scalars: [12, 1]");
  const auto r = run_lockstep({"disasm", path, "--tile", "0", "--code"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + path + ": tile 1: step 2 (kernel): scalars: checksum takes 1 scalars, got 2\n");
}

TEST(DisasmValidates, CodeOfAValidPackageStillPrints) {
  const std::string path = package_with("inside", "incoming_base: 0x60000", "incoming_base: 0xfffff");
  const auto r = run_lockstep({"disasm", path, "--tile", "1", "--code"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("setzi reg=$m8 immediate=0xfffff"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace lockstep::testing
