#include "replay/sweep_journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "io/errors.hpp"
#include "io/mapped_file.hpp"
#include "io/report_files.hpp"

namespace lockstep::replay {
namespace {

constexpr std::string_view kMagic = "lockstep-sweep-journal 1 ";

std::string reason() { return std::strerror(errno); }

// A decimal count; false on anything else.
bool parse_number(std::string_view text, size_t& value) {
  if (text.empty() || text.size() > 19) return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<size_t>(c - '0');
  }
  return true;
}

}  // namespace

std::string SweepJournal::read_identity(const std::string& dir) {
  const std::string path = join_path(dir, "points.journal");
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    throw InputError(path + ": no sweep to resume here (no journal: the sweep finished, or never "
                     "started in this folder)");
  }
  const arch::MappedFile file(path);
  const std::string_view text = file.view();
  const size_t eol = text.find('\n');
  if (text.compare(0, kMagic.size(), kMagic) != 0 || eol == std::string::npos) {
    throw InputError(path + ": not a sweep journal (bad header)");
  }
  return std::string(text.substr(kMagic.size(), eol - kMagic.size()));
}

SweepJournal::SweepJournal(const std::string& dir, const std::string& identity, bool resume,
                           size_t plan_size)
    : path_(join_path(dir, "points.journal")) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd_ < 0) throw InputError(path_ + ": cannot open the sweep journal: " + reason());
  struct stat kind {};
  if (::fstat(fd_, &kind) != 0 || !S_ISREG(kind.st_mode)) {
    ::close(fd_);
    throw InputError(path_ + ": not a regular file");
  }
  // A POSIX record lock, not flock: forked worker processes do not inherit it, so workers
  // outliving a killed sweep cannot keep its --resume out.
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (::fcntl(fd_, F_SETLK, &lock) != 0) {
    ::close(fd_);
    throw InputError(path_ + ": another sweep is writing this folder");
  }
  try {
    if (resume) {
      read_existing(identity, plan_size);
    } else {
      struct stat info {};
      if (::fstat(fd_, &info) == 0 && info.st_size > 0) {
        throw InputError(path_ + ": this folder holds an interrupted sweep; finish it with "
                         "`lockstep sweep --resume " + dir + "` or delete the journal");
      }
      write_all(std::string(kMagic) + identity + "\n");
    }
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

SweepJournal::~SweepJournal() {
  if (fd_ >= 0) ::close(fd_);
}

void SweepJournal::read_existing(const std::string& identity, size_t plan_size) {
  struct stat info {};
  if (::fstat(fd_, &info) != 0) throw InputError(path_ + ": cannot read: " + reason());
  std::string text(static_cast<size_t>(info.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::pread(fd_, text.data() + got, text.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw InputError(path_ + ": cannot read: " + reason());
    got += static_cast<size_t>(n);
  }
  if (text.empty()) throw InputError(path_ + ": no sweep to resume (the journal is missing or empty)");
  const std::string header = std::string(kMagic) + identity + "\n";
  if (text.compare(0, kMagic.size(), kMagic) != 0) {
    throw InputError(path_ + ": not a sweep journal (bad header)");
  }
  if (text.compare(0, header.size(), header) != 0) {
    throw InputError(path_ + ": the journal belongs to a different sweep (capture, phases, "
                     "configurations, seed or samples differ); rerun without --resume");
  }
  size_t at = header.size();
  size_t good_end = at;
  while (at < text.size()) {
    const size_t eol = text.find('\n', at);
    if (eol == std::string::npos) break;  // cut short: dropped
    const std::string_view line(text.data() + at, eol - at);
    const size_t space = line.find(' ', 6);
    size_t index = 0, bytes = 0;
    if (line.substr(0, 6) != "point " || space == std::string_view::npos ||
        !parse_number(line.substr(6, space - 6), index) ||
        !parse_number(line.substr(space + 1), bytes) || index >= plan_size) {
      throw InputError(path_ + ": byte " + std::to_string(at) + ": malformed record");
    }
    if (eol + 1 + bytes + 1 > text.size()) break;  // cut short: dropped
    if (text[eol + 1 + bytes] != '\n') {
      throw InputError(path_ + ": byte " + std::to_string(at) + ": malformed record");
    }
    finished_[index] = text.substr(eol + 1, bytes);
    at = eol + 1 + bytes + 1;
    good_end = at;
  }
  // Drop a record cut short so new ones append after the last whole one.
  if (good_end < text.size() && ::ftruncate(fd_, static_cast<off_t>(good_end)) != 0) {
    throw InputError(path_ + ": cannot write: " + reason());
  }
}

void SweepJournal::finish() {
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

void SweepJournal::append(size_t plan_index, const std::string& encoded) {
  write_all("point " + std::to_string(plan_index) + " " + std::to_string(encoded.size()) + "\n" +
            encoded + "\n");
}

void SweepJournal::write_all(const std::string& text) {
  if (::lseek(fd_, 0, SEEK_END) < 0) throw InputError(path_ + ": cannot write: " + reason());
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(path_ + ": cannot write: " + reason());
    done += static_cast<size_t>(n);
  }
  if (::fdatasync(fd_) != 0) throw InputError(path_ + ": cannot write: " + reason());
}

}  // namespace lockstep::replay
