#include "arch/host_packets.hpp"

#include <algorithm>

#include "io/hex.hpp"

namespace lockstep::arch {
namespace {

uint32_t route0(uint32_t tile) { return ((tile >> 1) << 16) | ((tile & 1) << 15); }
uint32_t route1(uint32_t tile) { return (tile & 1) << 31; }
constexpr uint32_t kShortMaxBytes = 60;
constexpr uint32_t kHostFieldMax = 0x7ffffff;  // word 1 bits 4..30

bool long_form(uint32_t bytes) { return bytes > kShortMaxBytes; }

}  // namespace

std::vector<HostPacket> host_packets(bool to_tile, uint32_t tile_address, uint32_t host_address, uint32_t bytes) {
  const uint32_t largest = to_tile ? kHostMaxReadBytes : kHostMaxWriteBytes;
  std::vector<HostPacket> out;
  for (uint32_t done = 0; done < bytes;) {
    const uint32_t host = host_address + done;
    const uint32_t left = std::min(bytes - done, kHostPageBytes - host % kHostPageBytes);
    uint32_t n = 32;
    if (host % 64 == 0 && left >= 64) {
      n = std::min(largest, left / 64 * 64);
    } else if (left <= kShortMaxBytes) {
      n = left;
    }
    n = std::min(n, left);
    out.push_back({to_tile, tile_address + done, host, n});
    done += n;
  }
  return out;
}

std::string host_packet_misfit(const HostPacket& p) {
  const bool is_long = long_form(p.bytes);
  if (p.bytes == 0 || p.bytes % 4 != 0 || p.bytes > (p.to_tile ? kHostMaxReadBytes : kHostMaxWriteBytes) ||
      (is_long && (p.bytes % 64 != 0 || p.host_address % 64 != 0))) {
    return "a packet of " + std::to_string(p.bytes) + " bytes at host address " + hex(p.host_address) +
           " has no form (short: 4..60 bytes; long: 64-byte multiples at 64-aligned host addresses, up to " +
           std::to_string(p.to_tile ? kHostMaxReadBytes : kHostMaxWriteBytes) + ")";
  }
  if ((p.host_address >> (is_long ? 6 : 2)) > kHostFieldMax || p.host_address % 4 != 0) {
    return "host address " + hex(p.host_address) + " does not fit the header's host field";
  }
  if (p.to_tile && (p.tile_address < kHostPacketWindow || p.tile_address % 32 != 0 ||
                    uint64_t{p.tile_address} + p.bytes > uint64_t{kHostPacketWindow} + kHostPacketWindowBytes)) {
    return "a host-to-tile packet lands at 0x50000 + 32 x a 9-bit field: " + hex(p.tile_address) + "+" +
           std::to_string(p.bytes) + " is not 32-aligned inside [0x50000, 0x54000)";
  }
  return "";
}

std::array<uint32_t, 2> encode_host_header(uint32_t physical_tile, const HostPacket& p, bool last) {
  const bool is_long = long_form(p.bytes);
  const uint32_t shift = is_long ? 6 : 2;
  const uint32_t length = (p.bytes >> shift) & 0xfu;  // a 1024-byte long read is 0
  const uint32_t word1 = route1(physical_tile) | ((p.host_address >> shift) << 4) | length;
  if (!p.to_tile) return {(is_long ? 0xa0000000u : 0x80000000u) | route0(physical_tile), word1};
  uint32_t word0 =
      (is_long ? 0xec000200u : 0xcc000200u) | route0(physical_tile) | ((p.tile_address - kHostPacketWindow) >> 5);
  if (!last) word0 &= ~0x0c000000u;
  return {word0, word1};
}

std::array<uint32_t, 2> host_close_header(uint32_t physical_tile) {
  return {0xcc000200u | route0(physical_tile) | ((kHostCloseAddress - kHostPacketWindow) >> 5), route1(physical_tile)};
}

HostPacket decode_host_header(uint32_t word0, uint32_t word1) {
  HostPacket p;
  const bool is_long = (word0 & 0x20000000u) != 0;
  const uint32_t shift = is_long ? 6 : 2, length = word1 & 0xfu;
  p.to_tile = (word0 & 0xc0000000u) == 0xc0000000u;
  p.tile_address = kHostPacketWindow + ((word0 & 0x1ffu) << 5);
  p.host_address = ((word1 >> 4) & kHostFieldMax) << shift;
  p.bytes = is_long ? (length == 0 ? 1024 : length * 64) : length * 4;
  return p;
}

bool host_lands_directly(uint32_t tile_address, uint32_t bytes) {
  return tile_address >= kHostPacketWindow && tile_address % 32 == 0 &&
         uint64_t{tile_address} + bytes <= uint64_t{kHostPacketWindow} + kHostPacketWindowBytes;
}

std::vector<uint32_t> host_landing_addresses(const std::vector<uint32_t>& tile_addresses,
                                             const std::vector<uint32_t>& bytes, bool to_tile) {
  std::vector<uint32_t> out;
  uint64_t staged = 0;
  for (size_t i = 0; i < tile_addresses.size(); ++i) {
    if (!to_tile || host_lands_directly(tile_addresses[i], bytes[i])) {
      out.push_back(tile_addresses[i]);
      continue;
    }
    out.push_back(static_cast<uint32_t>(kHostStaging + staged));
    staged += (uint64_t{bytes[i]} + 31) / 32 * 32;
  }
  return out;
}

std::string host_staging_misfit(const std::vector<uint32_t>& tile_addresses, const std::vector<uint32_t>& bytes) {
  const std::vector<uint32_t> landing = host_landing_addresses(tile_addresses, bytes, true);
  uint64_t staged_end = kHostStaging;
  for (size_t i = 0; i < landing.size(); ++i) {
    if (landing[i] != tile_addresses[i]) staged_end = std::max<uint64_t>(staged_end, uint64_t{landing[i]} + bytes[i]);
  }
  if (staged_end > kHostStaging + kHostStagingBytes) {
    return "stages " + std::to_string(staged_end - kHostStaging) + " bytes through the " +
           std::to_string(kHostStagingBytes) + "-byte staging buffer at " + hex(kHostStaging) +
           " (one 4 KiB chunk per tile and host phase)";
  }
  for (size_t i = 0; i < landing.size(); ++i) {
    // No destination, direct or staged, may overlap the staged bytes: they would be
    // overwritten, or overwrite them before the copy reads them.
    if (staged_end == kHostStaging) continue;
    if (tile_addresses[i] < staged_end && uint64_t{tile_addresses[i]} + bytes[i] > kHostStaging) {
      return "lands at " + hex(tile_addresses[i]) + "+" + std::to_string(bytes[i]) +
             ", where this step's staged bytes are (" + hex(kHostStaging) + ".." +
             hex(static_cast<uint32_t>(staged_end)) + ")";
    }
  }
  return "";
}

uint32_t host_mux(uint32_t physical_tile) { return 0x600 + ((physical_tile & 0x3f) & ~2u); }
uint32_t host_requester(uint32_t physical_tile) { return physical_tile & 0x3d; }

std::array<uint32_t, 2> host_request_bitmap(const std::vector<uint32_t>& reading_tiles) {
  std::array<uint32_t, 2> bits{0, 0};
  for (const uint32_t t : reading_tiles) {
    const uint32_t bit = (t / 64) * 2 + ((t >> 1) & 1);
    if (bit < 24) {
      bits[0] |= 1u << bit;
    } else {
      bits[1] |= 1u << (bit - 24);
    }
  }
  return bits;
}

}  // namespace lockstep::arch
