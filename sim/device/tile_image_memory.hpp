#pragma once
// A tile's SRAM as the loader leaves it from a device image: segments over zeros.
#include <cstdint>

#include "sim/device/application.hpp"

namespace lockstep::arch {

class TileImageMemory {
 public:
  explicit TileImageMemory(const TileImage& image) : image_(image) {}
  uint32_t word(uint32_t address) const {
    uint32_t w = 0;
    for (uint32_t b = 0; b < 4; ++b) w |= uint32_t{byte(address + b)} << (8 * b);
    return w;
  }

 private:
  uint8_t byte(uint32_t address) const {
    for (const AppSegment& s : image_.segments) {
      if (address >= s.address && address - s.address < s.memory_size) {
        const uint32_t at = address - s.address;
        return at < s.data.size() ? s.data[at] : 0;
      }
    }
    return 0;
  }
  const TileImage& image_;
};

}  // namespace lockstep::arch
