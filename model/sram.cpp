#include "model/sram.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace lockstep::model {

Sram::Sram(const arch::MachineDescription& machine)
    : base_(machine.sram_base),
      end_(machine.sram_end),
      chunks_((machine.sram_end - machine.sram_base + kChunk - 1) / kChunk) {}

bool Sram::contains(uint64_t address, uint64_t bytes) const {
  return address >= base_ && address + bytes <= end_;
}

void Sram::read(uint32_t address, uint32_t bytes, uint8_t* out) const {
  if (!contains(address, bytes)) {
    throw std::out_of_range("SRAM read outside memory at " + std::to_string(address));
  }
  uint32_t offset = address - base_;
  while (bytes > 0) {
    const uint32_t chunk = offset / kChunk, within = offset % kChunk;
    const uint32_t n = std::min(bytes, kChunk - within);
    if (chunks_[chunk]) {
      std::memcpy(out, chunks_[chunk]->data() + within, n);
    } else {
      std::memset(out, 0, n);
    }
    out += n;
    offset += n;
    bytes -= n;
  }
}

void Sram::write(uint32_t address, uint32_t bytes, const uint8_t* data) {
  if (!contains(address, bytes)) {
    throw std::out_of_range("SRAM write outside memory at " + std::to_string(address));
  }
  uint32_t offset = address - base_;
  while (bytes > 0) {
    const uint32_t chunk = offset / kChunk, within = offset % kChunk;
    const uint32_t n = std::min(bytes, kChunk - within);
    if (!chunks_[chunk]) {
      chunks_[chunk] = std::make_unique<std::array<uint8_t, kChunk>>();
      chunks_[chunk]->fill(0);
    }
    std::memcpy(chunks_[chunk]->data() + within, data, n);
    data += n;
    offset += n;
    bytes -= n;
  }
}

bool Sram::equal(uint32_t address, uint32_t bytes, const uint8_t* expected) const {
  if (!contains(address, bytes)) {
    throw std::out_of_range("SRAM compare outside memory at " + std::to_string(address));
  }
  uint32_t offset = address - base_;
  while (bytes > 0) {
    const uint32_t chunk = offset / kChunk, within = offset % kChunk;
    const uint32_t n = std::min(bytes, kChunk - within);
    if (chunks_[chunk]) {
      if (std::memcmp(chunks_[chunk]->data() + within, expected, n) != 0) return false;
    } else if (!std::all_of(expected, expected + n, [](uint8_t b) { return b == 0; })) {
      return false;
    }
    expected += n;
    offset += n;
    bytes -= n;
  }
  return true;
}

uint32_t Sram::read_word(uint32_t address) const {
  uint8_t b[4];
  read(address, 4, b);
  return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
}

void Sram::write_word(uint32_t address, uint32_t value) {
  const uint8_t b[4] = {uint8_t(value), uint8_t(value >> 8), uint8_t(value >> 16),
                        uint8_t(value >> 24)};
  write(address, 4, b);
}

size_t Sram::allocated_bytes() const {
  size_t n = 0;
  for (const auto& c : chunks_) n += c ? kChunk : 0;
  return n;
}

}  // namespace lockstep::model
