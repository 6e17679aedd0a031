#include <gtest/gtest.h>

#include "io/errors.hpp"
#include "arch/machine.hpp"
#include "compiler/table_layout.hpp"

namespace lockstep::compiler {
namespace {

class TableLayout : public ::testing::Test {
 protected:
  arch::MachineDescription machine = arch::load_machine("ipu21-c600-t16");
};

TEST_F(TableLayout, TableGoesToTheLowestElementFreeOfData) {
  ElementUse data(machine);
  data.add_range(0x4c010, 16);  // element 19
  uint32_t address = 0, largest = 0;
  ASSERT_TRUE(data.find_free(0x100, address, largest));
  EXPECT_EQ(address, 0x50000u);
  EXPECT_FALSE(data.used(machine.element_of(0x50000)));
}

TEST_F(TableLayout, AreaAndLookAheadNeverShareAnElementWithData) {
  ElementUse data(machine);
  data.add_range(0x54000, 4);  // element 21: the area may not run into it
  uint32_t address = 0, largest = 0;
  // The bottom 0x18 bytes are the loader's slot and a device image's entry stub.
  ASSERT_TRUE(data.find_free(0x8000 - 0x18, address, largest));
  EXPECT_EQ(address, 0x4c018u);
  ASSERT_TRUE(data.find_free(0x8000 - 0x17, address, largest));
  EXPECT_EQ(address, 0x58000u);
}

TEST_F(TableLayout, CommonAddressWhenEveryTileHasRoomThere) {
  std::vector<ElementUse> data(2, ElementUse(machine));
  data[0].add_range(0x4c000, 4);
  data[1].add_range(0x50000, 4);
  const auto addresses = place_reserved_areas({0, 1}, data, {0x100, 0x200}, machine);
  EXPECT_EQ(addresses, (std::vector<uint32_t>{0x54000u, 0x54000u}));
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
  const auto addresses = place_reserved_areas({4, 9}, data, {0x1000, 0x1000}, machine);
  EXPECT_EQ(addresses, (std::vector<uint32_t>{0x50000u, 0x54000u}));
}

TEST_F(TableLayout, NoRoomNamesTheTileAndTheBytesMissing) {
  std::vector<ElementUse> data(1, ElementUse(machine));
  data[0].add_range(0x4c000, 0x80000 - 0x4c000 - 0x4000);  // one free element left
  try {
    place_reserved_areas({5}, data, {0x4100}, machine);
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
  ASSERT_TRUE(data.find_free(0x34000 - 0x18, address, largest));
  EXPECT_EQ(address, 0x4c018u);
}

}  // namespace
}  // namespace lockstep::compiler
