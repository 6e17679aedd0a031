#pragma once
// SRAM the IPU21 stack's runtime owns on every tile of an image it runs (IPU21-DEVICE.md
// section 1): the host packet words and the staging buffer's 4 KiB chunk, and the runtime
// state block (completion word, profile samples, worker and supervisor stacks). Exchange
// tables and supervisor code stay out of it, so any package can become an image with host
// calls (docs/device.md "Runtime SRAM").
#include <array>
#include <cstdint>

#include "arch/host_packets.hpp"

namespace lockstep::arch {

struct SramRange {
  uint32_t begin = 0;
  uint32_t end = 0;  // exclusive
  bool overlaps(const SramRange& other) const { return begin < other.end && other.begin < end; }
};

inline constexpr uint32_t kRuntimeStateBlock = 0x58000;     // = the completion word
inline constexpr uint32_t kRuntimeStateBlockEnd = 0x586e0;  // the supervisor stack's top
inline constexpr std::array<SramRange, 2> kRuntimeOwnedSram = {{
    {kHostPacketWindow, kHostStaging + kHostStagingBytes},
    {kRuntimeStateBlock, kRuntimeStateBlockEnd},
}};

// The lowest 8-aligned address at or above `address` from which `bytes` bytes miss every
// runtime-owned range.
inline uint64_t clear_of_runtime_sram(uint64_t address, uint64_t bytes) {
  address = (address + 7) & ~uint64_t{7};
  for (const SramRange& r : kRuntimeOwnedSram) {  // ascending, so one pass suffices
    if (address < r.end && address + bytes > r.begin) address = (uint64_t{r.end} + 7) & ~uint64_t{7};
  }
  return address;
}

}  // namespace lockstep::arch
