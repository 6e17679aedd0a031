// Both package forms carry exactly the same information: converting in either direction and
// back gives byte-identical files.
#include <gtest/gtest.h>

#include "formats/package.hpp"
#include "formats/package_io.hpp"
#include "io/errors.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

const std::vector<std::string> kPackages = {"point_to_point.yaml", "repeat_patch.yaml", "long_rows.yaml"};

Package load(const std::string& name) { return read_package(testing::source_path("tests/data/packages/" + name)); }

Package from_capnp(const std::string& bytes) {
  return read_package_from_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "memory");
}

// Exercises every field, including ones a valid package would not combine.
Package everything() {
  Package p;
  p.machine_name = "m \"quoted\"\tname";
  p.machine_digest = "0123456789abcdef";
  p.phases = {{4, "a.b", 27, "op"}, {9, "", 1, ""}};
  TileProgram t;
  t.tile = 5;
  t.table = {0x4c000, 0x100};
  t.segments.push_back({0x4c000, 3, FillKind::Bytes, {1, 2, 3}, 0});
  t.segments.push_back({0x4d000, 8, FillKind::Tokens, {}, UINT64_MAX});
  t.segments.push_back({0x4e000, 0, FillKind::Bytes, {}, 0});
  RepeatStep inner{2, {Step{SyncStep{7}}}, {{0x4c800, -4}}};
  RepeatStep outer;
  outer.count = 4;
  outer.pointers = {{0x4c804, INT32_MAX}, {0x4c808, INT32_MIN}};
  outer.body.push_back(Step{PatchStep{PatchMethod::Bulk, {{0x4c010, {1, 2, 3, 4}}, {0x4c014, {}}}}});
  outer.body.push_back(Step{inner});
  outer.body.push_back(Step{RepeatStep{1, {}, {}}});
  t.steps.push_back(Step{ExchangeStep{3, 0x4c000, 0x60000, 0x640, 2, 0x5bd}});
  t.steps.push_back(Step{ExchangeStep{3, std::nullopt, 0, std::nullopt, 0, std::nullopt}});
  t.steps.push_back(Step{KernelStep{"copy", {{1, false}, {2, true, -64}}, {INT64_MIN, INT64_MAX, 0}}});
  t.steps.push_back(Step{outer});
  t.steps.push_back(Step{PatchStep{PatchMethod::Setup, {}}});
  std::vector<uint32_t> many(19);
  for (uint32_t i = 0; i < many.size(); ++i) many[i] = 0x9e3779b9u * (i + 1);
  t.steps.push_back(Step{PatchStep{PatchMethod::Helper, {{0x4c018, many}}}});
  t.steps.push_back(
      Step{HostStep{{{HostDirection::ToTile, 0x50180, 0x1000, 4096}, {HostDirection::ToHost, UINT32_MAX, 0, 0}}}});
  t.steps.push_back(Step{HostStep{}});
  p.tiles.push_back(t);
  p.tiles.push_back(TileProgram{6, {}, {}, {}});
  p.bindings = {{"w", BindingKind::Weight, {{5, 0x4d000, 8}, {6, 0x50000, 4}}, ElementType::Float16, {2, 3}},
                {"none", BindingKind::Output, {}, ElementType::Bytes, {}}};
  p.expectations = {{5, 0x4d000, 8, {}, 0xfedcba9876543210ull}, {6, 0x50000, 2, {0xab, 0xcd}, {}}};
  p.workload = "  name: \"w\" # not a comment: here\n\n   \nmodel: {layers: 2}  \n---\n...\n- |\n";
  HostCallSpec run{"r\"un\"", UINT32_MAX,    7,    {{0x1000, UINT64_MAX, 4}, {0, 0, 0}}, {{0x2000, 12, 8}}, {1, 2},
                   {},        {"w", "none"}, {"ü"}};
  p.host = {0x10000, 0xfffc, {run, HostCallSpec{}}};
  return p;
}

// Texts a literal block scalar holds (the first seven: a byte-order mark and non-ASCII UTF-8
// come back too) and ones that fall back to a quoted string. Text that is not UTF-8 is
// refused by both readers (WorkloadTextThatIsNotUtf8IsRefused).
const std::vector<std::string> kWorkloadTexts = {"a",
                                                 "a\n",
                                                 "a\nb",
                                                 "\"x\": '#'\n  y\n",
                                                 "ü\n",
                                                 "\xef\xbb\xbfname: x\n",
                                                 "ok \xc3\xbf\n",
                                                 "\n",
                                                 "a\n\n",
                                                 "\na\n",
                                                 "tab\there\n",
                                                 "cr\r\n",
                                                 "\x01"};

