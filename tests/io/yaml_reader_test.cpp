#include "io/yaml_reader.hpp"

#include <gtest/gtest.h>

namespace lockstep::arch {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(YamlReader, ReadsHexAndDecimal) {
  YamlMap m(parse_yaml_text("a: 0x4c000\nb: 12\nc: -3\n", "f.yaml"), "f.yaml", "");
  EXPECT_EQ(m.unsigned_value("a", UINT32_MAX), 0x4c000u);
  EXPECT_EQ(m.unsigned_value("b", UINT32_MAX), 12u);
  EXPECT_EQ(m.signed_value("c", -10, 10), -3);
  m.finish();
}

TEST(YamlReader, NamesFileLineAndKeyPath) {
  const auto text = "top:\n  inner:\n    value: abc\n";
  YamlMap m(parse_yaml_text(text, "f.yaml"), "f.yaml", "");
  auto inner = m.map("top").map("inner");
  EXPECT_EQ(error_of([&] { inner.unsigned_value("value", 10); }),
            "f.yaml:3: top.inner.value: expected an unsigned integer, got 'abc'");
}

TEST(YamlReader, RejectsUnknownAndMissingKeys) {
  YamlMap m(parse_yaml_text("a: 1\nextra: 2\n", "f.yaml"), "f.yaml", "");
  m.unsigned_value("a", 10);
  EXPECT_EQ(error_of([&] { m.finish(); }), "f.yaml:2: extra: unknown key");
  EXPECT_EQ(error_of([&] { m.string("absent"); }), "f.yaml:1: absent: missing required key");
}

TEST(YamlReader, RejectsOutOfRangeAndOctalLooking) {
  YamlMap m(parse_yaml_text("a: 300\nb: 010\n", "f.yaml"), "f.yaml", "");
  EXPECT_NE(error_of([&] { m.unsigned_value("a", 255); }).find("larger than the maximum 255"), std::string::npos);
  EXPECT_NE(error_of([&] { m.unsigned_value("b", 255); }).find("expected an unsigned integer"), std::string::npos);
}

TEST(YamlReader, SyntaxErrorNamesLine) {
  EXPECT_NE(error_of([] { parse_yaml_text("a: [1,\n", "bad.yaml"); }).find("bad.yaml:"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::arch
