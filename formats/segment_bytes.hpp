#pragma once
// A Bytes segment's contents: bytes of its own, or a read-only view into a package file's
// mapping that it keeps alive. Reading a model's package copied its 460 MB of segments into
// fresh vectors only for the loader to copy them again into SRAM (docs/performance.md,
// round fifteen); a view is copied once. Any change first makes the bytes its own.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lockstep::arch {

class SegmentBytes {
 public:
  SegmentBytes() = default;
  SegmentBytes(std::vector<uint8_t> owned) : owned_(std::move(owned)) {}  // NOLINT: implicit, as the vector it replaced
  SegmentBytes(std::initializer_list<uint8_t> bytes) : owned_(bytes) {}
  SegmentBytes(const uint8_t* first, const uint8_t* last) : owned_(first, last) {}

  // `bytes`, which stay valid while `keeper` lives (a mapped file, say).
  static SegmentBytes view(std::shared_ptr<const void> keeper, std::span<const uint8_t> bytes) {
    SegmentBytes out;
    out.keeper_ = std::move(keeper);
    out.view_ = bytes;
    return out;
  }

  bool is_view() const { return keeper_ != nullptr; }
  std::span<const uint8_t> span() const { return is_view() ? view_ : std::span<const uint8_t>(owned_); }
  const uint8_t* data() const { return span().data(); }
  size_t size() const { return span().size(); }
  bool empty() const { return size() == 0; }
  const uint8_t* begin() const { return data(); }
  const uint8_t* end() const { return data() + size(); }
  const uint8_t& operator[](size_t i) const { return span()[i]; }
  const uint8_t& at(size_t i) const {
    if (i >= size())
      throw std::out_of_range("segment bytes: index " + std::to_string(i) + " of " + std::to_string(size()));
    return span()[i];
  }
  std::vector<uint8_t> vector() const { return {begin(), end()}; }

  // Changes: on a view, the bytes are copied first and the file let go.
  uint8_t& operator[](size_t i) { return own()[i]; }
  uint8_t& at(size_t i) { return own().at(i); }
  uint8_t* mutable_data() { return own().data(); }
  void assign(size_t n, uint8_t value) { own().assign(n, value); }
  void resize(size_t n, uint8_t value = 0) { own().resize(n, value); }
  void push_back(uint8_t value) { own().push_back(value); }
  void clear() { own().clear(); }

  bool operator==(const SegmentBytes& other) const { return std::ranges::equal(span(), other.span()); }

 private:
  std::vector<uint8_t>& own() {
    if (is_view()) {
      owned_.assign(view_.begin(), view_.end());
      view_ = {};
      keeper_.reset();
    }
    return owned_;
  }

  std::vector<uint8_t> owned_;
  std::shared_ptr<const void> keeper_;  // non-null for a view
  std::span<const uint8_t> view_;
};

}  // namespace lockstep::arch
