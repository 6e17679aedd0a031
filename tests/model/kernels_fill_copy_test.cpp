// fill and copy write SRAM in place (no buffer between): held here against word-by-word
// loops, for each way fill writes (zero through Sram::zero, other values a word at a time at any
// alignment) and for copy's overlapping spans, which must behave like memmove.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/model/kernel_harness.hpp"

namespace lockstep::model {
namespace {

namespace kh = kernel_harness;

std::vector<uint8_t> bytes_at(const Sram& memory, uint32_t address, uint32_t bytes) {
  std::vector<uint8_t> out(bytes);
  memory.read(address, bytes, out.data());
  return out;
}

// A recognisable pattern around the span, so a write past either end shows.
void paint(Sram& memory, uint32_t address, uint32_t bytes) {
  std::vector<uint8_t> pattern(bytes);
  for (uint32_t i = 0; i < bytes; ++i) pattern[i] = uint8_t(i * 7 + 3);
  memory.write(address, bytes, pattern.data());
}

struct FillCase {
  uint32_t address;
  uint32_t bytes;
  uint32_t value;
};

class FillKernel : public ::testing::TestWithParam<FillCase> {};

TEST_P(FillKernel, EveryWordOfTheSpanBecomesTheValueAndNothingElseChanges) {
  const FillCase c = GetParam();
  Sram memory(kh::machine());
  const uint32_t around = c.address - 16, span = c.bytes + 32;
  paint(memory, around, span);
  std::vector<uint8_t> expected = bytes_at(memory, around, span);
  for (uint32_t at = 0; at < c.bytes; at += 4) std::memcpy(expected.data() + 16 + at, &c.value, 4);
  kh::run("fill", {c.address}, {c.bytes, c.value}, memory);
  EXPECT_EQ(bytes_at(memory, around, span), expected);
}

INSTANTIATE_TEST_SUITE_P(Ways, FillKernel,
                         ::testing::Values(FillCase{kh::kBase + 0x1000, 4096, 0},  // zero
                                           FillCase{kh::kBase + 0x1000, 4100,
                                                    0x7f7f7f7fu},  // a repeated byte, a word at a time
                                           FillCase{kh::kBase + 0x2004, 400, 0x12345678u},  // aligned words
                                           FillCase{kh::kBase + 0x3002, 64, 0xa1b2c3d4u},   // unaligned
                                           FillCase{kh::kBase + 0x4000, 0, 0x12345678u}));  // nothing

TEST(CopyKernel, OverlappingSpansCopyAsThroughABuffer) {
  for (const int32_t shift : {-12, -1, 0, 1, 12, 4096}) {
    Sram memory(kh::machine());
    const uint32_t source = kh::kBase + 0x8000, bytes = 1000;
    const uint32_t destination = static_cast<uint32_t>(int64_t{source} + shift);
    paint(memory, source - 64, bytes + 4096 + 128);
    const std::vector<uint8_t> from = bytes_at(memory, source, bytes);
    kh::run("copy", {destination, source}, {bytes}, memory);
    EXPECT_EQ(bytes_at(memory, destination, bytes), from) << "shift " << shift;
  }
}

}  // namespace
}  // namespace lockstep::model
