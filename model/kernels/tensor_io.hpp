#pragma once
// Reading and writing a kernel's tensors in tile SRAM: little-endian FP16 (raw bits), FP32
// and bytes, whole spans at once. Each throws std::out_of_range (hazard 4) before touching
// memory when the span leaves SRAM.
#include <bit>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/sram.hpp"

namespace lockstep::model::kernels {

inline void require_span(const Sram& memory, uint64_t address, uint64_t bytes, const char* what) {
  if (!memory.contains(address, bytes)) {
    throw std::out_of_range(std::string(what) + ": span outside SRAM");
  }
}

template <typename T>
std::vector<T> read_array(const Sram& memory, uint32_t address, uint64_t count, const char* what) {
  static_assert(std::endian::native == std::endian::little, "SRAM is little-endian");
  require_span(memory, address, count * sizeof(T), what);
  std::vector<T> out(count);
  memory.read(address, static_cast<uint32_t>(count * sizeof(T)), reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

template <typename T>
void write_array(Sram& memory, uint32_t address, const std::vector<T>& values, const char* what) {
  require_span(memory, address, values.size() * sizeof(T), what);
  memory.write(address, static_cast<uint32_t>(values.size() * sizeof(T)),
               reinterpret_cast<const uint8_t*>(values.data()));
}

inline std::vector<uint16_t> read_fp16(const Sram& m, uint32_t a, uint64_t n, const char* what) {
  return read_array<uint16_t>(m, a, n, what);
}
inline std::vector<float> read_fp32(const Sram& m, uint32_t a, uint64_t n, const char* what) {
  return read_array<float>(m, a, n, what);
}
inline std::vector<uint8_t> read_bytes(const Sram& m, uint32_t a, uint64_t n, const char* what) {
  return read_array<uint8_t>(m, a, n, what);
}

}  // namespace lockstep::model::kernels
