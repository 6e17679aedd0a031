// The workload fuzzer's corpus (tests/fuzz/corpus/workload) as an ordinary test, and the
// workload reader's refusal of files it must never read.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "io/errors.hpp"
#include "support/corpus.hpp"
#include "workload/workload.hpp"

namespace lockstep::workload {
namespace {

TEST(WorkloadReaderCorpus, EveryFileReadsOrFailsAsBadInput) {
  const auto outcome =
      testing::run_corpus("workload", [](const std::string& path) { (void)load_workload(path).rows(); });
  testing::expect_corpus_reads_and_refuses(outcome);
}

std::string error_of(const std::string& source) {
  try {
    (void)load_workload(source);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(WorkloadReader, RefusesDevicesAndFifos) {
  EXPECT_EQ(error_of("/dev/zero"), "/dev/zero: not a regular file");
  const std::string fifo = testing::temp_dir("workload_fifo") + "/w.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of(fifo), fifo + ": not a regular file");
}

TEST(WorkloadReader, RefusesDuplicateKeysNamingBothLines) {
  const std::string text = "name: a\nmachine: m\nname: b\n";
  try {
    (void)parse_workload_yaml(text, "w.yaml");
    FAIL() << "accepted a duplicate key";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "w.yaml:3: duplicate key 'name' (first at line 1)");
  }
}

}  // namespace
}  // namespace lockstep::workload
