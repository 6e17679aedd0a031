// Truncated, corrupt and foreign Cap'n Proto files give one line of bad input, never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <random>

#include "formats/package_io.hpp"
#include "io/errors.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

std::string valid_bytes() {
  return package_to_capnp_bytes(read_package(testing::source_path("tests/data/packages/repeat_patch.yaml")));
}

std::string error_of(const std::string& bytes) {
  try {
    read_package_from_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "f");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(read)";
}

TEST(PackageCapnp, EveryTruncationIsBadInput) {
  const std::string bytes = valid_bytes();
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string e = error_of(bytes.substr(0, n));
    EXPECT_EQ(e.rfind("f", 0), 0u) << n << ": " << e;
    EXPECT_NE(e, "(read)") << n;
  }
  EXPECT_EQ(error_of(bytes), "(read)");
}

TEST(PackageCapnp, TruncationMessages) {
  EXPECT_EQ(error_of("LKSPKG01"), "f: truncated package: the message is 0 bytes, not a positive multiple of 8");
  EXPECT_EQ(error_of(valid_bytes().substr(0, 20)),
            "f: truncated package: the message is 12 bytes, not a positive multiple of 8");
  EXPECT_EQ(error_of("LKSPKG02xxxxxxxx"), "f: unsupported package container (expected magic LKSPKG01)");
}

TEST(PackageCapnp, UnknownVersionIsRejected) {
  Package p = read_package(testing::source_path("tests/data/packages/point_to_point.yaml"));
  p.version = 2;
  EXPECT_EQ(error_of(package_to_capnp_bytes(p)),
            "f: version: package version 2 is not supported (this lockstep reads version 1)");
}

TEST(PackageCapnp, RandomCorruptionNeverCrashes) {
  const std::string bytes = valid_bytes();
  std::mt19937 rng(20261129);
  size_t read = 0, rejected = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string b = bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) b[8 + rng() % (b.size() - 8)] = static_cast<char>(rng());
    (error_of(b) == "(read)" ? read : rejected)++;
  }
  EXPECT_GT(rejected, 0u);
  EXPECT_EQ(read + rejected, 2000u);
}

// Segments' bytes from memory are copied on every core once the whole package is read: each lands in its
// own tile's segment, in order, whatever its size (none, odd, many pages).
TEST(PackageCapnp, EverySegmentGetsItsOwnBytesBackFromManyTiles) {
  Package package = read_package(testing::source_path("tests/data/packages/repeat_patch.yaml"));
  const TileProgram first = package.tiles.front();
  package.tiles.clear();
  std::mt19937 rng(7);
  for (uint32_t t = 0; t < 64; ++t) {
    TileProgram tile = first;
    tile.tile = t;
    tile.segments.clear();
    for (const uint32_t size : {0u, 3u + t, 4096u * (t % 5) + 17u}) {
      Segment segment;
      segment.address = 0x50000 + 0x10000 * static_cast<uint32_t>(tile.segments.size());
      segment.size = size;
      segment.fill = FillKind::Bytes;
      for (uint32_t k = 0; k < size; ++k) segment.bytes.push_back(static_cast<uint8_t>(rng()));
      tile.segments.push_back(segment);
    }
    Segment zero;
    zero.address = 0x90000;
    zero.size = 64;
    zero.fill = FillKind::Zero;
    tile.segments.insert(tile.segments.begin() + 1, zero);
    package.tiles.push_back(tile);
  }
  const std::string bytes = package_to_capnp_bytes(package);
  const Package read = read_package_from_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "f");
  ASSERT_EQ(read.tiles.size(), package.tiles.size());
  for (size_t t = 0; t < package.tiles.size(); ++t) EXPECT_EQ(read.tiles[t].segments, package.tiles[t].segments) << t;
}

// A package read from a file views the file's pages for its Bytes segments, and keeps the
// mapping alive as long as any segment does: past the package, and past the file's name.
// A change to a view copies it first, and leaves every other view as it was.
TEST(PackageCapnp, SegmentsReadFromAFileViewItAndOutliveItsName) {
  Package package = read_package(testing::source_path("tests/data/packages/repeat_patch.yaml"));
  Segment written;
  written.address = 0x50000;
  written.size = 8192;
  written.fill = FillKind::Bytes;
  std::mt19937 rng(11);
  for (uint32_t k = 0; k < written.size; ++k) written.bytes.push_back(static_cast<uint8_t>(rng()));
  package.tiles.front().segments.push_back(written);
  const std::string dir = testing::temp_dir("package-capnp-views");
  write_package(package, dir + "/p.lkspkg");

  std::optional<Segment> kept;
  {
    const Package read = read_package(dir + "/p.lkspkg");
    kept = read.tiles.front().segments.back();
  }
  std::filesystem::remove(dir + "/p.lkspkg");
  ASSERT_TRUE(kept->bytes.is_view());
  EXPECT_EQ(*kept, written);

  Segment changed = *kept;
  changed.bytes[5] ^= 0xff;
  EXPECT_FALSE(changed.bytes.is_view());
  EXPECT_TRUE(kept->bytes.is_view());
  EXPECT_EQ(*kept, written);
  EXPECT_NE(changed, written);
  changed.bytes[5] ^= 0xff;
  EXPECT_EQ(changed, written);

  // Bytes in memory, whose lifetime the reader cannot know, are copied.
  const std::string bytes = package_to_capnp_bytes(package);
  const Package copied = read_package_from_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "f");
  EXPECT_FALSE(copied.tiles.front().segments.back().bytes.is_view());
  EXPECT_EQ(copied.tiles.front().segments.back(), written);
}

TEST(PackageCapnp, GarbageAndEmptyFilesAreBadInput) {
  const std::string dir = testing::temp_dir("package-capnp-garbage");
  testing::write_file(dir + "/empty", "");
  testing::write_file(dir + "/nul", std::string("\0\1\2\3", 4));
  EXPECT_THROW(read_package(dir + "/empty"), InputError);
  EXPECT_THROW(read_package(dir + "/nul"), InputError);
  EXPECT_THROW(read_package(dir + "/missing"), InputError);
}

}  // namespace
}  // namespace lockstep::arch
