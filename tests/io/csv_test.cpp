// RFC 4180 fields: quoted only when they must be, read back exactly.
#include "io/csv.hpp"

#include <gtest/gtest.h>

#include <random>

#include "io/errors.hpp"

namespace lockstep::arch {
namespace {

TEST(Csv, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(csv_field("layer.attn"), "layer.attn");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("x\ny"), "\"x\ny\"");
}

// The examples of RFC 4180 section 2 (rules 1, 2, 5, 6 and 7), read as the RFC says.
TEST(Csv, TheRfcsOwnExamples) {
  const auto fields = [](const std::string& text) {
    std::vector<std::vector<std::string>> out;
    for (const auto& r : parse_csv(text, "rfc.csv")) out.push_back(r.fields);
    return out;
  };
  using Rows = std::vector<std::vector<std::string>>;
  EXPECT_EQ(fields("aaa,bbb,ccc\r\nzzz,yyy,xxx\r\n"), (Rows{{"aaa", "bbb", "ccc"}, {"zzz", "yyy", "xxx"}}));
  EXPECT_EQ(fields("aaa,bbb,ccc\r\nzzz,yyy,xxx"), (Rows{{"aaa", "bbb", "ccc"}, {"zzz", "yyy", "xxx"}}));
  EXPECT_EQ(fields("\"aaa\",\"bbb\",\"ccc\"\r\nzzz,yyy,xxx"), (Rows{{"aaa", "bbb", "ccc"}, {"zzz", "yyy", "xxx"}}));
  EXPECT_EQ(fields("\"aaa\",\"b\r\nbb\",\"ccc\"\r\nzzz,yyy,xxx"),
            (Rows{{"aaa", "b\r\nbb", "ccc"}, {"zzz", "yyy", "xxx"}}));
  EXPECT_EQ(fields("\"aaa\",\"b\"\"bb\",\"ccc\""), (Rows{{"aaa", "b\"bb", "ccc"}}));
}

TEST(Csv, RandomFieldsRoundTrip) {
  std::mt19937 random(7);
  const std::string alphabet = "ab,\"\r\n x";
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<std::vector<std::string>> table(1 + random() % 4);
    std::string text;
    for (auto& row : table) {
      row.resize(1 + random() % 4);
      for (size_t f = 0; f < row.size(); ++f) {
        for (size_t n = random() % 6; n > 0; --n) row[f] += alphabet[random() % alphabet.size()];
        text += (f ? "," : "") + csv_field(row[f]);
      }
      text += trial % 2 ? "\r\n" : "\n";
    }
    const auto records = parse_csv(text, "t.csv");
    ASSERT_EQ(records.size(), table.size()) << text;
    for (size_t r = 0; r < table.size(); ++r) EXPECT_EQ(records[r].fields, table[r]) << text;
  }
}

TEST(Csv, LineNumbersCountNewlinesInsideQuotes) {
  const auto records = parse_csv("a,\"x\ny\"\nb,c", "t.csv");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].line, 1u);
  EXPECT_EQ(records[1].line, 3u);
  EXPECT_EQ(records[1].fields, (std::vector<std::string>{"b", "c"}));
  EXPECT_TRUE(parse_csv("a\n\nb\n", "t.csv")[1].blank);
  EXPECT_THROW(parse_csv("a,\"b\"c\n", "t.csv"), InputError);
  EXPECT_THROW(parse_csv("a\rb\n", "t.csv"), InputError);
}

}  // namespace
}  // namespace lockstep::arch
