#include "io/staged_directory.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "io/atomic_file.hpp"
#include "io/errors.hpp"

namespace lockstep::arch {

namespace {

std::string without_trailing_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

// The folder DIR will be made in ("." for a bare name).
std::string parent_of(const std::string& dir) {
  const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// mkdtemp "DIR.tmp-XXXXXX" and the writer's hold on it (`temp` its name); another name when
// a sweep took the first one between the two. InputError when none can be made.
int make_held_folder(const std::string& dir, const std::string& option, std::string& temp) {
  const auto fail = [&](const std::string& why) -> int {
    throw InputError(dir + ": cannot create " + option + ": " + why);
  };
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp = dir + ".tmp-XXXXXX";
    if (::mkdtemp(temp.data()) == nullptr) return fail(std::strerror(errno));
    const int fd = ::open(temp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno != ENOENT) {
      const std::string why = std::strerror(errno);
      ::rmdir(temp.c_str());
      return fail(why);
    }
    if (fd >= 0 && hold_new_temporary(fd, temp)) return fd;
    if (fd >= 0) ::close(fd);  // the sweep that holds it removes it: make another
  }
  return fail("every temporary folder made was removed before it was used");
}

}  // namespace

void check_staged_directory(const std::string& dir, const std::string& option) {
  if (dir.empty()) throw InputError(option + ": the output folder is empty");
  const std::filesystem::path path(without_trailing_slashes(dir));
  std::error_code error;
  const auto status = std::filesystem::symlink_status(path, error);
  if (std::filesystem::exists(status)) {
    if (!std::filesystem::is_directory(status)) {
      throw InputError(dir + ": cannot write " + option + ": it exists and is not a folder");
    }
    if (!std::filesystem::is_empty(path, error) || error) {
      throw InputError(dir + ": cannot write " + option +
                       ": the folder exists and is not empty; remove it or choose another");
    }
  }
  const std::string parent = parent_of(path.string());
  struct stat info {};
  if (::stat(parent.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw InputError(dir + ": cannot write " + option + ": the folder '" + parent + "' does not exist");
  }
  check_output_directory(parent, option);  // writable
}

StagedDirectory::StagedDirectory(std::string dir, std::string option)
    : dir_(without_trailing_slashes(std::move(dir))), option_(std::move(option)) {
  check_staged_directory(dir_, option_);
  remove_stale_temporaries(dir_, TemporaryKind::Folder);
  hold_ = make_held_folder(dir_, option_, temp_);
}

StagedDirectory::~StagedDirectory() {
  if (!committed_ && !temp_.empty()) {
    std::error_code error;
    std::filesystem::remove_all(temp_, error);
  }
  if (hold_ >= 0) ::close(hold_);
}

std::string StagedDirectory::file(const std::string& name) const { return temp_ + "/" + name; }

void StagedDirectory::commit() {
  // mkdtemp makes the folder 0700; give it what mkdir(2) would under the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(temp_.c_str(), 0777 & ~mask);
  if (std::rename(temp_.c_str(), dir_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    throw InputError(dir_ + ": cannot write " + option_ + ": " + why);
  }
  committed_ = true;
  ::close(hold_);  // renamed while held, so no sweep took it for a killed command's leftover
  hold_ = -1;
}

}  // namespace lockstep::arch
