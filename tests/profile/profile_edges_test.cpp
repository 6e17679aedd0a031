// What the profile reader refuses beyond a malformed message (issue 26): a sample whose end
// comes before its start (its 32-bit difference read as a wrap would be over 2^31 cycles), two
// tiles with one physical id, and a packed message, named as such. A stack profile's counter
// that wraps between a sample's start and end still reads (docs/profiles.md "Cycles").
#include <capnp/message.h>
#include <capnp/serialize-packed.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>
#include <kj/io.h>

#include <cstring>
#include <functional>
#include <string>

#include "io/errors.hpp"
#include "profile/profile.capnp.h"
#include "profile/profile.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

std::string write_bytes(const std::string& name, const std::string& bytes) {
  const std::string path = testing::temp_dir("profile_edges") + "/" + name;
  testing::write_file(path, bytes);
  return path;
}

std::string message_bytes(capnp::MessageBuilder& message, bool packed = false) {
  kj::VectorOutputStream out;
  if (packed) {
    capnp::writePackedMessage(out, message);
  } else {
    capnp::writeMessage(out, message);
  }
  return std::string(reinterpret_cast<const char*>(out.getArray().begin()), out.getArray().size());
}

// A profile of one sample per tile, (start, end) as on disk; Lockstep's (lockstepVersion 1,
// absolute starts) or the stack's (0, a free-running counter).
std::string profile_bytes(bool lockstep, const std::vector<uint32_t>& physical, uint32_t start, uint32_t end) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<profile_schema::Profile>();
  root.setSchemaVersion(5);
  root.setLockstepVersion(lockstep ? 1 : 0);
  root.setClockHz(1'000'000'000);
  auto tiles = root.initTiles(static_cast<unsigned>(physical.size()));
  for (unsigned t = 0; t < physical.size(); ++t) {
    tiles[t].setPhysicalTile(physical[t]);
    auto samples = tiles[t].initSamples(1);
    samples[0].setStartCycle(start);
    samples[0].setEndCycle(end);
    samples[0].initStep().setKernel("gemm");
  }
  return message_bytes(message);
}

