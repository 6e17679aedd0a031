#include "arch/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "arch/errors.hpp"
#include "arch/input_file.hpp"

namespace lockstep::arch {

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

void write_file_atomically(const std::string& path, std::string_view bytes) {
  write_file_atomically(path, [&](int fd) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(reason());
      }
      done += static_cast<size_t>(n);
    }
  });
}

void write_file_atomically(const std::string& path, const std::function<void(int fd)>& write) {
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(path + ": cannot write: " + reason());
  try {
    write(fd);
  } catch (const std::exception& error) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw InputError(path + ": cannot write: " + error.what());
  }
  const bool synced = ::fsync(fd) == 0;
  const std::string sync_why = synced ? std::string() : reason();
  if (::close(fd) != 0 || !synced) {
    const std::string why = synced ? reason() : sync_why;
    ::unlink(temp.c_str());
    throw InputError(path + ": cannot write: " + why);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = reason();
    ::unlink(temp.c_str());
    throw InputError(path + ": cannot write: " + why);
  }
}

}  // namespace lockstep::arch
