// Synthetic captures: deterministic per seed, valid for every family, the promised shapes.
#include "workload/synth.hpp"

#include <gtest/gtest.h>

#include <map>

#include "formats/capture.hpp"
#include "io/errors.hpp"
#include "support/test_support.hpp"

namespace lockstep::workload {
namespace {

arch::MachineDescription machine(uint32_t tiles) {
  arch::MachineDescription m;
  m.name = "test-machine";
  m.tiles = tiles;
  return m;
}

TEST(Synth, EveryFamilyValidatesAtSeveralSizes) {
  for (const auto& name : synth_family_names()) {
    for (uint32_t tiles : {2u, 3u, 16u, 64u, 257u}) {
      SynthOptions options;
      options.family = parse_synth_family(name);
      options.seed = 7;
      options.phases = name == "transformer" ? 12 : 3;
      const auto m = machine(tiles);
      const arch::Capture capture = synthesize_capture(options, m);
      SCOPED_TRACE(name + " at " + std::to_string(tiles) + " tiles");
      ASSERT_EQ(capture.phases.size(), options.phases);
      EXPECT_NO_THROW(arch::validate_capture(capture, m, name));
      EXPECT_GT(arch::capture_stats(capture).transfers, 0u);
    }
  }
}

TEST(Synth, NoTwoDestinationSpansOfAPhaseOverlapOnATile) {
  SynthOptions options;
  options.family = SynthFamily::Multicast;
  options.seed = 3;
  const auto m = machine(64);
  const arch::Capture capture = synthesize_capture(options, m);
  for (const auto& phase : capture.phases) {
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> spans;  // (tile, begin) -> end
    for (const auto& t : phase.transfers) {
      for (const auto& d : t.destinations) spans[{d.tile, d.address}] = d.address + 4 * t.words;
    }
    std::pair<uint32_t, uint32_t> last{UINT32_MAX, 0};
    for (const auto& [key, end] : spans) {
      if (key.first == last.first) {
        EXPECT_LE(last.second, key.second) << "tile " << key.first;
      }
      last = {key.first, end};
    }
  }
}

TEST(Synth, TransformerHasTheSeedsShape) {
  SynthOptions options;
  options.family = SynthFamily::Transformer;
  options.seed = 1;
  const auto m = machine(32);
  const arch::Capture capture = synthesize_capture(options, m);
  ASSERT_EQ(capture.phases.size(), 80u);
  for (uint32_t p = 0; p < 80; ++p) {
    const auto& phase = capture.phases[p];
    EXPECT_EQ(phase.execution_count, p >= 7 && p < 41 ? 27u : 1u) << p;
    if (phase.iterations > 1) {
      EXPECT_EQ(phase.iterations, 27u);
      const auto& a = phase.transfers.at(0).source_addresses;
      for (size_t i = 1; i < a.size(); ++i) EXPECT_EQ(a[i] - a[i - 1], a[1] - a[0]);
    }
  }
  EXPECT_EQ(capture.phases[9].label, "layer.attn.qkv.chunk0");
  EXPECT_EQ(capture.phases[9].iterations, 27u);
}

TEST(Synth, SameSeedSameBytesOtherSeedOtherBytes) {
  const std::string dir = testing::temp_dir("synth_determinism");
  SynthOptions options;
  options.family = SynthFamily::Transformer;
  options.seed = 11;
  options.phases = 10;
  const auto m = machine(48);
  arch::write_capture_capnp(synthesize_capture(options, m), dir + "/a.cap");
  arch::write_capture_capnp(synthesize_capture(options, m), dir + "/b.cap");
  options.seed = 12;
  arch::write_capture_capnp(synthesize_capture(options, m), dir + "/c.cap");
  EXPECT_EQ(testing::read_file(dir + "/a.cap"), testing::read_file(dir + "/b.cap"));
  EXPECT_NE(testing::read_file(dir + "/a.cap"), testing::read_file(dir + "/c.cap"));
}

TEST(Synth, RejectsBadOptions) {
  SynthOptions options;
  options.tiles = 17;
  EXPECT_THROW(synthesize_capture(options, machine(16)), InputError);
  options.tiles = 1;
  EXPECT_THROW(synthesize_capture(options, machine(16)), InputError);
  EXPECT_THROW(parse_synth_family("ring"), InputError);
}

}  // namespace
}  // namespace lockstep::workload