TEST(PackageRoundTrip, YamlToCapnpToYamlIsByteEqual) {
  for (const auto& name : kPackages) {
    SCOPED_TRACE(name);
    const std::string yaml = package_to_yaml(load(name));
    const std::string capnp = package_to_capnp_bytes(parse_package_yaml(yaml, name));
    EXPECT_EQ(package_to_yaml(from_capnp(capnp)), yaml);
  }
}

TEST(PackageRoundTrip, CapnpToYamlToCapnpIsByteEqual) {
  for (const auto& name : kPackages) {
    SCOPED_TRACE(name);
    const std::string capnp = package_to_capnp_bytes(load(name));
    const std::string yaml = package_to_yaml(from_capnp(capnp));
    EXPECT_EQ(package_to_capnp_bytes(parse_package_yaml(yaml, name)), capnp);
  }
}

TEST(PackageRoundTrip, EveryFieldSurvivesBothForms) {
  const Package p = everything();
  EXPECT_EQ(from_capnp(package_to_capnp_bytes(p)), p);
  const std::string yaml = package_to_yaml(p);
  EXPECT_EQ(parse_package_yaml(yaml, "everything.yaml"), p) << yaml;
}

TEST(PackageRoundTrip, WorkloadTextSurvivesBothFormsByteEqual) {
  for (size_t i = 0; i < kWorkloadTexts.size(); ++i) {
    SCOPED_TRACE(i);
    Package p = load("point_to_point.yaml");
    p.workload = kWorkloadTexts[i];
    const std::string yaml = package_to_yaml(p);
    EXPECT_EQ(parse_package_yaml(yaml, "w.yaml"), p) << yaml;
    const std::string capnp = package_to_capnp_bytes(p);
    EXPECT_EQ(from_capnp(capnp), p);
    EXPECT_EQ(package_to_yaml(from_capnp(package_to_capnp_bytes(parse_package_yaml(yaml, "w.yaml")))), yaml);
    EXPECT_EQ(yaml.find("workload: |2") != std::string::npos, i < 7) << yaml;
  }
}

TEST(PackageRoundTrip, WorkloadTextThatIsNotUtf8IsRefused) {
  Package p = load("point_to_point.yaml");
  p.workload = "bad \xff\n";
  try {
    (void)from_capnp(package_to_capnp_bytes(p));
    ADD_FAILURE() << "Cap'n Proto form accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "memory: workload: invalid UTF-8 at byte 4");
  }
  try {
    (void)parse_package_yaml(package_to_yaml(p), "w.yaml");
    ADD_FAILURE() << "YAML form accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("invalid UTF-8 (0xff)"), std::string::npos) << e.what();
  }
}

TEST(PackageRoundTrip, NoWorkloadNoKey) {
  EXPECT_EQ(package_to_yaml(load("point_to_point.yaml")).find("workload"), std::string::npos);
  EXPECT_NE(package_to_yaml(everything())
                .find("\nworkload: |2\n    name: \"w\" # not a comment: here\n\n"
                      "     \n  model: {layers: 2}  \n  ---\n  ...\n  - |\nphases:"),
            std::string::npos)
      << package_to_yaml(everything());
}

TEST(PackageRoundTrip, FilesWrittenAtomicallyReadBack) {
  const std::string dir = testing::temp_dir("package-roundtrip");
  const Package p = load("repeat_patch.yaml");
  write_package_capnp(p, dir + "/p.lkspkg");
  write_package_yaml(p, dir + "/p.yaml");
  EXPECT_EQ(read_package(dir + "/p.lkspkg"), p);
  EXPECT_EQ(read_package(dir + "/p.yaml"), p);
  EXPECT_EQ(testing::read_file(dir + "/p.lkspkg").substr(0, 8), "LKSPKG01");
}

TEST(PackageRoundTrip, CanonicalYamlShape) {
  const Package p = load("point_to_point.yaml");
  const std::string yaml = package_to_yaml(p);
  EXPECT_NE(yaml.find("        words: [40a0008a, 784c0001, 43a00000, 00000000]\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("      - exchange: {phase: 1, row: 0x4c000, incoming_base: 0x60000}\n"), std::string::npos);
  EXPECT_NE(yaml.find("      - kernel: {name: \"checksum\", operands: [0x60000, 0x61000], "
                      "scalars: [12]}\n"),
            std::string::npos);
  EXPECT_EQ(yaml.rfind("version: 1\nmachine: {name: \"ipu21-c600-t16\"", 0), 0u);
}

TEST(PackageRoundTrip, WordsAreLittleEndianInMemory) {
  const Package p = load("point_to_point.yaml");
  const auto& bytes = p.tiles[0].segments[0].bytes;
  ASSERT_EQ(bytes.size(), 16u);
  EXPECT_EQ(bytes[0], 0x8a);
  EXPECT_EQ(bytes[3], 0x40);
  EXPECT_EQ(p.tiles[1].segments[1].size, 0x1010u);
}

}  // namespace
}  // namespace lockstep::arch
