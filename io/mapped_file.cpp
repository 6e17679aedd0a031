#include "io/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "io/errors.hpp"
#include "io/input_file.hpp"

namespace lockstep::arch {

constexpr uintptr_t kPage = 4096;  // the smallest page, which a first write faults in

void populate_for_write(void* data, size_t bytes) {
#if defined(MADV_POPULATE_WRITE)
  const uintptr_t first = reinterpret_cast<uintptr_t>(data) / kPage * kPage;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes + kPage - 1) / kPage * kPage;
  if (bytes != 0 && end - first >= 2 * kPage) {
    (void)::madvise(reinterpret_cast<void*>(first), end - first, MADV_POPULATE_WRITE);
  }
#else
  (void)data;
  (void)bytes;
#endif
}

void populate_for_write(std::vector<std::pair<uintptr_t, uintptr_t>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 0; i < ranges.size();) {
    const uintptr_t begin = ranges[i].first;
    uintptr_t end = ranges[i].second;
    for (++i; i < ranges.size() && ranges[i].first <= end + kPage; ++i) end = std::max(end, ranges[i].second);
    populate_for_write(reinterpret_cast<void*>(begin), end - begin);
  }
}

std::vector<uint8_t> pages_in_use(const void* data, size_t bytes) {
  constexpr uint64_t kPresent = uint64_t{1} << 63, kSwapped = uint64_t{1} << 62;
  const size_t pages = (bytes + kPage - 1) / kPage;
  const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::vector<uint8_t> in_use(pages, 0);
  std::vector<uint64_t> entries(std::min<size_t>(pages, 1 << 15));
  const auto first = static_cast<off_t>(reinterpret_cast<uintptr_t>(data) / kPage * sizeof(uint64_t));
  for (size_t done = 0; done < pages;) {
    const size_t n = std::min(entries.size(), pages - done);
    const ssize_t got =
        ::pread(fd, entries.data(), n * sizeof(uint64_t), first + static_cast<off_t>(done * sizeof(uint64_t)));
    if (got != static_cast<ssize_t>(n * sizeof(uint64_t))) {
      ::close(fd);
      return {};
    }
    for (size_t i = 0; i < n; ++i) in_use[done + i] = (entries[i] & (kPresent | kSwapped)) != 0;
    done += n;
  }
  ::close(fd);
  return in_use;
}

namespace {

std::string reason() { return std::strerror(errno); }

}  // namespace

MappedFile::MappedFile(const std::string& path) {
  const int fd = open_regular_file(path);  // refuses devices and FIFOs before reading
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const std::string why = reason();
    ::close(fd);
    throw InputError(path + ": cannot open: " + why);
  }
  size_ = static_cast<size_t>(info.st_size);
  if (size_ > 0) {
    void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapped == MAP_FAILED) {
      const std::string why = reason();
      ::close(fd);
      throw InputError(path + ": cannot map: " + why);
    }
    data_ = static_cast<const uint8_t*>(mapped);
  }
  ::close(fd);  // the mapping stays valid without the descriptor
}

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::release() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace lockstep::arch
