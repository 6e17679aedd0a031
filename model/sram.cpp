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

void Sram::check(uint32_t address, uint32_t bytes, const char* what) const {
  if (!contains(address, bytes)) {
    throw std::out_of_range(std::string("SRAM ") + what + " outside memory at " + std::to_string(address));
  }
}

void Sram::read(uint32_t address, uint32_t bytes, uint8_t* out) const {
  check(address, bytes, "read");
  for_each_piece(address, bytes, [&](uint32_t index, uint32_t within, uint32_t n) {
    if (const Chunk* chunk = chunks_[index].get()) {
      std::memcpy(out, chunk->data() + within, n);
    } else {
      std::memset(out, 0, n);
    }
    out += n;
    return true;
  });
}

void Sram::write(uint32_t address, uint32_t bytes, const uint8_t* data) {
  check(address, bytes, "write");
  for_each_piece(address, bytes, [&](uint32_t index, uint32_t within, uint32_t n) {
    auto& chunk = chunks_[index];
    if (!chunk) chunk = std::make_unique<Chunk>();  // value-initialised: zeros
    std::memcpy(chunk->data() + within, data, n);
    data += n;
    return true;
  });
}

void Sram::copy_from(const Sram& source, uint32_t source_address, uint32_t address, uint32_t bytes) {
  source.check(source_address, bytes, "read");
  check(address, bytes, "write");
  uint32_t from = source_address - source.base_, to = address - base_;
  while (bytes > 0) {
    const uint32_t n = std::min({bytes, kChunk - from % kChunk, kChunk - to % kChunk});
    auto& chunk = chunks_[to / kChunk];
    if (!chunk) chunk = std::make_unique<Chunk>();  // value-initialised: zeros
    if (const Chunk* in = source.chunks_[from / kChunk].get()) {
      std::memcpy(chunk->data() + to % kChunk, in->data() + from % kChunk, n);
    } else {
      std::memset(chunk->data() + to % kChunk, 0, n);
    }
    from += n;
    to += n;
    bytes -= n;
  }
}

bool Sram::equal(uint32_t address, uint32_t bytes, const uint8_t* expected) const {
  check(address, bytes, "compare");
  return for_each_piece(address, bytes, [&](uint32_t index, uint32_t within, uint32_t n) {
    const Chunk* chunk = chunks_[index].get();
    const bool same = chunk ? std::memcmp(chunk->data() + within, expected, n) == 0
                            : std::all_of(expected, expected + n, [](uint8_t b) { return b == 0; });
    expected += n;
    return same;
  });
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
