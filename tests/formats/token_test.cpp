// Payload tokens: unique per word within an iteration, different between iterations, and
// the batch form, a run's later tokens and its comparison equal to the word-by-word one.
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

// A run of tokens is its first one (model/token_pages.hpp): the token k words on, and the
// comparison of words with a run, held against the word-by-word definition.
TEST(PayloadToken, ARunFollowsItsFirstTokenAcrossTheAddressWrap) {
  const uint32_t address = 0xffff0, first = payload_token(7, 1200, address, 5);
  std::vector<uint32_t> words(300);  // more than one block of the comparison
  for (uint32_t k = 0; k < words.size(); ++k) {
    words[k] = payload_token(7, 1200, address + 4 * k, 5);
    EXPECT_EQ(token_after(first, k), words[k]) << k;
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(words.data());
  EXPECT_TRUE(holds_tokens_following(bytes, words.size(), first));
  EXPECT_FALSE(holds_tokens_following(bytes, words.size(), payload_token(7, 1200, address, 6)));
  words[299] ^= 1;
  EXPECT_FALSE(holds_tokens_following(bytes, words.size(), first));
  EXPECT_TRUE(holds_tokens_following(bytes, 299, first));
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