std::string refusal(const std::string& path) {
  try {
    read_profile(path);
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  ADD_FAILURE() << path << " was read";
  return "";
}

TEST(ProfileEdges, ALockstepSampleThatEndsBeforeItStartsIsRefused) {
  const std::string path = write_bytes("backwards.lsprof", profile_bytes(true, {3}, 100, 34));
  EXPECT_EQ(refusal(path), path +
                               ": tile 3 sample 0: endCycle 34 is before startCycle 100 (read as "
                               "a wrap of the 32-bit counter it would last 4294967230 cycles, "
                               "over 2^31)");
}

TEST(ProfileEdges, AStackSampleThatEndsBeforeItStartsIsRefused) {
  const std::string path = write_bytes("backwards.profile", profile_bytes(false, {3}, 1000, 900));
  EXPECT_NE(refusal(path).find("tile 3 sample 0: endCycle 900 is before startCycle 1000"), std::string::npos);
}

TEST(ProfileEdges, AStackSampleAcrossTheCounterWrapReads) {
  const Profile p = read_profile(write_bytes("wrap.profile", profile_bytes(false, {3}, 0xfffffff0u, 0x10u)));
  ASSERT_EQ(p.tiles.size(), 1u);
  EXPECT_EQ(p.tiles[0].samples[0].end_cycle - p.tiles[0].samples[0].start_cycle, 32u);
}

TEST(ProfileEdges, SamplesUpTo2To31MinusOneCyclesReadAndLongerOnesAreRefused) {
  const Profile p = read_profile(write_bytes("longest.lsprof", profile_bytes(true, {0}, 5, 4 + (1u << 31))));
  EXPECT_EQ(p.tiles[0].samples[0].end_cycle, 4u + (1u << 31));
  EXPECT_NE(
      refusal(write_bytes("long.lsprof", profile_bytes(true, {0}, 5, 5 + (1u << 31)))).find("is before startCycle 5"),
      std::string::npos);
}

TEST(ProfileEdges, TheWriterRefusesASampleTheReaderWouldRefuse) {
  Profile p;
  p.clock_hz = 1000;
  p.steps.resize(1);
  p.tiles = {{0, 0, {{0, uint64_t{1} << 31, 0, 0, 0}}}};
  const std::string path = testing::temp_dir("profile_edges") + "/long-written.lsprof";
  try {
    write_profile(p, path);
    ADD_FAILURE() << "written";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tile 0 sample 0: lasts 2^31 cycles or more"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(ProfileEdges, TwoTilesWithOnePhysicalIdAreRefused) {
  for (const bool lockstep : {true, false}) {
    const std::string path = write_bytes("twice.lsprof", profile_bytes(lockstep, {4, 7, 4}, 10, 20));
    EXPECT_EQ(refusal(path), path + ": tiles[2]: physicalTile 4 appears twice (also tiles[0])");
  }
}

// The profile as `write_profile` writes it, repacked with capnp's packed encoding.
std::string packed(const Profile& profile, ProfileLayout layout) {
  const std::string path = testing::temp_dir("profile_edges") + "/unpacked.lsprof";
  write_profile(profile, path, layout);
  const std::string bytes = testing::read_file(path);
  kj::Array<capnp::word> words = kj::heapArray<capnp::word>(bytes.size() / 8);
  std::memcpy(words.begin(), bytes.data(), bytes.size());
  capnp::FlatArrayMessageReader reader(words);
  capnp::MallocMessageBuilder copy;
  copy.setRoot(reader.getRoot<profile_schema::Profile>());
  return message_bytes(copy, true);
}

TEST(ProfileEdges, APackedMessageIsNamedAsSuch) {
  Profile p;
  p.clock_hz = 1'500'000'000;
  p.lockstep_version = 1;
  p.producer = "test";
  ProfileStep step;
  step.kernel = "fill";
  p.steps = {step};
  p.tiles = {{0, 0, {{0, 100, 0, 0, 0}}}, {2, 1, {{7, 500, 0, 4, 0}}}};
  for (const ProfileLayout layout : {ProfileLayout::Compact, ProfileLayout::Inline}) {
    const std::string path = write_bytes("packed.lsprof", packed(p, layout));
    EXPECT_EQ(refusal(path), path +
                                 ": is a packed Cap'n Proto message; Lockstep reads the unpacked "
                                 "form (capnp convert packed:binary profile/profile.capnp Profile)");
  }
  // A stack profile packed: the same.
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<profile_schema::Profile>();
  root.setSchemaVersion(5);
  root.setClockHz(1000);
  const std::string path = write_bytes("stack-packed.profile", message_bytes(message, true));
  EXPECT_NE(refusal(path).find("is a packed Cap'n Proto message"), std::string::npos);
}

TEST(ProfileEdges, UnpackedAndForeignFilesAreNotTakenForPacked) {
  const std::string text = write_bytes("text", "phases:\n  - {id: 1}\n");
  EXPECT_NE(refusal(text).find("is a text file, not a profile"), std::string::npos);
  // Binary noise without a NUL in its head is no text file: it is named as not a profile.
  const std::string noise = write_bytes("noise.bin", std::string("\x01\x9f\x03\x7f\xff\x02\x05\x06\x07\x08", 10));
  EXPECT_NE(refusal(noise).find("noise.bin: is not a profile (a binary Cap'n Proto message starts"), std::string::npos);
  const std::string whole = profile_bytes(true, {0}, 0, 10);
  const std::string cut = write_bytes("cut.lsprof", whole.substr(0, whole.size() - 8));
  EXPECT_NE(refusal(cut).find("truncated profile"), std::string::npos);
  EXPECT_NO_THROW(read_profile(write_bytes("whole.lsprof", whole)));
}

}  // namespace
}  // namespace lockstep::arch
