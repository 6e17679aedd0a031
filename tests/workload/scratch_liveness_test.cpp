// Scratch reuse by liveness: buffers never live together share memory, buffers live together
// never do, and an apart pair lands in different memory elements.
#include "workload/scratch_liveness.hpp"

#include <gtest/gtest.h>

#include "arch/machine.hpp"

namespace lockstep::workload {
namespace {

// The GEMM chunk's buffers (workload/lower_gemm.cpp): steps 0 gather, 1 gemm, 2 reduce,
// 3 reduce_sum, 4 scatter; the partial and reduce_in apart.
const std::vector<ScratchBuffer> kChunk = {
    {"input", 1000, 0, 1}, {"partial", 400, 1, 2}, {"reduce_in", 600, 2, 3}, {"reduce_out", 100, 3, 4}};
const std::vector<ApartPair> kApart = {{1, 2}};

TEST(ScratchLiveness, BuffersNeverLiveTogetherShareAColour) {
  const auto colours = colour_by_liveness(kChunk, kApart);
  ASSERT_EQ(colours.size(), 4u);
  EXPECT_EQ(colours[0], colours[2]);  // input dead before reduce_in is written
  EXPECT_EQ(colours[1], colours[3]);  // partial dead before reduce_out is written
  EXPECT_NE(colours[0], colours[1]);
  EXPECT_NE(colours[2], colours[3]);
}

TEST(ScratchLiveness, RegionsAreAsLargeAsTheirLargestBuffer) {
  TileMemory memory(1, 0x10000, 0x20000, "test.yaml");
  const auto colours = colour_by_liveness(kChunk, {});
  const ScratchLayout layout = layout_scratch(memory, 0, kChunk, colours, {});
  EXPECT_EQ(layout.address[0], 0x10000u);
  EXPECT_EQ(layout.address[2], 0x10000u);
  EXPECT_EQ(layout.address[1], 0x10000u + 1000u);
  EXPECT_EQ(layout.address[3], 0x10000u + 1000u);
  EXPECT_EQ(layout.end, 0x10000u + 1000u + 400u);
  // place_scratch() reserves exactly that layout.
  EXPECT_EQ(place_scratch(memory, 0, kChunk, colours, {}), layout.address);
  EXPECT_EQ(memory.peak_bytes(0), 1400u);
}

TEST(ScratchLiveness, ApartBuffersLandInDifferentMemoryElements) {
  const arch::MachineDescription machine = arch::load_machine("ipu21-c600");
  const uint32_t begin = 0x5c000;
  TileMemory memory(1, begin, 0x80000, "test.yaml", &machine);
  const auto colours = colour_by_liveness(kChunk, kApart);
  const ScratchLayout layout = layout_scratch(memory, 0, kChunk, colours, kApart);
  const uint32_t partial_last = layout.address[1] + 400 - 1;
  EXPECT_NE(machine.element_of(partial_last), machine.element_of(layout.address[2]));
  EXPECT_NE(machine.element_of(layout.address[1]), machine.element_of(layout.address[2] + 600 - 1));
  EXPECT_EQ(place_scratch(memory, 0, kChunk, colours, kApart), layout.address);
}

TEST(ScratchLiveness, RunningOutNamesTheTileAndTheRegion) {
  TileMemory memory(2, 0x10000, 0x10400, "test.yaml");
  const auto colours = colour_by_liveness(kChunk, {});
  EXPECT_GT(layout_scratch(memory, 1, kChunk, colours, {}).end, memory.end());
  try {
    place_scratch(memory, 1, kChunk, colours, {});
    FAIL() << "expected a placement error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("tile 1: tensor partial/reduce_out"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lockstep::workload
