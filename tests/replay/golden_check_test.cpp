// The golden regression: the source tree's golden/ must match a fresh run, and check must
// name the file, key, expected and found value of every difference.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/errors.hpp"
#include "replay/golden.hpp"
#include "support/test_support.hpp"

namespace lockstep::replay {
namespace {

TEST(GoldenCheck, SourceTreeGoldenFilesMatch) {
  const auto r = testing::run_lockstep({"golden", "check", "--golden-dir", testing::source_path("golden")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("match"), std::string::npos) << r.out;
}

TEST(GoldenCheck, BlessThenCheckAndEveryKindOfDifference) {
  const std::string dir = testing::temp_dir("golden-bless");
  const auto run = run_golden(0);
  ASSERT_GE(run.files.size(), 5u);
  const auto written = bless_golden(run, dir);
  EXPECT_EQ(written.size(), run.files.size());
  EXPECT_TRUE(check_golden(run, dir).empty());
  for (const auto& [name, text] : run.files) {
    EXPECT_EQ(text.find(dir), std::string::npos) << "no absolute paths in " << name;
    EXPECT_NE(text.find(" payload_digest "), std::string::npos) << name;
  }

  // Change one value, drop one key, add a stray file, remove a case file.
  const std::string name = run.files.begin()->first;
  std::string text = run.files.begin()->second;
  const size_t horizon = text.find(" horizon ");
  ASSERT_NE(horizon, std::string::npos);
  const size_t value = horizon + 9, end = text.find('\n', value);
  const std::string old_value = text.substr(value, end - value);
  text.replace(value, end - value, "999999");
  const size_t last_line = text.rfind('\n', text.size() - 2);
  const std::string dropped = text.substr(last_line + 1);
  text.erase(last_line + 1);
  testing::write_file(dir + "/" + name, text);
  testing::write_file(dir + "/stray.golden", "# nothing\n");
  const std::string removed = std::next(run.files.begin())->first;
  std::filesystem::remove(dir + "/" + removed);

  const auto differences = check_golden(run, dir);
  ASSERT_EQ(differences.size(), 4u);
  std::map<std::string, GoldenDifference> by_file_key;
  for (const auto& d : differences) by_file_key[d.file + "|" + d.key] = d;
  const auto changed =
      std::find_if(differences.begin(), differences.end(), [](const auto& d) { return d.expected == "999999"; });
  ASSERT_NE(changed, differences.end());
  EXPECT_EQ(changed->file, name);
  EXPECT_EQ(changed->found, old_value);
  EXPECT_EQ(changed->key.substr(0, 6), "phase ");
  EXPECT_TRUE(by_file_key.count("stray.golden|(file)"));
  EXPECT_TRUE(by_file_key.count(removed + "|(file)"));
  const auto missing = std::find_if(differences.begin(), differences.end(),
                                    [](const auto& d) { return d.expected == "(missing)" && d.key != "(file)"; });
  ASSERT_NE(missing, differences.end());
  EXPECT_NE(dropped.find(missing->key), std::string::npos);

  // The command says the same and exits 1; bless repairs everything.
  const auto r = testing::run_lockstep({"golden", "check", "--golden-dir", dir});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find(name + ": "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("expected 999999, found " + old_value), std::string::npos) << r.out;
  bless_golden(run, dir);
  EXPECT_TRUE(check_golden(run, dir).empty());
  EXPECT_FALSE(std::filesystem::exists(dir + "/stray.golden"));
}

TEST(GoldenCheck, MalformedGoldenFilesAreBadInput) {
  EXPECT_THROW(parse_golden_text("phase 1 B256 horizon\n", "x.golden"), InputError);
  EXPECT_THROW(parse_golden_text("phase 1 B256 horizon 3\nphase 1 B256 horizon 4\n", "x.golden"), InputError);
  const auto keys = parse_golden_text("# comment\n\nphase 1 B256p horizon 3\n", "x.golden");
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys.at("phase 1 B256p horizon"), "3");
}

}  // namespace
}  // namespace lockstep::replay
