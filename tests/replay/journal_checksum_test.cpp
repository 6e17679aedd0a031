// Every record of a sweep journal carries a checksum, so a record damaged in place (not cut
// short) is dropped and its point runs again, as a record cut short is: a damaged record
// once made every `sweep --resume` exit 3 ("point result: truncated") and never finish.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "io/errors.hpp"
#include "replay/sweep_journal.hpp"
#include "support/test_support.hpp"

namespace lockstep::replay {
namespace {

constexpr size_t kPlan = 8;

std::string journal_of(const std::string& dir) { return dir + "/points.journal"; }

// A journal holding points 0, 1 and 2, left as an interrupted sweep leaves it.
std::string interrupted_journal(const std::string& name) {
  const std::string dir = testing::temp_dir(name);
  SweepJournal journal(dir, "{\"sweep\":1}", false, kPlan);
  journal.append(0, std::string("zero\nwith\0bytes", 15));
  journal.append(1, "the first point's encoded result");
  journal.append(2, "two");
  return dir;
}

// Where record `k` (0 first) starts in the journal's text.
size_t record_start(const std::string& text, size_t k) {
  size_t at = text.find('\n') + 1;
  for (size_t i = 0; i < k; ++i) at = text.find("\npoint ", at) + 1;
  return at;
}

void flip(const std::string& path, size_t offset) {
  std::string text = testing::read_file(path);
  ASSERT_LT(offset, text.size());
  text[offset] = static_cast<char>(text[offset] ^ 0x01);
  testing::write_file(path, text);
}

std::map<size_t, std::string> resumed(const std::string& dir, size_t* dropped = nullptr) {
  SweepJournal journal(dir, "{\"sweep\":1}", true, kPlan);
  if (dropped) *dropped = journal.dropped();
  return journal.finished();
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JournalChecksum, WholeRecordsAreKept) {
  const std::string dir = interrupted_journal("journal-whole");
  size_t dropped = 9;
  const auto points = resumed(dir, &dropped);
  EXPECT_EQ(dropped, 0u);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points.at(0), std::string("zero\nwith\0bytes", 15));
  EXPECT_EQ(points.at(1), "the first point's encoded result");
  const std::string text = testing::read_file(journal_of(dir));
  EXPECT_EQ(text.rfind("lockstep-sweep-journal 2 ", 0), 0u) << text;
  EXPECT_NE(text.find("\npoint 2 3 "), std::string::npos) << text;  // index, bytes, checksum
}

// One byte flipped anywhere in record 1 (its first line or its bytes): it alone is dropped.
TEST(JournalChecksum, ARecordDamagedInPlaceIsDroppedAndTheRestKept) {
  const std::string base = interrupted_journal("journal-damaged");
  const std::string text = testing::read_file(journal_of(base));
  const size_t start = record_start(text, 1), next = record_start(text, 2);
  for (size_t offset = start; offset < next; ++offset) {
    const std::string dir = testing::temp_dir("journal-damaged-" + std::to_string(offset));
    std::filesystem::copy_file(journal_of(base), journal_of(dir));
    flip(journal_of(dir), offset);
    size_t dropped = 0;
    const auto points = resumed(dir, &dropped);
    EXPECT_FALSE(points.count(1)) << "byte " << offset - start << " of the record";
    EXPECT_TRUE(points.count(0) && points.count(2)) << "byte " << offset - start;
    EXPECT_LE(points.size(), 2u) << "byte " << offset - start;  // never taken for another point
    EXPECT_GE(dropped, 1u);
  }
}

// The point runs again and is appended; the resumed journal then holds every point.
TEST(JournalChecksum, TheRerunPointIsAppendedAfterTheDamagedRecord) {
  const std::string dir = interrupted_journal("journal-rerun");
  const std::string text = testing::read_file(journal_of(dir));
  flip(journal_of(dir), (record_start(text, 1) + record_start(text, 2)) / 2);
  {
    SweepJournal journal(dir, "{\"sweep\":1}", true, kPlan);
    EXPECT_EQ(journal.dropped(), 1u);
    journal.append(1, "run again");
  }
  const auto points = resumed(dir);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points.at(1), "run again");
}

// A record cut short at the end is dropped and cut off, so the next record follows the last
// whole one.
TEST(JournalChecksum, ARecordCutShortIsDroppedAndCutOff) {
  const std::string dir = interrupted_journal("journal-cut");
  const std::string text = testing::read_file(journal_of(dir));
  std::filesystem::resize_file(journal_of(dir), text.size() - 2);
  {
    SweepJournal journal(dir, "{\"sweep\":1}", true, kPlan);
    EXPECT_EQ(journal.dropped(), 1u);
    EXPECT_EQ(journal.finished().size(), 2u);
    journal.append(2, "two");
  }
  EXPECT_EQ(testing::read_file(journal_of(dir)), text);
}

// The first line holds the sweep's arguments: damaged, they are lost, and resuming says so.
TEST(JournalChecksum, ADamagedFirstLineIsRefusedWithWhatToDo) {
  const std::string dir = interrupted_journal("journal-header");
  flip(journal_of(dir), std::string("lockstep-sweep-journal 2 0123456789abcdef {\"sw").size());
  const std::string why = message_of([&] { SweepJournal::read_identity(dir); });
  EXPECT_NE(why.find("first line is damaged"), std::string::npos) << why;
  EXPECT_NE(why.find("delete the journal"), std::string::npos) << why;
  EXPECT_NE(message_of([&] { resumed(dir); }).find("damaged"), std::string::npos);
}

// Journals written before the checksums (version 1) are still resumed, and appended to in
// their own format.
TEST(JournalChecksum, AVersionOneJournalIsStillResumed) {
  const std::string dir = testing::temp_dir("journal-v1");
  testing::write_file(journal_of(dir), "lockstep-sweep-journal 1 {\"sweep\":1}\npoint 0 3\nabc\npoint 5 2\nxy\n");
  EXPECT_EQ(SweepJournal::read_identity(dir), "{\"sweep\":1}");
  {
    SweepJournal journal(dir, "{\"sweep\":1}", true, kPlan);
    EXPECT_EQ(journal.finished(), (std::map<size_t, std::string>{{0, "abc"}, {5, "xy"}}));
    journal.append(2, "z");
  }
  EXPECT_EQ(testing::read_file(journal_of(dir)),
            "lockstep-sweep-journal 1 {\"sweep\":1}\npoint 0 3\nabc\npoint 5 2\nxy\npoint 2 1\nz\n");
  testing::write_file(journal_of(dir), "lockstep-sweep-journal 7 {\"sweep\":1}\n");
  EXPECT_NE(message_of([&] { SweepJournal::read_identity(dir); }).find("unknown version"), std::string::npos);
}

TEST(JournalChecksum, AnotherSweepsJournalIsStillRefused) {
  const std::string dir = interrupted_journal("journal-other");
  const std::string why = message_of([&] { SweepJournal journal(dir, "{\"sweep\":2}", true, kPlan); });
  EXPECT_NE(why.find("different sweep"), std::string::npos) << why;
}

}  // namespace
}  // namespace lockstep::replay
