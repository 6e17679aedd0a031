// Section 14's packet words and chunk rule (../shared/docs/IPU21-DEVICE.md), each expected
// value worked out by hand from the section's formulas, not from the encoder.
#include "arch/host_packets.hpp"

#include <gtest/gtest.h>

namespace lockstep::arch {
namespace {

using Words = std::array<uint32_t, 2>;

TEST(HostPackets, HeadersAreSection14sWords) {
  // Tile 5: route0 = (5 >> 1) << 16 | (5 & 1) << 15 = 0x28000, route1 = 0x80000000.
  // A long 1,024-byte read into 0x50180 from host 0x1000: length 1024 >> 6 = 16 -> 0.
  EXPECT_EQ(encode_host_header(5, {true, 0x50180, 0x1000, 1024}, true), (Words{0xec02820cu, 0x80000400u}));
  // Not the stream's last chunk: bits 0x0c000000 of word 0 clear.
  EXPECT_EQ(encode_host_header(5, {true, 0x50180, 0x1000, 1024}, false), (Words{0xe002820cu, 0x80000400u}));
  // Tile 2, a short 12-byte read from host 0x1040: (0x1040 >> 2) << 4 | 12 >> 2.
  EXPECT_EQ(encode_host_header(2, {true, 0x50180, 0x1040, 12}, true), (Words{0xcc01020cu, 0x00004103u}));
  // Tile 3, a long 256-byte write to host 0x2000: (0x2000 >> 6) << 4 | 256 >> 6.
  EXPECT_EQ(encode_host_header(3, {false, 0x60000, 0x2000, 256}, true), (Words{0xa0018000u, 0x80000804u}));
  // The closing zero-byte read at the dummy 0x50160: (0x160 >> 5) = 0xb.
  EXPECT_EQ(host_close_header(3), (Words{0xcc01820bu, 0x80000000u}));
  const HostPacket back = decode_host_header(0xec02820cu, 0x80000400u);
  EXPECT_TRUE(back.to_tile);
  EXPECT_EQ(back.tile_address, 0x50180u);
  EXPECT_EQ(back.host_address, 0x1000u);
  EXPECT_EQ(back.bytes, 1024u);
}

std::vector<uint32_t> sizes(const std::vector<HostPacket>& packets) {
  std::vector<uint32_t> out;
  for (const HostPacket& p : packets) out.push_back(p.bytes);
  return out;
}

TEST(HostPackets, TheChunkRuleCutsAsSection14Says) {
  // 64-aligned with 64 or more left: the largest multiple of 64 up to the maximum.
  EXPECT_EQ(sizes(host_packets(true, 0x50180, 0x1000, 4096)), (std::vector<uint32_t>{1024, 1024, 1024, 1024}));
  EXPECT_EQ(sizes(host_packets(false, 0x60000, 0x1000, 1024)), (std::vector<uint32_t>{256, 256, 256, 256}));
  // Then 60 bytes or fewer: all of them.
  EXPECT_EQ(sizes(host_packets(true, 0x50180, 0x1000, 76)), (std::vector<uint32_t>{64, 12}));
  // Not 64-aligned and more than 60 left: 32 bytes at a time.
  EXPECT_EQ(sizes(host_packets(true, 0x50180, 0x1010, 100)), (std::vector<uint32_t>{32, 32, 36}));
  // Within one 4 KiB host page.
  EXPECT_EQ(sizes(host_packets(true, 0x50180, 0xfc0, 128)), (std::vector<uint32_t>{64, 64}));
}

TEST(HostPackets, RequestsAndMux) {
  // Bit (phys / 64) * 2 + ((phys >> 1) & 1); bits 0..23 in word 0, the rest from bit 0 of word 1.
  EXPECT_EQ(host_request_bitmap({0}), (Words{0x1u, 0u}));
  EXPECT_EQ(host_request_bitmap({0, 2, 66}), (Words{0x1u | 0x2u | 0x8u, 0u}));
  EXPECT_EQ(host_request_bitmap({1471}), (Words{0u, 1u << 21}));  // 22 * 2 + 1 = bit 45
  EXPECT_EQ(host_requester(1471), 0x3du);
  EXPECT_EQ(host_requester(66), 0u);
  EXPECT_EQ(host_mux(1471), 0x63du);
  EXPECT_EQ(host_mux(3), 0x601u);
}

}  // namespace
}  // namespace lockstep::arch
