// The corpora of the capture, package-YAML and machine fuzzers (tests/fuzz/corpus) through
// their readers as ordinary tests: every file reads or fails as bad input.
#include <gtest/gtest.h>

#include "arch/machine.hpp"
#include "formats/capture.hpp"
#include "formats/npy.hpp"
#include "formats/package_io.hpp"
#include "formats/safetensors.hpp"
#include "io/yaml_reader.hpp"
#include "profile/profile.hpp"
#include "sim/device/application.hpp"
#include "support/corpus.hpp"

namespace lockstep::arch {
namespace {

using testing::expect_corpus_reads_and_refuses;
using testing::run_corpus;

TEST(ReaderCorpus, CaptureCapnp) {
  const auto outcome = run_corpus("capture_capnp", [](const std::string& path) {
    const Capture capture = read_capture(path);
    (void)capture_stats(capture);
  });
  expect_corpus_reads_and_refuses(outcome);
}

TEST(ReaderCorpus, Profile) {
  const auto outcome = run_corpus("profile", [](const std::string& path) {
    const Profile profile = read_profile(path);
    for (const auto& tile : profile.tiles) {
      for (const auto& s : tile.samples) EXPECT_LT(s.step, profile.steps.size());
    }
  });
  expect_corpus_reads_and_refuses(outcome);
}

TEST(ReaderCorpus, Application) {
  const auto outcome = run_corpus("application", [](const std::string& path) {
    const Application app = read_application(path);
    const std::string bytes = application_bytes(app);
    EXPECT_EQ(parse_application(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "again"), app);
  });
  expect_corpus_reads_and_refuses(outcome);
}

TEST(ReaderCorpus, CaptureYaml) {
  const auto outcome = run_corpus("capture_yaml", [](const std::string& path) {
    const Capture capture = read_capture(path);
    // What was read writes back to the same canonical text it reads from.
    const std::string text = capture_to_yaml(capture);
    EXPECT_EQ(capture_to_yaml(parse_capture_yaml(text, "again.yaml")), text);
  });
  expect_corpus_reads_and_refuses(outcome);
}

TEST(ReaderCorpus, PackageYaml) {
  const auto outcome = run_corpus("package_yaml", [](const std::string& path) {
    const Package package = parse_package_yaml(read_text_file(path), path);
    const std::string capnp = package_to_capnp_bytes(package);
    EXPECT_EQ(read_package_from_bytes(reinterpret_cast<const uint8_t*>(capnp.data()), capnp.size(), "again"), package);
  });
  expect_corpus_reads_and_refuses(outcome);
}

TEST(ReaderCorpus, Machine) {
  const auto outcome = run_corpus("machine", [](const std::string& path) {
    const MachineDescription machine = load_machine(path);
    EXPECT_EQ(parse_machine_yaml(machine_to_yaml(machine), "again.yaml").digest, machine.digest);
  });
  expect_corpus_reads_and_refuses(outcome);
}

// The .npy and safetensors fuzzers' corpora (issue 26's cases: a header length of 2^32-16 or
// 379,676,406,402,707, a shape of (2^32-1)^2, data past the end, a name given twice).
TEST(ReaderCorpus, Npy) {
  const auto outcome = run_corpus("npy", [](const std::string& path) {
    const NpyArray array = read_npy(path);
    EXPECT_EQ(parse_npy(npy_bytes(array), "again.npy").data, array.data);
  });
  expect_corpus_reads_and_refuses(outcome, 5);
}

TEST(ReaderCorpus, Safetensors) {
  const auto outcome = run_corpus("safetensors", [](const std::string& path) {
    const SafeTensors file = read_safetensors(path);
    for (const auto& [name, tensor] : file.tensors()) EXPECT_EQ(tensor.bytes.size(), tensor.end - tensor.begin);
  });
  expect_corpus_reads_and_refuses(outcome, 5);
}

}  // namespace
}  // namespace lockstep::arch
