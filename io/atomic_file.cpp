#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "io/errors.hpp"

namespace lockstep::arch {

namespace {

std::string reason() { return std::strerror(errno); }

// mkstemp creates files 0600; outputs get what open(2) would give them under the umask.
mode_t default_file_mode() {
  static const mode_t mode = [] {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return static_cast<mode_t>(0666 & ~mask);
  }();
  return mode;
}

std::string parent_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// Why `path` must not be replaced: an existing entry that is not a regular file (a symbolic
// link, a FIFO, a device such as /dev/stdout) would be swapped for a file by the rename.
// Empty when it does not exist or is a regular file.
std::string not_a_regular_file(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || S_ISREG(info.st_mode)) return "";
  if (S_ISDIR(info.st_mode)) return "it is a directory";
  if (S_ISLNK(info.st_mode)) return "it is a symbolic link (give the path it points to)";
  return "it exists and is not a regular file (a FIFO, socket or device)";
}

}  // namespace

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
  if (const std::string why = not_a_regular_file(path); !why.empty()) {
    throw InputError(path + ": cannot write: " + why);
  }
  std::string temp = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) throw InputError(path + ": cannot write: " + reason());
  auto fail = [&](const std::string& why) {
    ::unlink(temp.c_str());
    throw InputError(path + ": cannot write: " + why);
  };
  try {
    if (::fchmod(fd, default_file_mode()) != 0) throw std::runtime_error(reason());
    write(fd);
  } catch (const std::exception& error) {
    ::close(fd);
    fail(error.what());
  }
  const bool synced = ::fsync(fd) == 0;
  const std::string sync_why = synced ? std::string() : reason();
  if (::close(fd) != 0 || !synced) fail(synced ? reason() : sync_why);
  if (std::rename(temp.c_str(), path.c_str()) != 0) fail(reason());
}

void check_output_file(const std::string& path, const std::string& option) {
  if (path.empty()) throw InputError(option + ": the output path is empty");
  if (const std::string why = not_a_regular_file(path); !why.empty()) {
    throw InputError(path + ": cannot write " + option + ": " + why);
  }
  struct stat info {};
  const std::string dir = parent_of(path);
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw InputError(path + ": cannot write " + option + ": the folder '" + dir + "' does not exist");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw InputError(path + ": cannot write " + option + ": " + reason());
  }
}

void check_output_directory(const std::string& dir, const std::string& option) {
  if (dir.empty()) throw InputError(option + ": the output folder is empty");
  // The folder itself, or the nearest existing folder above it, which it will be made in.
  std::filesystem::path existing(dir);
  std::error_code error;
  while (!existing.empty() && !std::filesystem::exists(existing, error)) existing = existing.parent_path();
  if (existing.empty()) existing = ".";
  struct stat info {};
  if (::stat(existing.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw InputError(dir + ": cannot write " + option + ": '" + existing.string() + "' is not a folder");
  }
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    throw InputError(dir + ": cannot write " + option + ": '" + existing.string() + "': " + reason());
  }
}

void create_output_directory(const std::string& dir, const std::string& option) {
  check_output_directory(dir, option);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw InputError(dir + ": cannot create " + option + ": " + error.message());
}

void refuse_overwriting_input(const std::string& output, const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    std::error_code error;
    if (output == input || std::filesystem::equivalent(output, input, error)) {
      throw InputError(output + ": the output is the input '" + input +
                       "'; choose another output path");
    }
  }
}

}  // namespace lockstep::arch
