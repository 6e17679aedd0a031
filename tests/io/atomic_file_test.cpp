// The one writer every output goes through, and the checks run before any work starts.
#include "io/atomic_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <thread>
#include <vector>

#include "io/errors.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

// The message of the InputError `f` throws, or "no error".
template <class F>
std::string message(const F& f) {
  try {
    f();
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

TEST(AtomicFile, ConcurrentWritersOfOnePathLeaveOneWholeFileAndNoTemporaries) {
  const std::string dir = testing::temp_dir("atomic-concurrent");
  const std::string path = dir + "/out.txt";
  std::vector<std::thread> writers;
  for (int w = 0; w < 8; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < 20; ++i) write_file_atomically(path, std::string(4096, static_cast<char>('a' + w)));
    });
  }
  for (auto& t : writers) t.join();
  const std::string text = testing::read_file(path);
  ASSERT_EQ(text.size(), 4096u);
  EXPECT_EQ(text, std::string(4096, text[0]));  // one writer's bytes, never a mix
  EXPECT_EQ(files_in(dir), 1u);
}

TEST(AtomicFile, AFailedWriteLeavesTheOldFileAndNoTemporary) {
  const std::string dir = testing::temp_dir("atomic-fail");
  const std::string path = dir + "/out.txt";
  write_file_atomically(path, "old");
  EXPECT_THROW(write_file_atomically(path, [](int) { throw std::runtime_error("disk full"); }), InputError);
  EXPECT_EQ(testing::read_file(path), "old");
  std::filesystem::create_directories(dir + "/a_folder");
  EXPECT_THROW(write_file_atomically(dir + "/a_folder", "x"), InputError);
  EXPECT_EQ(files_in(dir), 2u);
}

// An output path that exists and is not a regular file is refused, never replaced: `-o
// /dev/stdout` as root once swapped the system's /dev/stdout symlink for a file.
TEST(AtomicFile, ASymlinkOrFifoIsRefusedNotReplaced) {
  const std::string dir = testing::temp_dir("atomic-not-regular");
  testing::write_file(dir + "/target.txt", "kept\n");
  std::filesystem::create_symlink(dir + "/target.txt", dir + "/link.txt");
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  EXPECT_NE(message([&] { check_output_file(dir + "/link.txt", "-o"); }).find("is a symbolic link"), std::string::npos);
  EXPECT_NE(message([&] { write_file_atomically(dir + "/link.txt", "new"); }).find("is a symbolic link"),
            std::string::npos);
  EXPECT_NE(message([&] { check_output_file(dir + "/fifo", "-o"); }).find("not a regular file"), std::string::npos);
  EXPECT_NE(message([&] { write_file_atomically(dir + "/fifo", "new"); }).find("not a regular file"),
            std::string::npos);
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/link.txt"));
  EXPECT_TRUE(std::filesystem::is_fifo(dir + "/fifo"));
  EXPECT_EQ(testing::read_file(dir + "/target.txt"), "kept\n");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 3u);                                                     // no temporaries left
  EXPECT_NO_THROW(write_file_atomically(dir + "/target.txt", "replaced\n"));  // a regular file is fine
}

TEST(AtomicFile, ChecksBeforeWorkNameThePathAndTheProblem) {
  const std::string dir = testing::temp_dir("atomic-checks");
  testing::write_file(dir + "/input.yaml", "x: 1\n");
  EXPECT_NE(message([&] { check_output_file(dir, "-o"); }).find("is a directory"), std::string::npos);
  EXPECT_NE(message([&] { check_output_file(dir + "/no/such/x", "-o"); }).find("does not exist"), std::string::npos);
  EXPECT_NO_THROW(check_output_file(dir + "/new.txt", "-o"));
  EXPECT_NE(message([&] {
              refuse_overwriting_input(dir + "/input.yaml",
                                       {dir + "/../" + std::filesystem::path(dir).filename().string() + "/input.yaml"});
            }).find("is the input"),
            std::string::npos);
  EXPECT_NE(message([&] { check_output_directory(dir + "/input.yaml/sub", "-o"); }).find("not a folder"),
            std::string::npos);
  // A folder output is made one level deep, like a file: the folder above must exist.
  EXPECT_NE(message([&] {
              check_output_directory(dir + "/a/b/c", "-o");
            }).find("the folder '" + dir + "/a/b' does not exist"),
            std::string::npos);
  EXPECT_NO_THROW(check_output_directory(dir + "/a", "-o"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/a"));  // checking makes nothing
  create_output_directory(dir + "/a", "-o");
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/a"));
  EXPECT_NO_THROW(create_output_directory(dir + "/a", "-o"));  // an existing folder is fine
}

}  // namespace
}  // namespace lockstep::arch
