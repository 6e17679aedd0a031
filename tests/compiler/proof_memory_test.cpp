#include "compiler/proof_memory.hpp"

#include <gtest/gtest.h>

#include "compiler/proof_plan.hpp"
#include "formats/token.hpp"

namespace lockstep::compiler {
namespace {

uint32_t word_at(const std::vector<uint8_t>& bytes, size_t index) {
  uint32_t value = 0;
  for (int k = 0; k < 4; ++k) value |= uint32_t{bytes[4 * index + k]} << (8 * k);
  return value;
}

TEST(ProofMemory, TokensCopiesAndCopiesOfCopies) {
  ProofMemory memory(42);
  memory.fill_tokens(1, 0x60000, 64);
  // Tile 1 words 4..11 go to tile 2 at 0x70004, then tile 2 forwards part of them to tile 3.
  memory.write(2, 0x70004, memory.read(1, 0x60010, 32));
  memory.write(3, 0x90000, memory.read(2, 0x70000, 16));
  const std::vector<uint8_t> two = memory.bytes(2, 0x70000, 40);
  EXPECT_EQ(word_at(two, 0), 0u);  // never written
  for (uint32_t k = 0; k < 8; ++k) EXPECT_EQ(word_at(two, 1 + k), arch::payload_token(42, 1, 0x60010 + 4 * k));
  EXPECT_EQ(word_at(two, 9), 0u);
  const std::vector<uint8_t> three = memory.bytes(3, 0x90000, 16);
  EXPECT_EQ(word_at(three, 0), 0u);
  EXPECT_EQ(word_at(three, 1), arch::payload_token(42, 1, 0x60010));
  EXPECT_EQ(word_at(three, 3), arch::payload_token(42, 1, 0x60018));
}

TEST(ProofMemory, OverwritingSplitsRuns) {
  ProofMemory memory(7);
  memory.fill_tokens(0, 0x60000, 64);
  memory.write(0, 0x60008, memory.read(5, 0x70000, 8));  // zeroes two words in the middle
  const std::vector<uint8_t> bytes = memory.bytes(0, 0x60000, 64);
  EXPECT_EQ(word_at(bytes, 1), arch::payload_token(7, 0, 0x60004));
  EXPECT_EQ(word_at(bytes, 2), 0u);
  EXPECT_EQ(word_at(bytes, 3), 0u);
  EXPECT_EQ(word_at(bytes, 4), arch::payload_token(7, 0, 0x60010));
  EXPECT_EQ(word_at(bytes, 15), arch::payload_token(7, 0, 0x6003c));
}

TEST(ProofPlan, MergeSpansJoinsTouchingAndOverlapping) {
  const auto merged = merge_spans({{0x100, 8}, {0x108, 8}, {0x200, 4}, {0x1f0, 0x20}});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].address, 0x100u);
  EXPECT_EQ(merged[0].bytes, 16u);
  EXPECT_EQ(merged[1].address, 0x1f0u);
  EXPECT_EQ(merged[1].bytes, 0x20u);
}

TEST(ProofPlan, ChecksumNeededForIteratedAndOverwrittenPhases) {
  arch::CapturePhase once, twice, last;
  twice.iterations = 2;
  const std::vector<const arch::CapturePhase*> phases{&once, &twice, &last};
  // One tile: phase 0 writes [0x100,0x110), phase 1 elsewhere, phase 2 overwrites 0x10c.
  std::vector<std::vector<std::vector<Span>>> destinations{{{{0x100, 16}}}, {{{0x400, 16}}}, {{{0x10c, 4}}}};
  const auto needed = checksum_needed(phases, destinations);
  EXPECT_TRUE(needed[0][0]);
  EXPECT_TRUE(needed[1][0]);
  EXPECT_FALSE(needed[2][0]);
}

}  // namespace
}  // namespace lockstep::compiler
