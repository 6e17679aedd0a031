#include "arch/yaml_reader.hpp"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "arch/embedded_configs.hpp"

namespace lockstep::arch {

namespace {

std::string line_prefix(const std::string& file, const YAML::Node& node) {
  const auto mark = node.Mark();
  if (mark.line < 0) return file + ": ";
  return file + ":" + std::to_string(mark.line + 1) + ": ";
}

std::string scalar_text(const YAML::Node& node) {
  return node.IsScalar() ? node.Scalar() : std::string(node.IsMap() ? "a mapping" : "a list");
}

bool parse_integer_text(const std::string& text, bool allow_negative, long double& out) {
  if (text.empty()) return false;
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  if (allow_negative && text[0] == '-') {
    const long long v = std::strtoll(begin, &end, 0);
    if (errno != 0 || *end != '\0') return false;
    out = static_cast<long double>(v);
    return true;
  }
  if (text[0] == '-' || text[0] == '+') return false;
  const unsigned long long v = std::strtoull(begin, &end, 0);
  if (errno != 0 || *end != '\0') return false;
  // strtoull reads "010" as octal; YAML 1.2 core schema says decimal. Reject the ambiguity.
  if (text.size() > 1 && text[0] == '0' && text[1] != 'x' && text[1] != 'X') return false;
  out = static_cast<long double>(v);
  return true;
}

}  // namespace

YAML::Node parse_yaml_text(const std::string& text, const std::string& file_name) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(file_name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  const auto& embedded = embedded_configs();
  const auto it = embedded.find(path);
  if (it != embedded.end()) return std::string(it->second);
  throw InputError(path + ": cannot read: no such file (nor an embedded configuration)");
}

void yaml_fail(const std::string& file, const YAML::Node& node, const std::string& key_path,
               const std::string& what) {
  throw InputError(line_prefix(file, node) + (key_path.empty() ? "" : key_path + ": ") + what);
}

uint64_t yaml_unsigned(const YAML::Node& node, const std::string& file,
                       const std::string& key_path, uint64_t max) {
  long double v = 0;
  if (!node.IsScalar() || !parse_integer_text(node.Scalar(), false, v)) {
    yaml_fail(file, node, key_path, "expected an unsigned integer, got '" + scalar_text(node) + "'");
  }
  if (v > static_cast<long double>(max)) {
    yaml_fail(file, node, key_path,
              "value " + node.Scalar() + " is larger than the maximum " + std::to_string(max));
  }
  return static_cast<uint64_t>(v);
}

int64_t yaml_signed(const YAML::Node& node, const std::string& file, const std::string& key_path,
                    int64_t min, int64_t max) {
  long double v = 0;
  if (!node.IsScalar() || !parse_integer_text(node.Scalar(), true, v)) {
    yaml_fail(file, node, key_path, "expected an integer, got '" + scalar_text(node) + "'");
  }
  if (v < static_cast<long double>(min) || v > static_cast<long double>(max)) {
    yaml_fail(file, node, key_path,
              "value " + node.Scalar() + " outside [" + std::to_string(min) + ", " +
                  std::to_string(max) + "]");
  }
  return static_cast<int64_t>(v);
}

std::string yaml_string(const YAML::Node& node, const std::string& file,
                        const std::string& key_path) {
  if (!node.IsScalar()) yaml_fail(file, node, key_path, "expected a string");
  return node.Scalar();
}

YamlMap::YamlMap(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {
  if (!node_.IsMap()) {
    yaml_fail(file_, node_, path_, node_.IsNull() ? "expected a mapping, found nothing"
                                                  : "expected a mapping");
  }
}

bool YamlMap::has(const std::string& key) const { return static_cast<bool>(node_[key]); }

std::string YamlMap::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

YAML::Node YamlMap::lookup(const std::string& key) {
  used_.insert(key);
  const YAML::Node child = node_[key];
  if (!child) yaml_fail(file_, node_, key_path(key), "missing required key");
  return child;
}

uint64_t YamlMap::unsigned_value(const std::string& key, uint64_t max) {
  return yaml_unsigned(lookup(key), file_, key_path(key), max);
}

int64_t YamlMap::signed_value(const std::string& key, int64_t min, int64_t max) {
  return yaml_signed(lookup(key), file_, key_path(key), min, max);
}

double YamlMap::real(const std::string& key) {
  const YAML::Node child = lookup(key);
  if (child.IsScalar()) {
    char* end = nullptr;
    const double v = std::strtod(child.Scalar().c_str(), &end);
    if (!child.Scalar().empty() && *end == '\0') return v;
  }
  yaml_fail(file_, child, key_path(key), "expected a number, got '" + scalar_text(child) + "'");
}

bool YamlMap::boolean(const std::string& key) {
  const YAML::Node child = lookup(key);
  if (child.IsScalar()) {
    const std::string& s = child.Scalar();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  yaml_fail(file_, child, key_path(key), "expected true or false, got '" + scalar_text(child) + "'");
}

std::string YamlMap::string(const std::string& key) {
  return yaml_string(lookup(key), file_, key_path(key));
}

std::string YamlMap::optional_string(const std::string& key, const std::string& fallback) {
  return has(key) ? string(key) : fallback;
}

YamlMap YamlMap::map(const std::string& key) { return YamlMap(lookup(key), file_, key_path(key)); }

std::optional<YamlMap> YamlMap::optional_map(const std::string& key) {
  if (!has(key)) return std::nullopt;
  return map(key);
}

std::vector<YAML::Node> YamlMap::list(const std::string& key) {
  const YAML::Node child = lookup(key);
  if (child.IsNull()) return {};
  if (!child.IsSequence()) yaml_fail(file_, child, key_path(key), "expected a list");
  std::vector<YAML::Node> items;
  for (const auto& item : child) items.push_back(item);
  return items;
}

void YamlMap::finish() const {
  for (const auto& entry : node_) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    if (!used_.count(key)) yaml_fail(file_, entry.first, key_path(key), "unknown key");
  }
}

}  // namespace lockstep::arch
