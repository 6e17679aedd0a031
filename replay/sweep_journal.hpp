#pragma once
// The append-only record of a sweep's finished points (DIR/points.journal), so that an
// interrupted sweep loses at most the points that were running and `sweep --resume DIR`
// finishes it with files byte-identical to an uninterrupted run. The journal is locked
// while a sweep writes it, so two sweeps into one folder refuse instead of mixing files.
// Format (docs/reports.md "points.journal"), version 2:
//   "lockstep-sweep-journal 2 <checksum> <identity>\n", then per point
//   "point <plan index> <bytes> <checksum>\n" <the encoded PointResult> "\n",
// each checksum FNV-1a 64 as 16 lower-case hex digits: of the identity, and of
// "point <plan index> <bytes>" followed by the encoded bytes. Version 1 (no checksums) is
// still resumed, and appended to in its own format.
// The identity is one line that names the sweep (its arguments and a digest of its capture):
// a resumed sweep must have the same.
#include <cstddef>
#include <map>
#include <string>

namespace lockstep::replay {

class SweepJournal {
 public:
  // The identity line of DIR/points.journal; InputError if there is none, or if its
  // checksum shows it damaged (the sweep's arguments are lost with it).
  static std::string read_identity(const std::string& dir);

  // Starts DIR/points.journal (resume false; refused when one with content is there: the
  // interrupted sweep's work would be lost) or reads the points it holds (resume true; a
  // record cut short by the interruption or damaged in place, its checksum wrong, is
  // dropped, so its point runs again). InputError when another sweep holds the lock, when
  // resuming finds no journal or a journal of a different sweep (another capture, plan,
  // seed or sample count), or when the file cannot be written.
  SweepJournal(const std::string& dir, const std::string& identity, bool resume, size_t plan_size);
  ~SweepJournal();
  SweepJournal(const SweepJournal&) = delete;
  SweepJournal& operator=(const SweepJournal&) = delete;

  // Points finished before this run, by plan index (empty unless resuming).
  const std::map<size_t, std::string>& finished() const { return finished_; }
  // Stretches of records dropped when resuming, cut short or damaged (their points run
  // again): one for each run of bad bytes between good records or at the end.
  size_t dropped() const { return dropped_; }

  // Appends one finished point and flushes it to disk.
  void append(size_t plan_index, const std::string& encoded);

  // The sweep's files are written: removes the journal (its records are in finishing order,
  // which depends on the job count, so it is not left among the byte-identical outputs).
  void finish();

  const std::string& path() const { return path_; }

 private:
  void read_existing(const std::string& identity, size_t plan_size);
  void read_records(const std::string& text, size_t at, size_t plan_size);
  void write_all(const std::string& text);

  std::string path_;
  int fd_ = -1;
  int version_ = 2;  // of the file: a resumed version 1 journal is appended to as version 1
  size_t dropped_ = 0;
  std::map<size_t, std::string> finished_;
};

}  // namespace lockstep::replay
