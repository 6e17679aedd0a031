#pragma once
// Whole-file access for the binary formats (package, capture): a read-only memory mapping
// so a large file opens without being copied; and fresh memory mapped ahead of a large write.
// Writing files: io/atomic_file.hpp.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lockstep::arch {

// Maps `path` read-only. An empty file maps to data() == nullptr, size() == 0. A missing or
// unreadable file throws InputError "path: cannot open: reason".
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Page-aligned (so 8-byte aligned) unless empty.
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view view() const { return {reinterpret_cast<const char*>(data_), size_}; }

 private:
  void release() noexcept;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Asks the kernel to map the pages of [data, + bytes) before a write that fills them, in one call
// (MADV_POPULATE_WRITE) instead of a fault per 4 KiB page: a fault costs about 10 us on a virtual
// machine measured here, a populated page half of that (docs/performance.md, round eleven).
// Only a hint, for memory about to be written whole (a tile's segment, a vector's reserved
// capacity): a range within one page, and a kernel without the call, are left alone.
void populate_for_write(void* data, size_t bytes);
// The same for several ranges [begin, end) at once, in any order: one call per stretch of
// ranges less than a page apart (the pages between them are mapped too). For writes scattered
// over one memory, such as a receiver's copies (model/exchange_fabric.cpp).
void populate_for_write(std::vector<std::pair<uintptr_t, uintptr_t>> ranges);

// Which 4 KiB pages of [data, + bytes) (data page-aligned) may hold anything but zero: a byte
// each, 1 for a page in memory or in swap, 0 for one the process never wrote or gave back
// (/proc/self/pagemap's present and swapped bits). Empty when the kernel does not say (no /proc,
// or the file refused), so a caller must then assume every page may.
std::vector<uint8_t> pages_in_use(const void* data, size_t bytes);

// Reserves room for `count` elements in `v`, which holds none yet, and maps that room's pages
// ahead of the write that fills it (then `assign`, say). A plain vector's resize writes zeros
// into the mapped pages; a vector with an uninitialising allocator leaves them to the fill.
template <class Vector>
void reserve_populated(Vector& v, size_t count) {
  v.reserve(count);
  populate_for_write(v.data(), count * sizeof(typename Vector::value_type));
}
// The same, then resized to `count`: for a list the caller's tasks fill whole next (with
// arch::UninitializedVector the resize writes nothing, so those tasks touch the pages first).
template <class Vector>
void resize_populated(Vector& v, size_t count) {
  reserve_populated(v, count);
  v.resize(count);
}

}  // namespace lockstep::arch
