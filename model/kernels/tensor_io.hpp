#pragma once
// Reading and writing a kernel's tensors in tile SRAM: little-endian FP16 (raw bits), FP32
// and bytes, whole spans at once, an input read in place (InputArray) or an output computed in
// place (OutputArray). Each throws std::out_of_range (hazard 4) before touching memory when the
// span leaves SRAM.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/runtime_sram.hpp"
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

// A kernel input read in place in SRAM (a copy only when the address is not aligned for T).
// Kernels read all their inputs before they write: every kernel here computes into its own
// output buffer and writes it last (or, through OutputArray, in place only when the output
// overlaps no input), so an output that overlaps an input sees the same values a copied input
// would.
template <typename T>
class InputArray {
 public:
  InputArray(const Sram& memory, uint32_t address, uint64_t count, const char* what) {
    require_span(memory, address, count * sizeof(T), what);
    range_ = {address, static_cast<uint32_t>(address + count * sizeof(T))};  // in SRAM: checked above
    const std::span<const uint8_t> bytes = memory.span(address, static_cast<uint32_t>(count * sizeof(T)));
    if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(T) == 0) {
      view_ = {reinterpret_cast<const T*>(bytes.data()), count};
    } else {
      copy_.resize(count);
      std::memcpy(copy_.data(), bytes.data(), bytes.size());
      view_ = copy_;
    }
  }
  InputArray(const InputArray&) = delete;
  InputArray& operator=(const InputArray&) = delete;
  const T* data() const { return view_.data(); }
  size_t size() const { return view_.size(); }
  const T& operator[](size_t i) const { return view_[i]; }
  auto begin() const { return view_.begin(); }
  auto end() const { return view_.end(); }
  // Where the input lies in SRAM, for an OutputArray to keep apart from.
  arch::SramRange range() const { return range_; }

 private:
  arch::SramRange range_;
  std::vector<T> copy_;
  std::span<const T> view_;
};

// A kernel output computed in place in SRAM when it overlaps none of the kernel's inputs and is
// aligned for T; otherwise computed into a buffer that commit() writes once every input has been
// read. SRAM ends with the same bytes either way; the in-place form saves a buffer and a copy of
// every output. The kernel must write every element.
template <typename T>
class OutputArray {
 public:
  OutputArray(Sram& memory, uint32_t address, uint64_t count, std::span<const arch::SramRange> inputs, const char* what)
      : memory_(memory), address_(address) {
    require_span(memory, address, count * sizeof(T), what);
    const auto bytes_out = static_cast<uint32_t>(count * sizeof(T));  // in SRAM: checked above
    const arch::SramRange range{address, address + bytes_out};
    const bool apart =
        std::none_of(inputs.begin(), inputs.end(), [&](const arch::SramRange& in) { return in.overlaps(range); });
    const std::span<uint8_t> bytes = memory.mutable_span(address, bytes_out);
    if (apart && reinterpret_cast<uintptr_t>(bytes.data()) % alignof(T) == 0) {
      data_ = reinterpret_cast<T*>(bytes.data());
    } else {
      buffer_.resize(count);
      data_ = buffer_.data();
    }
  }
  OutputArray(const OutputArray&) = delete;
  OutputArray& operator=(const OutputArray&) = delete;
  T* data() { return data_; }
  // Writes the buffer, when there is one, into SRAM.
  void commit() {
    if (!buffer_.empty()) {
      memory_.write(address_, static_cast<uint32_t>(buffer_.size() * sizeof(T)),
                    reinterpret_cast<const uint8_t*>(buffer_.data()));
    }
  }

 private:
  Sram& memory_;
  uint32_t address_;
  std::vector<T> buffer_;
  T* data_ = nullptr;
};

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
