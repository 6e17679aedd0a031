#include "io/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/errors.hpp"

namespace lockstep::arch {

int open_regular_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw InputError(path + ": cannot open: " + why);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw InputError(path + ": not a regular file");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

bool regular_file_exists(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return false;
  if (!S_ISREG(info.st_mode)) throw InputError(path + ": not a regular file");
  return true;
}

std::string read_regular_file(const std::string& path, uint64_t max_bytes) {
  const int fd = open_regular_file(path);
  std::string bytes;
  try {
    struct stat info {};
    if (::fstat(fd, &info) != 0) throw InputError(path + ": cannot read: " + std::strerror(errno));
    const auto size = static_cast<uint64_t>(info.st_size);
    if (size > max_bytes) {
      throw InputError(path + ": " + std::to_string(size) + " bytes, more than the limit of " +
                       std::to_string(max_bytes));
    }
    bytes.resize(size);
    size_t done = 0;
    // Read what stat promised; a file that grows meanwhile is read up to that size, one that
    // shrinks ends early.
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw InputError(path + ": cannot read: " + std::strerror(errno));
      }
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    bytes.resize(done);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return bytes;
}

}  // namespace lockstep::arch
