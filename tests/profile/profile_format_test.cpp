// The profile file: Lockstep's own round-trips exactly; a profile the stack wrote (no
// Lockstep fields, a free-running 32-bit counter) reads with its cycles unwrapped; a
// truncated, foreign or newer file is refused with one line naming it.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>
#include <kj/io.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "io/errors.hpp"
#include "profile/profile.capnp.h"
#include "profile/profile.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

Profile small_profile() {
  Profile p;
  p.clock_hz = 1'500'000'000;
  p.producer = "test";
  p.source = "p.lkspkg";
  p.machine_name = "ipu21-c600-t16";
  p.total_cycles = (uint64_t{1} << 32) + 500;
  ProfileStep exchange;
  exchange.kind = ProfileStepKind::Exchange;
  exchange.kernel = "exchange";
  exchange.phase = kExchangePhaseBit | 3;
  exchange.local_index = 1;
  exchange.activities = {{ActivityKind::Send, 10, 20}, {ActivityKind::PartnerBusy, 5, 40}};
  exchange.event_cycles = 40;
  exchange.phase_label = "layer.qkv";
  exchange.operation = "gemm";
  ProfileStep kernel;
  kernel.kind = ProfileStepKind::Compute;
  kernel.kernel = "fill";
  kernel.metadata = {{"reason", "Kernel"}, {"invocations", "3"}};
  p.steps = {exchange, kernel};
  // Steps in order of first use, as the reader builds its table.
  p.tiles = {{0, 0, {{0, 100, 0, 2, 1}, {100, 160, 1, 0, 0}}},
             {2, 1, {{(uint64_t{1} << 32) + 7, (uint64_t{1} << 32) + 500, 1, 4, 0}}}};
  return p;
}

std::string write_bytes(const std::string& name, const std::string& bytes) {
  const std::string path = testing::temp_dir("profile_format") + "/" + name;
  testing::write_file(path, bytes);
  return path;
}

std::string expect_refused(const std::string& path) {
  try {
    read_profile(path);
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(what.rfind(path, 0), 0u) << what;
    return what;
  }
  ADD_FAILURE() << path << " was read";
  return "";
}

TEST(ProfileFormat, RoundTripsExactlyWithCyclesAbove32Bits) {
  const Profile p = small_profile();
  const std::string path = testing::temp_dir("profile_format") + "/p.lsprof";
  write_profile(p, path);
  const Profile q = read_profile(path);
  EXPECT_EQ(q, p);
  // The same bytes when written again.
  const std::string again = path + ".2";
  write_profile(q, again);
  EXPECT_EQ(testing::read_file(path), testing::read_file(again));
  // The stack's layout (every sample with its step inline) reads back the same.
  const std::string stack = path + ".stack";
  write_profile(p, stack, ProfileLayout::Inline);
  EXPECT_EQ(read_profile(stack), p);
  EXPECT_GT(testing::read_file(stack).size(), testing::read_file(path).size());
}

TEST(ProfileFormat, RefusesAStepIndexBeyondTheTable) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<profile_schema::Profile>();
  root.setSchemaVersion(5);
  root.setLockstepVersion(1);
  root.setClockHz(1000);
  root.initSteps(1);
  auto samples = root.initTiles(1)[0].initSamples(1);
  samples[0].setStepIndex(2);
  kj::VectorOutputStream out;
  capnp::writeMessage(out, message);
  const std::string path = testing::temp_dir("profile_format") + "/index.lsprof";
  testing::write_file(path, std::string(reinterpret_cast<const char*>(out.getArray().begin()), out.getArray().size()));
  try {
    read_profile(path);
    ADD_FAILURE() << "read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tile 0 sample 0: stepIndex: 2 is beyond the 1 steps"), std::string::npos)
        << e.what();
  }
}

TEST(ProfileFormat, StepTableSharesEqualSteps) {
  std::vector<ProfileStep> steps;
  ProfileStepTable table(steps);
  ProfileStep a;
  a.kernel = "fill";
  ProfileStep b = a;
  b.kernel = "copy";
  EXPECT_EQ(table.add(a), 0u);
  EXPECT_EQ(table.add(b), 1u);
  EXPECT_EQ(table.add(a), 0u);
  EXPECT_EQ(steps.size(), 2u);
}

