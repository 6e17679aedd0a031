#pragma once
// Whole-file access for the binary formats (package, capture): a read-only memory mapping
// so a large file opens without being copied, and an atomic write (temp name + rename) so
// a reader never sees half a file.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

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
  std::string_view view() const {
    return {reinterpret_cast<const char*>(data_), size_};
  }

 private:
  void release() noexcept;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Writes `bytes` to "<path>.tmp-<pid>" in the same directory, flushes it, then renames it
// over `path`. InputError "path: cannot write: reason" on failure (the temp file is removed).
void write_file_atomically(const std::string& path, std::string_view bytes);

// The same for output written in pieces: `write` gets the open descriptor and writes all of
// it, throwing std::exception (its what() the reason) on failure.
void write_file_atomically(const std::string& path, const std::function<void(int fd)>& write);

}  // namespace lockstep::arch
