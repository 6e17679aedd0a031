// Payload tokens: unique per word within an iteration, different between iterations, and
// the batch form equal to the word-by-word one.
#include "formats/token.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace lockstep::arch {
namespace {

TEST(PayloadToken, BatchEqualsWordByWordAcrossTheAddressWrap) {
  std::vector<uint32_t> batch(43);   // five blocks of eight and a tail of three
  const uint32_t address = 0xffff0;  // word 0x3fffc: the 18-bit word field wraps inside the batch
  payload_tokens(7, 1200, address, 5, batch);
  for (uint32_t k = 0; k < batch.size(); ++k) {
    EXPECT_EQ(batch[k], payload_token(7, 1200, address + 4 * k, 5)) << k;
  }
}

TEST(PayloadToken, UniqueWithinAnIterationAndNeverEqualToThePreviousOne) {
  std::set<uint32_t> seen;
  for (uint32_t tile = 0; tile < 8; ++tile) {
    for (uint32_t a = 0x4c000; a < 0x4c400; a += 4) {
      EXPECT_TRUE(seen.insert(payload_token(3, tile, a, 2)).second);
      // Words of one tile in consecutive iterations, at any two addresses.
      EXPECT_NE(payload_token(3, tile, a, 2), payload_token(3, tile, 0x4c000, 1));
      EXPECT_NE(payload_token(3, tile, a, 2), payload_token(3, tile, 0x4c3fc, 1));
    }
  }
  EXPECT_EQ(payload_token(3, 4, 0x4c000, 0), payload_token(3, 4, 0x4c000));
}

}  // namespace
}  // namespace lockstep::arch
