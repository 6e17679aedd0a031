// C600 topology and route timing against IPU21-EXCHANGE.md sections 2 and 3.
#include "arch/topology.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>

namespace lockstep::arch {
namespace {

constexpr uint32_t kTiles = 1472;

// The section 3 formulas written out literally, as an independent reference.
struct Fields {
  int b0, b1, c, h, r, f;
};
Fields fields(uint32_t p) {
  Fields x;
  x.b0 = p & 1;
  x.b1 = (p >> 1) & 1;
  x.c = (p >> 2) & 15;
  x.h = x.c >> 3;
  x.r = p >> 6;
  x.f = x.c <= 7 ? x.c : 15 - x.c;
  return x;
}
int reference_displacement(uint32_t s, uint32_t d) {
  const Fields a = fields(s), b = fields(d);
  int k;
  if (b.b1 == 0) {
    k = b.h == b.b0 ? 1 : 5;
  } else {
    k = b.h == b.b0 ? 2 : 4;
  }
  return 6 * (b.f - a.f - (a.h ^ a.b0)) + k;
}
int reference_ttm(uint32_t s, uint32_t d) {
  const Fields a = fields(s), b = fields(d);
  const int turn = a.h == b.h ? (a.c % 8) + 1 : 16 - (a.c % 8);
  return 8 * a.h + 3 - b.c + 4 * a.f - 4 * b.f + turn + 2 * (a.r - b.r) + std::abs(reference_displacement(s, d)) - 34;
}

const Topology& chip() {
  static const Topology topology{MachineDescription{}};
  return topology;
}

TEST(Topology, CheckValueTable) {
  struct Row {
    uint32_t ls, ld, ps, pd;
    int D, dir, ttm, pttm;
    uint32_t rd;
    int W;
  };
  const Row rows[] = {
      {0, 1, 0, 2, 2, 1, -28, -28, 0, 52},
      {1, 0, 2, 0, 1, 1, -29, -28, 0, 52},
      {1471, 0, 63, 0, 1, 1, -13, -12, 0, 52},
      {100, 101, 260, 262, 2, 1, -28, -28, 4, 60},
      {500, 1000, 1300, 361, 1, 1, 1, 2, 5, 62},
      {1000, 500, 361, 1300, 1, 1, -43, -42, 20, 92},
      {700, 701, 1117, 1119, -2, 2, -28, -28, 17, 86},
      {1300, 17, 440, 514, -10, 2, -3, -2, 8, 68},
      {777, 0, 1314, 0, -47, 2, 108, 108, 0, 52},
      {182, 320, 5, 1420, 7, 1, -77, -76, 22, 96},
      {736, 100, 32, 260, -41, 2, 49, 49, 4, 60},
  };
  const Topology& t = chip();
  for (const Row& row : rows) {
    SCOPED_TRACE("L" + std::to_string(row.ls) + " -> L" + std::to_string(row.ld));
    EXPECT_EQ(t.physical(row.ls), row.ps);
    EXPECT_EQ(t.physical(row.ld), row.pd);
    EXPECT_EQ(t.logical(row.ps), row.ls);
    EXPECT_EQ(t.displacement(row.ps, row.pd), row.D);
    EXPECT_EQ(t.direction(row.ps, row.pd), row.dir);
    EXPECT_EQ(t.time_to_mux(row.ps, row.pd), row.ttm);
    EXPECT_EQ(t.paired_time_to_mux(row.ps, row.pd), row.pttm);
    EXPECT_EQ(Topology::row(row.pd), row.rd);
    EXPECT_EQ(t.write_delay(row.pd), row.W);
    EXPECT_EQ(t.paired_write_delay(row.pd), row.W + 1);  // 53 + 2 r_d
  }
}

TEST(Topology, SectionNineTraceTimes) {
  const Topology& t = chip();
  // (logical s, logical d, physical s, physical d, ttm, dir) of vectors A-D.
  EXPECT_EQ(t.physical(0), 0u);
  EXPECT_EQ(t.physical(1286), 53u);
  EXPECT_EQ(t.time_to_mux(0, 53), -23);
  EXPECT_EQ(t.direction(0, 53), 1);
  EXPECT_EQ(t.time_to_mux(32, 260), 49);
  EXPECT_EQ(t.direction(32, 260), 2);
  EXPECT_EQ(t.physical(1471), 63u);
  EXPECT_EQ(t.time_to_mux(53, 63), -14);
  EXPECT_EQ(t.direction(53, 63), 2);
  EXPECT_EQ(t.physical(32), 1024u);
  EXPECT_EQ(t.time_to_mux(1024, 0), 3);
  EXPECT_EQ(t.direction(1024, 0), 1);
}

TEST(Topology, MappingIsAPermutation) {
  const Topology& t = chip();
  std::set<uint32_t> seen;
  for (uint32_t l = 0; l < kTiles; ++l) {
    const uint32_t p = t.physical(l);
    ASSERT_LT(p, kTiles);
    ASSERT_EQ(t.logical(p), l);
    ASSERT_EQ(Topology::c600_physical(l), p);
    seen.insert(p);
  }
  EXPECT_EQ(seen.size(), kTiles);
}

TEST(Topology, PartnerIsLogicalXorOne) {
  const Topology& t = chip();
  for (uint32_t l = 0; l < kTiles; ++l) {
    ASSERT_EQ(t.physical(l ^ 1u), Topology::partner(t.physical(l))) << l;
    // The even logical tile is the pair's primary (physical bit 1 clear).
    ASSERT_EQ((t.physical(l) >> 1) & 1u, l & 1u) << l;
  }
}

TEST(Topology, MatchesTheFormulasForEveryPairAndSpansTheStatedRange) {
  const Topology& t = chip();
  int lo = 1000, hi = -1000;
  for (uint32_t s = 0; s < kTiles; ++s) {
    for (uint32_t d = 0; d < kTiles; ++d) {
      const int D = t.displacement(s, d);
      ASSERT_EQ(D, reference_displacement(s, d)) << s << " " << d;
      const int ttm = t.time_to_mux(s, d);
      ASSERT_EQ(ttm, reference_ttm(s, d)) << s << " " << d;
      ASSERT_EQ(t.direction(s, d), D >= 1 ? 1 : 2);
      ASSERT_EQ(t.paired_time_to_mux(s, d), std::max(ttm, reference_ttm(s, d ^ 2u)));
      if (s != d) {
        lo = std::min(lo, ttm);
        hi = std::max(hi, ttm);
      }
    }
  }
  EXPECT_EQ(lo, -78);
  EXPECT_EQ(hi, 112);
}

TEST(Topology, OffsetAndWriteDelayComeFromTheMachine) {
  MachineDescription m;
  m.route.ttm_offset = -30;
  m.route.write_delay_base = 40;
  m.route.write_delay_per_row = 3;
  m.route.paired_write_delay_base = 45;
  const Topology t(m);
  EXPECT_EQ(t.time_to_mux(0, 2), -28 + 4);
  EXPECT_EQ(t.write_delay(1420), 40 + 3 * 22);
  EXPECT_EQ(t.paired_write_delay(1420), 45 + 3 * 22);
}

TEST(Topology, SubsetMachineKeepsChipPositions) {
  MachineDescription m;
  m.tiles = 16;
  const Topology t(m);
  EXPECT_EQ(t.tiles(), 16u);
  EXPECT_EQ(t.physical(15), chip().physical(15));
  m.tiles = 0;
  EXPECT_THROW(Topology{m}, std::invalid_argument);
}

}  // namespace
}  // namespace lockstep::arch
