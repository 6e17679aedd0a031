// The capture's two forms: YAML <-> Cap'n Proto round trip, magic and version checks.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>

#include "formats/capture.hpp"
#include "io/errors.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CaptureFormat, YamlToCapnpToYamlIsByteEqual) {
  const std::string source = testing::source_path("tests/data/captures/small.yaml");
  const std::string text = testing::read_file(source);
  const Capture capture = read_capture(source);
  ASSERT_EQ(capture.phases.size(), 3u);
  EXPECT_EQ(capture.phases[1].transfers[0].source_addresses, (std::vector<uint32_t>{0x5c000, 0x5d000, 0x5e000}));
  EXPECT_EQ(capture.phases[0].transfers[1].destinations[1], (Destination{15, 0xb0000}));
  EXPECT_EQ(capture.phases[2].label, "empty: \"quoted\"");
  EXPECT_EQ(capture_to_yaml(capture), text);

  const std::string dir = testing::temp_dir("capture_format");
  write_capture_capnp(capture, dir + "/small.cap");
  const std::string bytes = testing::read_file(dir + "/small.cap");
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(bytes.substr(0, 8), "LKSCAP01");
  const Capture back = read_capture(dir + "/small.cap");
  write_capture_yaml(back, dir + "/small.yaml");
  EXPECT_EQ(testing::read_file(dir + "/small.yaml"), text);
}

TEST(CaptureFormat, CapnpWriteIsDeterministic) {
  const Capture capture = read_capture(testing::source_path("tests/data/captures/small.yaml"));
  const std::string dir = testing::temp_dir("capture_deterministic");
  write_capture_capnp(capture, dir + "/a.cap");
  write_capture_capnp(capture, dir + "/b.cap");
  EXPECT_EQ(testing::read_file(dir + "/a.cap"), testing::read_file(dir + "/b.cap"));
}

// `replay` reads only the phase it replays: the same phase as a whole read gives, in both
// forms, and a phase the file lacks is named with the file.
TEST(CaptureFormat, ReadsOnlyOnePhaseWhenAsked) {
  const std::string yaml = testing::source_path("tests/data/captures/small.yaml");
  const Capture whole = read_capture(yaml);
  const std::string dir = testing::temp_dir("capture_one_phase");
  write_capture_capnp(whole, dir + "/small.cap");
  for (const std::string& path : {yaml, dir + "/small.cap"}) {
    for (const auto& phase : whole.phases) {
      const Capture one = read_capture(path, phase.id);
      ASSERT_EQ(one.phases.size(), 1u) << path;
      EXPECT_EQ(one.machine_name, whole.machine_name);
      EXPECT_EQ(capture_to_yaml(Capture{one.version, one.machine_name, {phase}}), capture_to_yaml(one)) << path;
    }
    EXPECT_EQ(error_of([&] { read_capture(path, 77); }), path + ": phase 77: not in the capture (3 phases)");
  }
}

TEST(CaptureFormat, RejectsOtherVersionsAndGarbage) {
  const Capture capture = read_capture(testing::source_path("tests/data/captures/small.yaml"));
  const std::string dir = testing::temp_dir("capture_versions");
  write_capture_capnp(capture, dir + "/a.cap");
  std::string bytes = testing::read_file(dir + "/a.cap");
  bytes[7] = '2';
  testing::write_file(dir + "/v2.cap", bytes);
  EXPECT_EQ(error_of([&] { read_capture(dir + "/v2.cap"); }),
            dir + "/v2.cap: capture format version '02' is not supported (this build reads 01)");
  testing::write_file(dir + "/short.cap", bytes.substr(0, 8 + 12));
  EXPECT_NE(error_of([&] { read_capture(dir + "/short.cap"); }), "");
  testing::write_file(dir + "/trunc.cap", "LKSCAP01" + bytes.substr(8, bytes.size() - 24));
  EXPECT_NE(error_of([&] { read_capture(dir + "/trunc.cap"); }), "");
}

TEST(CaptureFormat, YamlErrorsNameLineAndKey) {
  EXPECT_EQ(error_of([] {
              parse_capture_yaml(
                  "version: 1\nmachine: m\nphases:\n  - id: 0\n    label: a\n    iterations: 2\n"
                  "    transfers:\n      - {source_tile: 0, source_addresses: [0x5c000],"
                  " destinations: [{tile: 1, address: 0xa0000}], words: 1}\n",
                  "c.yaml");
            }),
            "c.yaml:8: phases[0].transfers[0].source_addresses: 1 addresses, expected one per "
            "iteration (2)");
  EXPECT_EQ(error_of([] { parse_capture_yaml("version: 1\nmachine: m\nphases: []\ncolour: red\n", "c.yaml"); }),
            "c.yaml:4: colour: unknown key");
  EXPECT_EQ(error_of([] { parse_capture_yaml("version: 2\nmachine: m\nphases: []\n", "c.yaml"); }),
            "c.yaml:1: version: 2 is not supported (this build reads 1)");
}

}  // namespace
}  // namespace lockstep::arch
