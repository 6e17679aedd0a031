#include "replay/sweep_journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "formats/package.hpp"
#include "io/errors.hpp"
#include "io/mapped_file.hpp"
#include "io/report_files.hpp"

namespace lockstep::replay {
namespace {

constexpr std::string_view kMagic = "lockstep-sweep-journal ";
constexpr std::string_view kRecord = "point ";

std::string reason() { return std::strerror(errno); }

// FNV-1a 64 of `text` continuing from `seed`, as 16 lower-case hex digits.
uint64_t fnv(std::string_view text, uint64_t seed = 0xcbf29ce484222325ull) {
  return arch::fnv1a64(reinterpret_cast<const uint8_t*>(text.data()), text.size(), seed);
}
std::string hex16(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// A record's first line without its checksum, and the checksum of that line and the bytes.
std::string record_head(size_t index, size_t bytes) {
  return std::string(kRecord) + std::to_string(index) + " " + std::to_string(bytes);
}
std::string record_checksum(std::string_view head, std::string_view encoded) { return hex16(fnv(encoded, fnv(head))); }

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

struct Header {
  int version = 0;
  std::string identity;
  size_t end = 0;  // where the first record starts
};

// The journal's first line: version 1 "<magic>1 <identity>", version 2 "<magic>2 <checksum>
// <identity>". InputError when it is not a journal's, of an unknown version, or damaged.
Header parse_header(std::string_view text, const std::string& path) {
  const size_t eol = text.find('\n');
  if (text.substr(0, kMagic.size()) != kMagic || eol == std::string_view::npos) {
    throw InputError(path + ": not a sweep journal (bad header)");
  }
  const std::string_view line = text.substr(kMagic.size(), eol - kMagic.size());
  Header header;
  header.end = eol + 1;
  if (line.substr(0, 2) == "1 ") {
    header.version = 1;
    header.identity = line.substr(2);
    return header;
  }
  if (line.substr(0, 2) != "2 ") {
    throw InputError(path + ": a sweep journal of an unknown version ('" + std::string(line.substr(0, line.find(' '))) +
                     "'; this Lockstep reads 1 and 2): finish it with the Lockstep that "
                     "started it, or, if the first line is damaged, delete the journal and "
                     "run the sweep again");
  }
  header.version = 2;
  header.identity = line.size() > 19 ? line.substr(19) : std::string_view();
  if (line.size() <= 19 || line[18] != ' ' || line.substr(2, 16) != hex16(fnv(header.identity))) {
    throw InputError(path +
                     ": the journal's first line is damaged (its checksum does not "
                     "match), so the sweep's arguments are lost; delete the journal and run the "
                     "sweep again");
  }
  return header;
}

struct Record {
  size_t index = 0;
  std::string_view encoded;
  size_t end = 0;  // where the next record starts
};

// The record at `at`, if it is whole, names a point of the plan and (version 2) its checksum
// matches; false for one cut short or damaged.
bool parse_record(std::string_view text, size_t at, int version, size_t plan_size, Record& record) {
  const size_t eol = text.find('\n', at);
  if (eol == std::string_view::npos) return false;
  std::string_view line = text.substr(at, eol - at);
  if (line.substr(0, kRecord.size()) != kRecord) return false;
  std::string_view checksum;
  if (version >= 2) {
    const size_t last = line.rfind(' ');
    checksum = line.substr(last + 1);
    line = line.substr(0, last);
  }
  const size_t space = line.find(' ', kRecord.size());
  size_t bytes = 0;
  if (space == std::string_view::npos ||
      !parse_number(line.substr(kRecord.size(), space - kRecord.size()), record.index) ||
      !parse_number(line.substr(space + 1), bytes) || record.index >= plan_size) {
    return false;
  }
  const size_t start = eol + 1;
  if (bytes >= text.size() - start || text[start + bytes] != '\n') return false;
  record.encoded = text.substr(start, bytes);
  record.end = start + bytes + 1;
  return version < 2 || checksum == record_checksum(line, record.encoded);
}

}  // namespace

std::string SweepJournal::read_identity(const std::string& dir) {
  const std::string path = join_path(dir, "points.journal");
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    throw InputError(path +
                     ": no sweep to resume here (no journal: the sweep finished, or never "
                     "started in this folder)");
  }
  const arch::MappedFile file(path);
  return parse_header(file.view(), path).identity;
}

SweepJournal::SweepJournal(const std::string& dir, const std::string& identity, bool resume, size_t plan_size)
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
        throw InputError(path_ +
                         ": this folder holds an interrupted sweep; finish it with "
                         "`lockstep sweep --resume " +
                         dir + "` or delete the journal");
      }
      write_all(std::string(kMagic) + "2 " + hex16(fnv(identity)) + " " + identity + "\n");
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
  const Header header = parse_header(text, path_);
  if (header.identity != identity) {
    throw InputError(path_ +
                     ": the journal belongs to a different sweep (capture, phases, "
                     "configurations, seed or samples differ); rerun without --resume");
  }
  version_ = header.version;
  read_records(text, header.end, plan_size);
}

// Keeps every whole record whose checksum matches. One cut short or damaged is dropped
// (its point runs again) and reading goes on at the next record; the bytes after the last
// good record are cut off, so new records follow it.
void SweepJournal::read_records(const std::string& text, size_t at, size_t plan_size) {
  size_t good_end = at;
  bool dropping = false;
  while (at < text.size()) {
    Record record;
    if (parse_record(text, at, version_, plan_size, record)) {
      finished_[record.index] = std::string(record.encoded);
      at = good_end = record.end;
      dropping = false;
      continue;
    }
    // The next "point " (a damaged record may have lost the newline before it); a false
    // start inside a record's bytes fails its checksum.
    if (!dropping) ++dropped_;
    dropping = true;
    at = text.find(kRecord, at + 1);
    if (at == std::string::npos) break;
  }
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
  const std::string head = record_head(plan_index, encoded.size());
  const std::string checksum = version_ >= 2 ? " " + record_checksum(head, encoded) : "";
  write_all(head + checksum + "\n" + encoded + "\n");
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
