#include "compiler/table_layout.hpp"

#include <gtest/gtest.h>

#include "arch/machine.hpp"
#include "io/errors.hpp"

namespace lockstep::compiler {
namespace {

// Where a block of `bytes` alone (no rows) goes: the tail of an area request.
bool find_free(const ElementUse& data, uint32_t bytes, uint32_t& address, uint32_t& largest) {
  AreaLayout layout;
  uint32_t missing = 0;
  if (!data.find_free(AreaRequest{{}, bytes}, layout, largest, missing)) return false;
  address = layout.tail_address;
  return true;
}

class TableLayout : public ::testing::Test {
 protected:
  arch::MachineDescription machine = arch::load_machine("ipu21-c600-t16");
};

TEST_F(TableLayout, TableGoesToTheLowestElementFreeOfData) {
  ElementUse data(machine);
  data.add_range(0x4c010, 16);  // element 19
  uint32_t address = 0, largest = 0;
  ASSERT_TRUE(find_free(data, 0x100, address, largest));
  // Element 20 is free of data, but its first 0x1180 bytes are the runtime's host window.
  EXPECT_EQ(address, 0x51180u);
  EXPECT_FALSE(data.used(machine.element_of(0x50000)));
}

TEST_F(TableLayout, AreaAndLookAheadNeverShareAnElementWithData) {
  ElementUse data(machine);
  data.add_range(0x54000, 4);  // element 21: the area may not run into it
  uint32_t address = 0, largest = 0;
  // The bottom 0x18 bytes are the loader's slot and a device image's entry stub.
  ASSERT_TRUE(find_free(data, 0x4000 - 0x18, address, largest));
  EXPECT_EQ(address, 0x4c018u);
  // One block cannot span the host window at 0x50000; past it, it would run into the
  // element with data, so it goes to the next free run, past the runtime block.
  ASSERT_TRUE(find_free(data, 0x4000 - 0x17, address, largest));
  EXPECT_EQ(address, 0x586e0u);
  ASSERT_TRUE(find_free(data, 0x54000 - 0x51180, address, largest));
  EXPECT_EQ(address, 0x4c018u);
}

TEST_F(TableLayout, CommonAddressWhenEveryTileHasRoomThere) {
  std::vector<ElementUse> data(2, ElementUse(machine));
  data[0].add_range(0x4c000, 4);
  data[1].add_range(0x50000, 4);
  const auto areas = place_reserved_areas({0, 1}, data, {AreaRequest{{}, 0x100}, AreaRequest{{}, 0x200}}, machine);
  EXPECT_EQ(areas[0].start, 0x54000u);
  EXPECT_EQ(areas[1].start, 0x54000u);
}

TEST_F(TableLayout, PerTileAddressWhenNoCommonRoom) {
  std::vector<ElementUse> data(2, ElementUse(machine));
  data[0].add_range(0x4c000, 0x80000 - 0x4c000);
  data[1].add_range(0x4c000, 0x80000 - 0x4c000);
  // Give each tile one different free element.
  data[0] = ElementUse(machine);
  data[0].add_range(0x4c000, 0x4000);
  data[0].add_range(0x54000, 0x80000 - 0x54000);
  data[1] = ElementUse(machine);
  data[1].add_range(0x4c000, 0x8000);
  data[1].add_range(0x58000, 0x80000 - 0x58000);
  const auto areas = place_reserved_areas({4, 9}, data, {AreaRequest{{}, 0x1000}, AreaRequest{{}, 0x1000}}, machine);
  EXPECT_EQ(areas[0].start, 0x51180u);  // the host window's part stays the runtime's
  EXPECT_EQ(areas[1].start, 0x54000u);
}

TEST_F(TableLayout, NoRoomNamesTheTileAndTheBytesMissing) {
  std::vector<ElementUse> data(1, ElementUse(machine));
  data[0].add_range(0x4c000, 0x80000 - 0x4c000 - 0x4000);  // one free element left
  try {
    place_reserved_areas({5}, data, {AreaRequest{{}, 0x4100}}, machine);
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("tile 5"), std::string::npos) << message;
    EXPECT_NE(message.find("256 bytes missing"), std::string::npos) << message;
  }
}

TEST_F(TableLayout, DataAboveTheRowRegionDoesNotBlock) {
  ElementUse data(machine);
  data.add_range(0x80000, 0x60000);
  uint32_t address = 0, largest = 0;
  ASSERT_TRUE(find_free(data, 0x80000 - 0x586e0, address, largest));
  EXPECT_EQ(address, 0x586e0u);
}

// Rows and the tail go whole around the runtime's SRAM (IPU21-DEVICE.md section 1): the
// host packet words and staging chunk [0x50000, 0x51180), the state block [0x58000, 0x586e0).
TEST_F(TableLayout, RowsStepOverTheRuntimesSram) {
  const AreaRequest request{{0x3ee8, 0x100, 0x100, 0x6c00, 0x100}, 0x100};
  uint32_t missing = 0;
  const AreaLayout layout = lay_out_area(0x4c018, 0x80000, request, missing).value();
  // The second row ends exactly at the window; the third would cross it; the tail would
  // cross the state block.
  const std::vector<uint32_t> expected = {0x4c018, 0x4ff00, 0x51180, 0x51280, 0x57e80};
  EXPECT_EQ(layout.row_addresses, expected);
  EXPECT_EQ(layout.tail_address, 0x586e0u);
  EXPECT_EQ(layout.end, 0x587e0u);
  for (size_t r = 0; r < expected.size(); ++r) {
    const uint32_t end = layout.row_addresses[r] + request.row_bytes[r];
    EXPECT_FALSE(end > 0x50000 && layout.row_addresses[r] < 0x51180) << r;
    EXPECT_FALSE(end > 0x58000 && layout.row_addresses[r] < 0x586e0) << r;
  }
}

TEST_F(TableLayout, ALaterSmallerRowFillsTheRoomBeforeTheRuntimesSram) {
  uint32_t missing = 0;
  const AreaLayout layout = lay_out_area(0x4c018, 0x5c000, AreaRequest{{0x3000, 0x2000, 0x800}, 0x40}, missing).value();
  EXPECT_EQ(layout.row_addresses, (std::vector<uint32_t>{0x4c018, 0x51180, 0x4f018}));
  EXPECT_EQ(layout.tail_address, 0x53180u);  // after the rows of the highest piece
  EXPECT_EQ(layout.start, 0x4c018u);
  // What does not fit says how much is missing at least.
  EXPECT_FALSE(lay_out_area(0x4c018, 0x54000, AreaRequest{{0x3000, 0x4000}, 0x40}, missing));
  EXPECT_EQ(missing, 0x3000u + 0x4000 + 0x40 - (0x50000 - 0x4c018) - (0x54000 - 0x51180));
}

TEST_F(TableLayout, AnAreaThatSpillsPastItsRunLooksForTheNextOne) {
  std::vector<ElementUse> data(1, ElementUse(machine));
  data[0].add_range(0x54000, 4);                              // element 21: [0x4c018, 0x54000) is the first run
  const AreaRequest request{{0x3000, 0x2000, 0x2000}, 0x40};  // 0x7040: fits 0x7fe8 without the window
  const auto areas = place_reserved_areas({0}, data, {request}, machine);
  EXPECT_EQ(areas[0].start, 0x586e0u);
  EXPECT_EQ(areas[0].row_addresses, (std::vector<uint32_t>{0x586e0, 0x5b6e0, 0x5d6e0}));
}

}  // namespace
}  // namespace lockstep::compiler
