// The two checksum kernels on a tile's SRAM: `checksum` writes FNV-1a 64 and `checksum_xxh3`
// XXH3 64 (libxxhash) of a span, 8 bytes little-endian, held to published values (FNV-1a's
// reference vectors, XXH3's digest of nothing) and to the library's one-shot digest; the
// streaming helper the compiler's proof uses gives the same digest in any cut.
#include <gtest/gtest.h>
#include <xxhash.h>  // the portable XXH3, without the x86 dispatch

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "model/kernel_registry.hpp"
#include "model/sram.hpp"
#include "support/test_support.hpp"

namespace lockstep::model {
namespace {

constexpr uint32_t kSource = 0x60000, kSlot = 0x70000;

const arch::MachineDescription& c600() { return testing::c600_machine(); }

uint64_t run_checksum(const std::string& name, Sram& memory, uint32_t bytes) {
  find_kernel(name)->execute({kSource, kSlot}, {int64_t{bytes}}, memory);
  uint8_t slot[8];
  memory.read(kSlot, 8, slot);
  uint64_t digest = 0;
  for (int i = 0; i < 8; ++i) digest |= uint64_t(slot[i]) << (8 * i);
  return digest;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (auto& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

TEST(ChecksumKernels, PublishedDigests) {
  Sram memory(c600());
  EXPECT_EQ(run_checksum("checksum_xxh3", memory, 0), 0x2d06800538d394c2ull);  // XXH3 64 of nothing
  EXPECT_EQ(run_checksum("checksum", memory, 0), 0xcbf29ce484222325ull);       // the FNV offset
  const uint8_t a = 'a';
  memory.write(kSource, 1, &a);
  EXPECT_EQ(run_checksum("checksum", memory, 1), 0xaf63dc4c8601ec8cull);  // FNV-1a 64 of "a"
  EXPECT_EQ(arch::xxh3_64(nullptr, 0), 0x2d06800538d394c2ull);
}

// arch::xxh3_64 takes libxxhash's run-time dispatch (AVX-512 or AVX2 where the CPU has it);
// the digest must be the portable entry point's at every length class.
TEST(ChecksumKernels, DispatchedDigestIsThePortableOne) {
  const std::vector<uint8_t> bytes = random_bytes(1 << 20, 11);
  for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{16}, size_t{17}, size_t{128}, size_t{129}, size_t{240},
                   size_t{241}, size_t{1023}, size_t{1024}, size_t{4097}, size_t{65536}, bytes.size()}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(arch::xxh3_64(bytes.data(), n), XXH3_64bits(bytes.data(), n));
  }
}

TEST(ChecksumKernels, DigestTheSpanAsTheLibraryDoes) {
  Sram memory(c600());
  const std::vector<uint8_t> bytes = random_bytes(40000, 7);  // spans three 16 KiB chunks
  memory.write(kSource, static_cast<uint32_t>(bytes.size()), bytes.data());
  for (uint32_t n : {1u, 4u, 240u, 4096u, 40000u}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(run_checksum("checksum_xxh3", memory, n), arch::xxh3_64(bytes.data(), n));
    EXPECT_EQ(run_checksum("checksum", memory, n), arch::fnv1a64(bytes.data(), n));
  }
  // Untouched SRAM reads as zeros.
  Sram empty(c600());
  const std::vector<uint8_t> zeros(10000, 0);
  EXPECT_EQ(run_checksum("checksum_xxh3", empty, 10000), arch::xxh3_64(zeros.data(), zeros.size()));
}

TEST(ChecksumKernels, SameCyclesEitherDigest) {
  for (int64_t n : {0, 8, 4096, 65536}) {
    EXPECT_EQ(find_kernel("checksum_xxh3")->cycles({n}, c600()), find_kernel("checksum")->cycles({n}, c600()));
  }
  EXPECT_EQ(find_kernel("checksum_xxh3")->cycles({4096}, c600()),
            c600().supervisor_cycles_per_instruction * (6 + 2 * 4096));
}

TEST(Xxh3Stream, AnyCutGivesTheOneShotDigest) {
  const std::vector<uint8_t> bytes = random_bytes(100000, 11);
  for (size_t cut : {size_t{1}, size_t{63}, size_t{240}, size_t{4096}, size_t{99999}}) {
    SCOPED_TRACE(cut);
    arch::Xxh3Stream stream;
    for (size_t at = 0; at < bytes.size(); at += cut)
      stream.update(bytes.data() + at, std::min(cut, bytes.size() - at));
    EXPECT_EQ(stream.digest(), arch::xxh3_64(bytes.data(), bytes.size()));
  }
  arch::Xxh3Stream zeros;
  zeros.update(bytes.data(), 5);
  zeros.update_zeros(10000);  // crosses the helper's 4 KiB block of zeros
  std::vector<uint8_t> expected(bytes.begin(), bytes.begin() + 5);
  expected.resize(10005, 0);
  EXPECT_EQ(zeros.digest(), arch::xxh3_64(expected.data(), expected.size()));
}

}  // namespace
}  // namespace lockstep::model
