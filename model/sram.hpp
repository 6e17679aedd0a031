#pragma once
// One tile's SRAM: 16 KiB memory elements allocated on first write, so idle memory costs
// nothing. Little-endian; untouched memory reads as zero; addresses outside SRAM are
// refused (callers report hazard 4 first).
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "arch/machine.hpp"

namespace lockstep::model {

class Sram {
 public:
  explicit Sram(const arch::MachineDescription& machine);

  bool contains(uint64_t address, uint64_t bytes) const;
  // Both throw std::out_of_range outside SRAM.
  void read(uint32_t address, uint32_t bytes, uint8_t* out) const;
  void write(uint32_t address, uint32_t bytes, const uint8_t* data);
  // Copies [source_address, + bytes) of `source` to `address` here, chunk to chunk, with no
  // buffer in between; the ranges must not overlap when `source` is this SRAM.
  void copy_from(const Sram& source, uint32_t source_address, uint32_t address, uint32_t bytes);
  bool equal(uint32_t address, uint32_t bytes, const uint8_t* expected) const;  // throws outside SRAM
  // Calls fn(data, n) for each chunk piece of [address, + bytes) in address order, in place
  // (a piece never written reads from a chunk of zeros). Throws outside SRAM.
  template <typename Fn>
  void visit(uint32_t address, uint32_t bytes, Fn fn) const {
    check(address, bytes, "read");
    for_each_piece(address, bytes, [&](uint32_t index, uint32_t within, uint32_t n) {
      const Chunk* chunk = chunks_[index].get();
      fn((chunk ? chunk : &kZeroChunk)->data() + within, n);
      return true;
    });
  }
  uint32_t read_word(uint32_t address) const;
  void write_word(uint32_t address, uint32_t value);
  size_t allocated_bytes() const;

  static constexpr uint32_t kChunk = 0x4000;  // allocation unit, from the SRAM base

 private:
  using Chunk = std::array<uint8_t, kChunk>;
  static constexpr Chunk kZeroChunk{};
  void check(uint32_t address, uint32_t bytes, const char* what) const;
  // Calls fn(chunk index, offset within the chunk, bytes) for each chunk piece of the range,
  // in address order, while fn returns true; returns false if fn stopped it.
  template <typename Fn>
  bool for_each_piece(uint32_t address, uint32_t bytes, Fn fn) const {
    uint32_t offset = address - base_;
    while (bytes > 0) {
      const uint32_t within = offset % kChunk;
      const uint32_t n = std::min(bytes, kChunk - within);
      if (!fn(offset / kChunk, within, n)) return false;
      offset += n;
      bytes -= n;
    }
    return true;
  }
  uint32_t base_;
  uint32_t end_;
  std::vector<std::unique_ptr<Chunk>> chunks_;
};

}  // namespace lockstep::model
