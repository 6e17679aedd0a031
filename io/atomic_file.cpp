#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

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

// True when `path` (not followed) is the file or folder open as `fd`.
bool names_open_file(const std::string& path, int fd) {
  struct stat named {
  }, held{};
  if (::lstat(path.c_str(), &named) != 0 || ::fstat(fd, &held) != 0) return false;
  return named.st_dev == held.st_dev && named.st_ino == held.st_ino;
}

// mkstemp "<path>.tmp-XXXXXX" and the writer's hold on it (`temp` its name); another name
// when a sweep took the first one between the two. InputError when none can be made.
int make_held_temporary(const std::string& path, std::string& temp) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp = path + ".tmp-XXXXXX";
    const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (fd < 0) throw InputError(path + ": cannot write: " + reason());
    if (hold_new_temporary(fd, temp)) return fd;
    ::close(fd);  // the sweep that holds it removes it
  }
  throw InputError(path + ": cannot write: every temporary made was removed before it was written");
}

// Calls `visit(dir, name)` for each entry of `dir`; nothing when it cannot be read.
void for_each_entry(const std::string& dir, const std::function<void(const std::string&, const std::string&)>& visit) {
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error), end;
  std::vector<std::string> names;
  for (; !error && it != end; it.increment(error)) names.push_back(it->path().filename().string());
  for (const std::string& name : names) visit(dir, name);
}

// Removes the temporary `path` if it is of `kind` and no writer holds it: the sweep takes
// the flock itself (so a writer starting on it makes another) and checks the name is still
// that file before removing it.
void remove_if_stale(const std::string& path, TemporaryKind kind) {
  const bool folder = kind == TemporaryKind::Folder;
  const int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | (folder ? O_DIRECTORY : 0);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return;
  struct stat info {};
  const bool right_kind = ::fstat(fd, &info) == 0 && (folder ? S_ISDIR(info.st_mode) : S_ISREG(info.st_mode));
  if (right_kind && ::flock(fd, LOCK_EX | LOCK_NB) == 0 && names_open_file(path, fd)) {
    std::error_code error;
    if (folder) {
      std::filesystem::remove_all(path, error);
    } else {
      ::unlink(path.c_str());
    }
  }
  ::close(fd);
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
  remove_stale_temporaries(path);
  std::string temp;
  const int fd = make_held_temporary(path, temp);
  auto fail = [&](const std::string& why) {
    ::unlink(temp.c_str());
    ::close(fd);
    throw InputError(path + ": cannot write: " + why);
  };
  try {
    if (::fchmod(fd, default_file_mode()) != 0) throw std::runtime_error(reason());
    write(fd);
  } catch (const std::exception& error) {
    fail(error.what());
  }
  if (::fsync(fd) != 0) fail(reason());
  // Renamed while still held, so no sweep takes it for a killed write's leftover.
  if (std::rename(temp.c_str(), path.c_str()) != 0) fail(reason());
  ::close(fd);  // its data is on disk already (fsync)
}

bool is_temporary_name(std::string_view name, std::string_view base) {
  constexpr std::string_view kInfix = ".tmp-";
  if (base.empty() || name.size() != base.size() + kInfix.size() + 6) return false;
  if (name.substr(0, base.size()) != base || name.substr(base.size(), kInfix.size()) != kInfix) {
    return false;
  }
  for (char c : name.substr(base.size() + kInfix.size())) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum) return false;
  }
  return true;
}

bool hold_new_temporary(int fd, const std::string& temp) {
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) return false;
  return names_open_file(temp, fd);
}

void remove_stale_temporaries(const std::string& path, TemporaryKind kind) {
  const std::filesystem::path target(path);
  const std::string base = target.filename().string();
  if (base.empty()) return;
  for_each_entry(parent_of(path), [&](const std::string& dir, const std::string& name) {
    if (is_temporary_name(name, base)) remove_if_stale(dir + "/" + name, kind);
  });
}

void remove_stale_temporaries_in(const std::string& dir) {
  constexpr size_t kSuffix = 11;  // ".tmp-XXXXXX"
  for_each_entry(dir, [&](const std::string& folder, const std::string& name) {
    if (name.size() <= kSuffix) return;
    if (is_temporary_name(name, std::string_view(name).substr(0, name.size() - kSuffix))) {
      remove_if_stale(folder + "/" + name, TemporaryKind::File);
    }
  });
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
  // The folder itself, or the folder it will be made in: like mkdir, never mkdir -p, so a
  // folder output follows the rule of a file output (the folder above must exist).
  std::error_code error;
  const bool exists = std::filesystem::exists(dir, error);
  const std::string folder = exists ? dir : parent_of(dir);
  struct stat info {};
  if (::stat(folder.c_str(), &info) != 0) {
    throw InputError(dir + ": cannot write " + option + ": the folder '" + folder + "' does not exist");
  }
  if (!S_ISDIR(info.st_mode)) {
    throw InputError(dir + ": cannot write " + option + ": '" + folder + "' is not a folder");
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    throw InputError(dir + ": cannot write " + option + ": '" + folder + "': " + reason());
  }
}

void create_output_directory(const std::string& dir, const std::string& option) {
  check_output_directory(dir, option);
  std::error_code error;
  std::filesystem::create_directory(dir, error);
  if (error) throw InputError(dir + ": cannot create " + option + ": " + error.message());
}

void refuse_overwriting_input(const std::string& output, const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    std::error_code error;
    if (output == input || std::filesystem::equivalent(output, input, error)) {
      throw InputError(output + ": the output is the input '" + input + "'; choose another output path");
    }
  }
}

}  // namespace lockstep::arch
