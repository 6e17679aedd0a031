// split_multicast: wide transfers cut into receiver groups, within the sender budget.
#include "compiler/multicast_split.hpp"

#include <gtest/gtest.h>

#include <set>

#include "arch/machine.hpp"
#include "arch/topology.hpp"

namespace lockstep::compiler {
namespace {

const arch::MachineDescription& machine() {
  static const arch::MachineDescription m = arch::load_machine("ipu21-c600");
  return m;
}

arch::Transfer transfer(uint32_t source, uint32_t words, std::vector<uint32_t> destinations) {
  arch::Transfer t;
  t.source_tile = source;
  t.source_addresses = {0x4c000};
  t.words = words;
  for (uint32_t d : destinations) t.destinations.push_back({d, 0x64000});
  return t;
}

// Every (destination, source tile, source address, words) delivery, as a set.
std::multiset<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> deliveries(const arch::CapturePhase& phase) {
  std::multiset<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> out;
  for (const auto& t : phase.transfers) {
    for (const auto& d : t.destinations) out.insert({d.tile, t.source_tile, t.source_addresses[0], t.words});
  }
  return out;
}

TEST(MulticastSplit, WideTransferBecomesEvenGroupsWithTheSameDeliveries) {
  const arch::Topology topology(machine());
  arch::CapturePhase phase;
  std::vector<uint32_t> wide;
  for (uint32_t d = 100; d < 110; ++d) wide.push_back(d);
  phase.transfers.push_back(transfer(1, 64, wide));
  // Tile 100 also receives 200 words elsewhere: the sender may send up to 200 words.
  phase.transfers.push_back(transfer(2, 200, {100}));
  const arch::CapturePhase split = split_multicast(phase, topology, 4);
  ASSERT_EQ(split.transfers.size(), 1u + 3u);  // 10 destinations -> 4 + 3 + 3
  EXPECT_EQ(split.transfers[0].destinations.size(), 4u);
  EXPECT_EQ(split.transfers[1].destinations.size(), 3u);
  EXPECT_EQ(split.transfers[2].destinations.size(), 3u);
  EXPECT_EQ(deliveries(split), deliveries(phase));
}

TEST(MulticastSplit, SenderBudgetLimitsTheSplit) {
  const arch::Topology topology(machine());
  arch::CapturePhase phase;
  // Every receiver takes 64 words in all; splitting would make tile 1 send 192 > 64.
  phase.transfers.push_back(transfer(1, 64, {100, 101, 102, 103, 104, 105}));
  const arch::CapturePhase split = split_multicast(phase, topology, 2);
  EXPECT_EQ(split.transfers.size(), 1u);
  EXPECT_EQ(deliveries(split), deliveries(phase));
}

TEST(MulticastSplit, GroupZeroAndNarrowTransfersAreUnchanged) {
  const arch::Topology topology(machine());
  arch::CapturePhase phase;
  phase.transfers.push_back(transfer(1, 64, {100, 101}));
  phase.transfers.push_back(transfer(3, 500, {102}));
  EXPECT_EQ(split_multicast(phase, topology, 0).transfers.size(), 2u);
  EXPECT_EQ(split_multicast(phase, topology, 4).transfers.size(), 2u);
}

}  // namespace
}  // namespace lockstep::compiler
