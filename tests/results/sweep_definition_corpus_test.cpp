// The sweep-definition fuzzer's corpus (tests/fuzz/corpus/sweep_definition) as an ordinary
// test, and the reader's refusal of files it must never read.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "io/errors.hpp"
#include "results/sweep_definition.hpp"
#include "support/corpus.hpp"

namespace lockstep::replay {
namespace {

TEST(SweepDefinitionCorpus, EveryFileReadsOrFailsAsBadInput) {
  const auto outcome =
      testing::run_corpus("sweep_definition", [](const std::string& path) { (void)load_sweep_definition(path); });
  testing::expect_corpus_reads_and_refuses(outcome);
}

std::string error_of(const std::string& text) {
  try {
    (void)parse_sweep_definition(text, "s.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SweepDefinitionReader, RefusesDuplicateKeysAndBadText) {
  EXPECT_EQ(error_of("configurations: [B64, B128]\nreference: B64\nreference: B128\n"),
            "s.yaml:3: duplicate key 'reference' (first at line 2)");
  EXPECT_EQ(error_of("configurations: [B64]\nreference: \"B64\xff\"\n"),
            "s.yaml:2: byte 37: invalid UTF-8 (0xff); YAML files must be UTF-8");
  // An escape can make a lone surrogate: refused although the file itself is ASCII.
  EXPECT_NE(error_of("configurations: [\"B\\ud800\"]\nreference: B64\n").find("s.yaml:1: "), std::string::npos);
}

TEST(SweepDefinitionReader, RefusesDevicesAndFifos) {
  try {
    (void)load_sweep_definition("/dev/zero");
    FAIL() << "read /dev/zero";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "/dev/zero: not a regular file");
  }
  const std::string fifo = testing::temp_dir("sweep_fifo") + "/s.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    (void)load_sweep_definition(fifo);
    FAIL() << "read a FIFO";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), fifo + ": not a regular file");
  }
}

}  // namespace
}  // namespace lockstep::replay
