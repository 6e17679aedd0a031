// `lockstep package convert` and `lockstep inspect` end to end, through the built binary.
#include <gtest/gtest.h>

#include <fstream>

#include "formats/package.hpp"
#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

TEST(PackageCommand, ConvertBothWaysAndInspect) {
  const std::string dir = temp_dir("package-command");
  const std::string in = source_path("tests/data/packages/repeat_patch.yaml");
  auto r = run_lockstep({"package", "convert", in, dir + "/p.lkspkg"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_lockstep({"package", "convert", dir + "/p.lkspkg", dir + "/p.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_lockstep({"package", "convert", dir + "/p.yaml", dir + "/q.lkspkg"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir + "/p.lkspkg"), read_file(dir + "/q.lkspkg"));
  EXPECT_EQ(read_file(dir + "/p.yaml"), arch::package_to_yaml(arch::read_package(in)));

  const auto text = run_lockstep({"inspect", dir + "/p.lkspkg"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out, run_lockstep({"inspect", dir + "/p.yaml"}).out);
  EXPECT_NE(text.out.find("machine: ipu21-c600-t16"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("tiles: 2 listed (ids 0 .. 1)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  phase 2: label \"layer.attn.qkv\", executions 3, operation \"gather\""), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("table bytes per tile: max 24, total 40"), std::string::npos) << text.out;
  // tile 0: one sync in its nested body; tile 1: two (bodies counted once).
  EXPECT_NE(text.out.find("  sync: 3 / 2\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  repeat: 3 / 2\n"), std::string::npos) << text.out;

  const auto json = run_lockstep({"inspect", "--json", dir + "/p.lkspkg"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"max\": 24"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"execution_count\": 3"), std::string::npos) << json.out;
}

TEST(PackageCommand, InvalidPackageIsBadInputAndWritesNothing) {
  const std::string dir = temp_dir("package-command-bad");
  std::string text = read_file(source_path("tests/data/packages/point_to_point.yaml"));
  text.replace(text.find("scalars: [12]"), 13, "scalars: [12, 1]");
  write_file(dir + "/bad.yaml", text);
  const auto r = run_lockstep({"package", "convert", dir + "/bad.yaml", dir + "/out.lkspkg"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.yaml: tile 1: step 2 (kernel): scalars: checksum takes 1 scalars, got 2"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::ifstream(dir + "/out.lkspkg").good());
}

TEST(PackageCommand, TruncatedCapnpIsBadInput) {
  const std::string dir = temp_dir("package-command-truncated");
  const auto r =
      run_lockstep({"package", "convert", source_path("tests/data/packages/point_to_point.yaml"), dir + "/p.lkspkg"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string bytes = read_file(dir + "/p.lkspkg");
  write_file(dir + "/cut.lkspkg", bytes.substr(0, bytes.size() / 2));
  const auto cut = run_lockstep({"inspect", dir + "/cut.lkspkg"});
  EXPECT_EQ(cut.exit_code, 2);
  EXPECT_NE(cut.err.find("cut.lkspkg: "), std::string::npos) << cut.err;
}

}  // namespace
}  // namespace lockstep::testing
