// The temporaries a killed write leaves ("PATH.tmp-XXXXXX", made by the atomic writer and
// by staged folders) are removed by the next write of the same output, and nothing else is:
// not a near-miss name, not another output's temporary, not one a live writer holds.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "io/atomic_file.hpp"
#include "io/staged_directory.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// Near misses of out.bin's temporaries, which must survive every sweep.
const std::set<std::string> kNearMisses = {
    "out.bin.tmp-AbC12",    // five characters
    "out.bin.tmp-AbC1234",  // seven
    "out.bin.tmp-AbC12_",   // not a letter or digit
    "out.bin.tmp_AbC123",   // not ".tmp-"
    "out.bin.TMP-AbC123",   // case matters
    "xout.bin.tmp-AbC123",  // another output's
    "out.bi.tmp-AbC123",    // another output's
    "out.bin",              // the output itself
};

void plant(const std::string& dir, const std::set<std::string>& names) {
  for (const auto& name : names) testing::write_file(dir + "/" + name, "left by a killed write\n");
}

TEST(Temporaries, TheNameIsExactlyBaseDotTmpDashSixLettersOrDigits) {
  EXPECT_TRUE(is_temporary_name("out.bin.tmp-AbC123", "out.bin"));
  EXPECT_TRUE(is_temporary_name("out.bin.tmp-zzzzzz", "out.bin"));
  EXPECT_TRUE(is_temporary_name("out.bin.tmp-000000", "out.bin"));
  for (const auto& name : kNearMisses) EXPECT_FALSE(is_temporary_name(name, "out.bin")) << name;
  EXPECT_FALSE(is_temporary_name(".tmp-AbC123", ""));
}

TEST(Temporaries, AWriteRemovesItsOwnStaleTemporariesAndNothingElse) {
  const std::string dir = testing::temp_dir("temporaries-write");
  plant(dir, kNearMisses);
  plant(dir, {"out.bin.tmp-AbC123", "out.bin.tmp-x1Y2z3"});
  std::filesystem::create_directory(dir + "/out.bin.tmp-Folder");                  // not a file: kept
  std::filesystem::create_symlink(dir + "/out.bin", dir + "/out.bin.tmp-SymLnk");  // kept
  write_file_atomically(dir + "/out.bin", "new");
  std::set<std::string> expected = kNearMisses;
  expected.insert({"out.bin.tmp-Folder", "out.bin.tmp-SymLnk"});
  EXPECT_EQ(names_in(dir), expected);
  EXPECT_EQ(testing::read_file(dir + "/out.bin"), "new");
}

// A temporary that a writer holds (its flock) is a write in progress, not a leftover.
TEST(Temporaries, ATemporaryAWriterHoldsIsLeftAlone) {
  const std::string dir = testing::temp_dir("temporaries-live");
  const std::string live = dir + "/out.bin.tmp-Live01";
  testing::write_file(live, "being written");
  const int fd = ::open(live.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(hold_new_temporary(fd, live));
  remove_stale_temporaries(dir + "/out.bin");
  EXPECT_TRUE(std::filesystem::exists(live));
  ::close(fd);
  remove_stale_temporaries(dir + "/out.bin");
  EXPECT_FALSE(std::filesystem::exists(live));
}

// `sweep --resume DIR`: every stale NAME.tmp-XXXXXX file in the folder, whatever NAME.
TEST(Temporaries, AFolderSweepRemovesEveryNamesTemporaries) {
  const std::string dir = testing::temp_dir("temporaries-folder");
  plant(dir, {"out.bin.tmp_AbC123", "out.bin.tmp-AbC12", "index.html.tmp-1234567", "keep.txt"});
  plant(dir, {"results.csv.tmp-AbC123", "index.html.tmp-x1Y2z3", "phase_3.png.tmp-QQQQQQ"});
  std::filesystem::create_directory(dir + "/sub.tmp-Folder");
  remove_stale_temporaries_in(dir);
  EXPECT_EQ(names_in(dir), (std::set<std::string>{"out.bin.tmp_AbC123", "out.bin.tmp-AbC12", "index.html.tmp-1234567",
                                                  "keep.txt", "sub.tmp-Folder"}));
}

// A staged folder killed before its rename leaves DIR.tmp-XXXXXX: the next one removes it.
TEST(Temporaries, AStagedFolderRemovesStaleStagedFolders) {
  const std::string dir = testing::temp_dir("temporaries-staged");
  const std::string out = dir + "/report";
  std::filesystem::create_directories(out + ".tmp-AbC123/inner");
  testing::write_file(out + ".tmp-AbC123/inner/result.json", "{}");
  std::filesystem::create_directories(out + ".tmp-AbC12");           // near miss: kept
  testing::write_file(out + ".tmp-Zz9Zz9", "a file, not a folder");  // other kind: kept
  {
    StagedDirectory staged(out, "-o");
    testing::write_file(staged.file("a.txt"), "a");
    // The live one is held: another sweep leaves it.
    remove_stale_temporaries(out, TemporaryKind::Folder);
    EXPECT_TRUE(std::filesystem::exists(staged.file("a.txt")));
    staged.commit();
  }
  EXPECT_EQ(names_in(dir), (std::set<std::string>{"report", "report.tmp-AbC12", "report.tmp-Zz9Zz9"}));
  EXPECT_EQ(testing::read_file(out + "/a.txt"), "a");
}

}  // namespace
}  // namespace lockstep::arch
