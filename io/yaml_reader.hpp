#pragma once
// Strict YAML reading with errors that name the file, line, key path and problem:
// "configs/machines/x.yaml:12: memory.base: expected an unsigned integer, got 'abc'".
// Every loader in the project reads through this, so unknown keys and wrong types are
// reported the same way everywhere.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "io/errors.hpp"

namespace lockstep::arch {

// Limits every YAML document is held to (docs/formats.md, "Limits on input files").
inline constexpr uint64_t kMaxYamlDocumentBytes = uint64_t{64} << 20;  // 64 MiB
// Nodes (scalars, lists, mappings, keys included) with every alias expanded: bounds both
// the parser's memory and the work of anything that walks the document.
inline constexpr uint64_t kMaxYamlNodes = uint64_t{1} << 22;  // 4,194,304
inline constexpr size_t kMaxYamlNesting = 256;                // lists and mappings
// read_text_file refuses larger files.
inline constexpr uint64_t kMaxTextFileBytes = kMaxYamlDocumentBytes;

// Parses YAML text; a syntax error becomes InputError "file:line: what". Before any node
// is built the text is checked: at most kMaxYamlDocumentBytes, well-formed UTF-8 of
// printable characters ("file:LINE: byte N: invalid UTF-8 (0xff)..."), one document, at
// most kMaxYamlNodes nodes with aliases expanded, nesting at most kMaxYamlNesting, no
// alias inside the node it names, no duplicate key in a mapping ("file:LINE: duplicate
// key 'x' (first at line M)").
YAML::Node parse_yaml_text(const std::string& text, const std::string& file_name);

// Reads a file from disk (regular files only: "PATH: not a regular file" otherwise; at
// most kMaxTextFileBytes), or one of the embedded configs by its path under configs/.
// InputError if neither exists.
std::string read_text_file(const std::string& path);

[[noreturn]] void yaml_fail(const std::string& file, const YAML::Node& node, const std::string& key_path,
                            const std::string& what);

// A mapping whose keys must all be consumed: finish() rejects any key nobody asked for.
class YamlMap {
 public:
  YamlMap(YAML::Node node, std::string file, std::string path);

  bool has(const std::string& key) const;
  YAML::Node node() const { return node_; }
  const std::string& file() const { return file_; }
  std::string key_path(const std::string& key) const;

  // Typed scalars. Integers accept decimal or 0x-hex; range is checked against T.
  uint64_t unsigned_value(const std::string& key, uint64_t max);
  int64_t signed_value(const std::string& key, int64_t min, int64_t max);
  double real(const std::string& key);
  bool boolean(const std::string& key);
  std::string string(const std::string& key);

  template <typename T>
  T required_unsigned(const std::string& key, uint64_t max = UINT32_MAX) {
    return static_cast<T>(unsigned_value(key, max));
  }
  template <typename T>
  T optional_unsigned(const std::string& key, T fallback, uint64_t max = UINT32_MAX) {
    return has(key) ? static_cast<T>(unsigned_value(key, max)) : fallback;
  }
  std::string optional_string(const std::string& key, const std::string& fallback);

  // Nested nodes. map() and list() fail unless the node has that shape.
  YamlMap map(const std::string& key);
  std::vector<YAML::Node> list(const std::string& key);
  std::optional<YamlMap> optional_map(const std::string& key);

  // Fails on the first key (in document order) that was never read.
  void finish() const;

 private:
  YAML::Node lookup(const std::string& key);
  YAML::Node node_;
  std::string file_;
  std::string path_;
  std::set<std::string> used_;
};

// Scalar conversions for list items and other free-standing nodes.
uint64_t yaml_unsigned(const YAML::Node& node, const std::string& file, const std::string& key_path, uint64_t max);
int64_t yaml_signed(const YAML::Node& node, const std::string& file, const std::string& key_path, int64_t min,
                    int64_t max);
std::string yaml_string(const YAML::Node& node, const std::string& file, const std::string& key_path);

}  // namespace lockstep::arch
