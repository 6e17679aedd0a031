#pragma once
// Runs a reader over every file of a fuzzer's checked-in corpus (tests/fuzz/corpus/NAME) as an
// ordinary test: each file must read or fail with a one-line InputError, never anything else.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "io/errors.hpp"
#include "support/test_support.hpp"

namespace lockstep::testing {

struct CorpusOutcome {
  size_t files = 0;
  size_t read = 0;
  size_t rejected = 0;
};

inline CorpusOutcome run_corpus(const std::string& name, const std::function<void(const std::string& path)>& read) {
  const std::filesystem::path dir = source_path("tests/fuzz/corpus/" + name);
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  CorpusOutcome outcome;
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    ++outcome.files;
    try {
      read(file.string());
      ++outcome.read;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
      ++outcome.rejected;
    }
  }
  return outcome;
}

// What every corpus must show: at least five files, some read and at least `refused` refused
// (a corpus that only reads, or only fails, no longer tests the reader's edges).
inline void expect_corpus_reads_and_refuses(const CorpusOutcome& outcome, size_t refused = 1) {
  EXPECT_GE(outcome.files, 5u);
  EXPECT_GT(outcome.read, 0u);
  EXPECT_GE(outcome.rejected, refused);
}

}  // namespace lockstep::testing
