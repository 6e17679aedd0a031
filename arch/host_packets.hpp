#pragma once
// Host exchange packets (IPU21-DEVICE.md section 14): how a tile's host program asks the
// host for data and sends data to it. Headers are two words; the chunk rule cuts a transfer
// into packets; a requesting tile sends the host a bitmap of the tiles that read.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace lockstep::arch {

// A host-to-tile packet lands at 0x50000 + 32 x a 9-bit field of its first word (the field's
// width is [inferred] from the stack's values, docs/device.md "Host phases").
constexpr uint32_t kHostPacketWindow = 0x50000;
constexpr uint32_t kHostPacketWindowBytes = 512 * 32;
constexpr uint32_t kHostCloseAddress = 0x50160;  // the closing zero-byte read's dummy target
constexpr uint32_t kHostMaxReadBytes = 1024;     // host to tile, long form
constexpr uint32_t kHostMaxWriteBytes = 256;     // tile to host, long form
constexpr uint32_t kHostPageBytes = 4096;        // chunks stay inside one host page
constexpr uint32_t kHostMinWriteEvents = 18;     // a shorter payload is padded with a delay

struct HostPacket {
  bool to_tile = false;
  uint32_t tile_address = 0;  // to_tile: where it lands; else where the payload is sent from
  uint32_t host_address = 0;
  uint32_t bytes = 0;  // 0: the closing read
};

// Section 14's chunk rule for one transfer: at a 64-aligned host offset with 64 bytes or
// more left in the transfer and the host page, the largest multiple of 64 up to the maximum
// (1024 to the tile, 256 to the host); else all when 60 bytes or fewer are left; else 32.
std::vector<HostPacket> host_packets(bool to_tile, uint32_t tile_address, uint32_t host_address, uint32_t bytes);

// The two header words. `last` marks the end of a host-to-tile stream (intermediate
// chunks clear bits 0x0c000000 of word 0).
std::array<uint32_t, 2> encode_host_header(uint32_t physical_tile, const HostPacket& packet, bool last);
std::array<uint32_t, 2> host_close_header(uint32_t physical_tile);
HostPacket decode_host_header(uint32_t word0, uint32_t word1);

// "" when the packet encodes, else why not (a host-to-tile destination outside the window or
// not 32-aligned, a length the forms cannot hold, a host address past the field).
std::string host_packet_misfit(const HostPacket& packet);

// Where a host-to-tile transfer's packets land. A destination inside the packet window
// (32-aligned) takes them directly; any other goes through the staging buffer (section 9.2:
// 0x50180, one 4 KiB chunk), each such transfer at the next 32-aligned offset, and the tile's
// code copies it to its destination after the host program.
constexpr uint32_t kHostStaging = 0x50180;
constexpr uint32_t kHostStagingBytes = 4096;
bool host_lands_directly(uint32_t tile_address, uint32_t bytes);
// The landing address of each transfer of one host step, in order (tile-to-host transfers:
// their own address). Staged bytes past the buffer land past it: host_staging_misfit says so.
std::vector<uint32_t> host_landing_addresses(const std::vector<uint32_t>& tile_addresses,
                                             const std::vector<uint32_t>& bytes, bool to_tile);
std::string host_staging_misfit(const std::vector<uint32_t>& tile_addresses, const std::vector<uint32_t>& bytes);

// The incoming mux value a tile's host program selects: 0x600 + ((phys & 0x3f) & ~2).
uint32_t host_mux(uint32_t physical_tile);
// The tile that sends the host the request for a reading tile (phys & 0x3d), and the bit of
// the reading tile in that request's two-word bitmap ((phys / 64) * 2 + ((phys >> 1) & 1);
// bits 0..23 in word 0, the rest in word 1 from bit 0).
uint32_t host_requester(uint32_t physical_tile);
std::array<uint32_t, 2> host_request_bitmap(const std::vector<uint32_t>& reading_tiles);

}  // namespace lockstep::arch
