#include <gtest/gtest.h>

#include "compiler/shared_rows.hpp"

namespace lockstep::compiler {
namespace {

TileRow row_with_send(uint32_t tile, uint32_t send_word, std::vector<uint32_t> iteration_values = {}) {
  TileRow row;
  row.tile = tile;
  row.words = {0x40a00010u, send_word, 0x43a00000u};
  if (iteration_values.empty()) iteration_values = {send_word};
  row.address_fields.push_back(AddressField{1, AddressField::Kind::SendAddress, iteration_values});
  return row;
}

TEST(SharingRows, RowsEqualApartFromAddressFieldsAreStoredOnce) {
  const TileRow a = row_with_send(3, 0x78000008u);
  const TileRow b = row_with_send(3, 0x78000010u);
  const TileTable table = build_tile_table(3, {&a, nullptr, &b}, true);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.row_of_phase, (std::vector<int32_t>{0, -1, 0}));
  EXPECT_EQ(table.rows[0].uses, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(table.rows[0].patched_words, (std::vector<uint32_t>{1}));
  EXPECT_EQ(table.bytes, 16u);           // 12 bytes, 8-aligned
  EXPECT_EQ(table.unshared_bytes, 32u);  // two copies
  EXPECT_EQ(table.rows[0].words, a.words);
}

TEST(SharingRows, IdenticalAddressValuesNeedNoPatch) {
  const TileRow a = row_with_send(0, 0x78000008u);
  const TileRow b = row_with_send(0, 0x78000008u);
  const TileTable table = build_tile_table(0, {&a, &b}, true);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_TRUE(table.rows[0].patched_words.empty());
}

TEST(SharingRows, RowsThatDifferOutsideAddressFieldsAreNotShared) {
  TileRow a = row_with_send(0, 0x78000008u);
  TileRow b = row_with_send(0, 0x78000008u);
  b.words[0] = 0x40a00011u;  // a different delay
  const TileTable table = build_tile_table(0, {&a, &b}, true);
  EXPECT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[1].offset, 16u);
  EXPECT_EQ(table.bytes, 32u);
}

TEST(SharingRows, FieldPositionsArePartOfTheKey) {
  // Same words, but one row marks word 1 as an address field and the other does not: the
  // second use could otherwise run with the first use's patched value.
  TileRow a = row_with_send(0, 0);
  TileRow b = a;
  b.address_fields.clear();
  const TileTable table = build_tile_table(0, {&a, &b}, true);
  EXPECT_EQ(table.rows.size(), 2u);
}

TEST(SharingRows, IteratedFieldIsPatchedEvenWithoutSharing) {
  const TileRow a = row_with_send(0, 0x78000008u, {0x78000008u, 0x78000010u});
  const TileTable table = build_tile_table(0, {&a}, true);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0].patched_words, (std::vector<uint32_t>{1}));
  EXPECT_TRUE(varies_per_iteration(a.address_fields[0]));
}

TEST(SharingRows, WithoutSharingEveryUseHasItsOwnCopy) {
  const TileRow a = row_with_send(0, 0x78000008u);
  const TileRow b = row_with_send(0, 0x78000010u);
  const TileTable table = build_tile_table(0, {&a, &b}, false);
  EXPECT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.bytes, table.unshared_bytes);
  EXPECT_TRUE(table.rows[0].patched_words.empty());
  EXPECT_TRUE(table.rows[1].patched_words.empty());
}

}  // namespace
}  // namespace lockstep::compiler
