#include "compiler/patch_lists.hpp"

#include <gtest/gtest.h>

#include "arch/machine.hpp"
#include "io/errors.hpp"

namespace lockstep::compiler {
namespace {

TileRow two_send_row(std::vector<uint32_t> first, std::vector<uint32_t> second) {
  TileRow row;
  row.tile = 1;
  row.words = {0x40a00010u, first.front(), second.front(), 0x43a00000u};
  row.address_fields.push_back(AddressField{1, AddressField::Kind::SendAddress, first});
  row.address_fields.push_back(AddressField{2, AddressField::Kind::SendAddress, second});
  return row;
}

TEST(PatchLists, RepeatEntriesMoveEachIteratedSendAndSetupWritesSharedDifferences) {
  const TileRow iterated = two_send_row({0x78000008u, 0x78000010u, 0x78000018u}, {0x78000100u});
  const TileRow other = two_send_row({0x78000200u}, {0x78000300u});
  const TileTable table = build_tile_table(1, {&iterated, &other}, true);
  ASSERT_EQ(table.rows.size(), 1u);
  const StoredRow& stored = table.rows[0];

  const UsePatches first = patches_for_use(iterated, stored, 0x4c000, 3, 7);
  ASSERT_EQ(first.repeat.size(), 1u);
  EXPECT_EQ(first.repeat[0].word_address, 0x4c004u);
  EXPECT_EQ(first.repeat[0].values, (std::vector<uint32_t>{0x78000008u, 0x78000010u, 0x78000018u}));
  ASSERT_EQ(first.setup.size(), 1u);
  EXPECT_EQ(first.setup[0].word_address, 0x4c008u);
  EXPECT_EQ(first.setup[0].values, (std::vector<uint32_t>{0x78000100u}));

  const UsePatches second = patches_for_use(other, stored, 0x4c000, 1, 8);
  EXPECT_TRUE(second.repeat.empty());
  ASSERT_EQ(second.setup.size(), 2u);
  EXPECT_EQ(second.setup[0].values, (std::vector<uint32_t>{0x78000200u}));
  EXPECT_EQ(second.setup[1].values, (std::vector<uint32_t>{0x78000300u}));
}

TEST(PatchLists, UnsharedRowPatchesOnlyIteratedWords) {
  const TileRow row = two_send_row({0x78000008u, 0x78000010u}, {0x78000100u, 0x78000100u});
  const TileTable table = build_tile_table(1, {&row}, true);
  const UsePatches patches = patches_for_use(row, table.rows[0], 0x50000, 2, 3);
  EXPECT_TRUE(patches.setup.empty());
  ASSERT_EQ(patches.repeat.size(), 1u);
  EXPECT_EQ(patches.repeat[0].word_address, 0x50004u);
}

TEST(PatchLists, MoreValuesThanIterationsIsACompilerError) {
  const TileRow row = two_send_row({1, 2, 3}, {4});
  const TileTable table = build_tile_table(1, {&row}, true);
  EXPECT_THROW(patches_for_use(row, table.rows[0], 0, 2, 3), CompilerError);
}

TEST(PatchLists, LongListsUseTheBulkPatcher) {
  const arch::MachineDescription machine = arch::load_machine("ipu21-c600-t16");
  ASSERT_EQ(machine.bulk_patch_threshold_words, 24u);
  EXPECT_EQ(repeat_patch_method(23, machine), arch::PatchMethod::Helper);
  EXPECT_EQ(repeat_patch_method(24, machine), arch::PatchMethod::Bulk);
  EXPECT_EQ(repeat_patch_calls(arch::PatchMethod::Helper, 23), 23u);
  EXPECT_EQ(repeat_patch_calls(arch::PatchMethod::Bulk, 24), 1u);
  EXPECT_EQ(repeat_patch_calls(arch::PatchMethod::Bulk, 0), 0u);
  EXPECT_EQ(setup_patch_instructions(3), 31u);
}

}  // namespace
}  // namespace lockstep::compiler