// A profile as the stack writes it: schema version 5, no Lockstep fields, and a cycle
// counter that wraps between the first tile's first sample and a later one.
std::string stack_profile_bytes() {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<profile_schema::Profile>();
  root.setSchemaVersion(5);
  root.setClockHz(1'850'000'000);
  auto tiles = root.initTiles(2);
  tiles[0].setPhysicalTile(4);
  auto s0 = tiles[0].initSamples(2);
  s0[0].setStartCycle(0xfffffff0u);
  s0[0].setEndCycle(0x00000010u);  // wraps: 32 cycles
  s0[0].initStep().setKernel("gemm");
  s0[1].setStartCycle(0x00000010u);
  s0[1].setEndCycle(0x00000030u);
  auto step = s0[1].initStep();
  step.setKind(profile_schema::StepKind::EXCHANGE);
  step.setPhase(kExchangePhaseBit | 2);
  step.setExchangeEventCycles(20);
  auto activities = step.initExchangeActivities(1);
  activities[0].setKind(profile_schema::ExchangeActivityKind::RECEIVE);
  activities[0].setStartCycle(3);
  activities[0].setEndCycle(9);
  tiles[1].setPhysicalTile(6);
  auto s1 = tiles[1].initSamples(1);
  s1[0].setStartCycle(0xffffffe0u);  // enters 16 cycles before tile 4
  s1[0].setEndCycle(0x00000030u);
  s1[0].initStep().setKind(profile_schema::StepKind::SYNCHRONIZATION);
  kj::VectorOutputStream out;
  capnp::writeMessage(out, message);
  return std::string(reinterpret_cast<const char*>(out.getArray().begin()), out.getArray().size());
}

TEST(ProfileFormat, ReadsAStackProfileWithItsCounterUnwrapped) {
  const Profile p = read_profile(write_bytes("stack.profile", stack_profile_bytes()));
  EXPECT_EQ(p.lockstep_version, 0u);
  EXPECT_EQ(p.clock_hz, 1'850'000'000u);
  ASSERT_EQ(p.tiles.size(), 2u);
  // Offsets from the first tile's first sample: -16 for tile 6, so everything moves up 16.
  EXPECT_EQ(p.tiles[1].samples[0].start_cycle, 0u);
  EXPECT_EQ(p.tiles[0].samples[0].start_cycle, 16u);
  EXPECT_EQ(p.tiles[0].samples[0].end_cycle, 48u);
  EXPECT_EQ(p.tiles[0].samples[1].start_cycle, 48u);
  EXPECT_EQ(p.tiles[0].samples[1].end_cycle, 80u);
  EXPECT_EQ(p.tiles[1].samples[0].end_cycle, 80u);
  EXPECT_EQ(p.total_cycles, 80u);
  const ProfileStep& exchange = p.steps[p.tiles[0].samples[1].step];
  EXPECT_EQ(exchange.kind, ProfileStepKind::Exchange);
  EXPECT_EQ(exchange.phase, kExchangePhaseBit | 2);
  ASSERT_EQ(exchange.activities.size(), 1u);
  EXPECT_EQ(exchange.activities[0], (ExchangeActivity{ActivityKind::Receive, 3, 9}));
}

TEST(ProfileFormat, RefusesTruncatedForeignAndNewerFiles) {
  const std::string good = testing::temp_dir("profile_format") + "/good.lsprof";
  write_profile(small_profile(), good);
  const std::string bytes = testing::read_file(good);
  EXPECT_NE(expect_refused(write_bytes("empty", "")).find("profile"), std::string::npos);
  EXPECT_NE(expect_refused(write_bytes("half", bytes.substr(0, bytes.size() / 2))).find("truncated"),
            std::string::npos);
  EXPECT_NE(expect_refused(write_bytes("pkg", "LKSPKG01" + std::string(64, '\0'))).find("is a Lockstep package"),
            std::string::npos);
  EXPECT_NE(expect_refused(write_bytes("text", "phases:\n  - {id: 1}\n")).find("is a text file, not a profile"),
            std::string::npos);
  Profile newer = small_profile();
  newer.lockstep_version = kProfileLockstepVersion + 1;
  const std::string newer_path = testing::temp_dir("profile_format") + "/newer.lsprof";
  write_profile(newer, newer_path);
  EXPECT_NE(expect_refused(newer_path).find("lockstepVersion"), std::string::npos);
  Profile unknown = small_profile();
  unknown.schema_version = 6;
  const std::string unknown_path = testing::temp_dir("profile_format") + "/unknown.lsprof";
  write_profile(unknown, unknown_path,
                ProfileLayout::Inline);  // the compact layout writes its own version
  EXPECT_NE(expect_refused(unknown_path).find("schemaVersion: 6"), std::string::npos);
  Profile no_clock = small_profile();
  no_clock.clock_hz = 0;
  const std::string no_clock_path = testing::temp_dir("profile_format") + "/noclock.lsprof";
  write_profile(no_clock, no_clock_path);
  EXPECT_NE(expect_refused(no_clock_path).find("clockHz"), std::string::npos);
}

// The stack's readers take schemaVersion 1..5 (IPU21-DEVICE.md 15.3): the compact layout, whose
// samples they cannot read, carries a version outside it so they refuse it; the inline layout
// they read carries 5. Both read back here to the same profile.
TEST(ProfileFormat, OnlyTheInlineLayoutCarriesAVersionTheStackReads) {
  const std::string dir = testing::temp_dir("profile_format");
  const auto version = [](const std::string& path) {
    capnp::ReaderOptions options;
    const std::string bytes = testing::read_file(path);
    kj::Array<capnp::word> words = kj::heapArray<capnp::word>(bytes.size() / 8);
    std::memcpy(words.begin(), bytes.data(), bytes.size());
    capnp::FlatArrayMessageReader reader(words, options);
    return reader.getRoot<profile_schema::Profile>().getSchemaVersion();
  };
  write_profile(small_profile(), dir + "/compact.lsprof");
  write_profile(small_profile(), dir + "/inline.lsprof", ProfileLayout::Inline);
  EXPECT_EQ(version(dir + "/compact.lsprof"), 0x4c530005u);
  EXPECT_EQ(version(dir + "/inline.lsprof"), 5u);
  EXPECT_EQ(read_profile(dir + "/compact.lsprof").steps, read_profile(dir + "/inline.lsprof").steps);
  EXPECT_EQ(read_profile(dir + "/compact.lsprof").schema_version, 5u);
}

// The compact writer sizes its first segment from the profile (profile_capnp.cpp): too small
// a guess would split the message in two segments, and the bytes would differ from the
// larger fixed segment's. Texts of every length around a word, lists of every short length.
TEST(ProfileFormat, TheCompactMessageFitsItsFirstSegment) {
  std::mt19937 random(25);
  const auto text = [&](int most) { return std::string(random() % (most + 1), 'x'); };
  for (int round = 0; round < 20; ++round) {
    Profile p = small_profile();
    p.producer = text(40);
    p.source = text(40);
    p.machine_name = text(40);
    p.steps.clear();
    for (int s = 0, n = 1 + static_cast<int>(random() % 300); s < n; ++s) {
      ProfileStep step;
      step.local_index = static_cast<uint32_t>(s);
      step.kernel = text(20);
      step.operation = text(20);
      step.phase_label = text(20);
      for (int m = 0, k = static_cast<int>(random() % 6); m < k; ++m) step.metadata.push_back({text(17), text(17)});
      for (int a = 0, k = static_cast<int>(random() % 5); a < k; ++a)
        step.activities.push_back({ActivityKind::Send, 1, 2});
      p.steps.push_back(std::move(step));
    }
    p.tiles.clear();
    for (uint32_t t = 0, n = random() % 40; t < n; ++t) {
      TileProfile tile{t, t, {}};
      for (uint64_t k = 0, m = random() % 400; k < m; ++k) {
        tile.samples.push_back({10 * k, 10 * k + 5, static_cast<uint32_t>(random() % p.steps.size()), 0, 0});
      }
      p.tiles.push_back(std::move(tile));
    }
    const std::string path = testing::temp_dir("profile_format") + "/segments.lsprof";
    write_profile(p, path);
    const std::string bytes = testing::read_file(path);
    ASSERT_GE(bytes.size(), 8u);
    uint32_t segments_less_one = 0;
    std::memcpy(&segments_less_one, bytes.data(), 4);
    EXPECT_EQ(segments_less_one, 0u) << "round " << round;
    EXPECT_EQ(read_profile(path).tiles.size(), p.tiles.size()) << "round " << round;
  }
}

TEST(ProfileFormat, EveryTruncationIsRefusedNotCrashed) {
  const std::string good = testing::temp_dir("profile_format") + "/cut.lsprof";
  write_profile(small_profile(), good);
  const std::string bytes = testing::read_file(good);
  for (size_t n = 0; n < bytes.size(); n += 8) {
    const std::string path = write_bytes("cut" + std::to_string(n), bytes.substr(0, n));
    EXPECT_THROW(read_profile(path), InputError) << n << " bytes";
    std::filesystem::remove(path);
  }
}

}  // namespace
}  // namespace lockstep::arch
