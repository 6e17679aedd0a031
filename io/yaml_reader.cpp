#include "io/yaml_reader.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <unordered_map>

#include "io/embedded_configs.hpp"
#include "io/input_file.hpp"
#include "io/printable.hpp"
#include "io/utf8.hpp"

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

namespace {

std::string hex_code_point(uint32_t c) {
  char text[16];
  std::snprintf(text, sizeof text, "U+%04X", c);
  return text;
}

// Well-formed UTF-8 made only of YAML's printable characters (YAML 1.2 c-printable: tab,
// line feed, carriage return, U+0020..U+007E, U+0085, U+00A0..U+D7FF, U+E000..U+FFFD,
// U+10000..U+10FFFF). "file:LINE: byte N: what" on the first offence.
void check_yaml_characters(const std::string& text, const std::string& file) {
  const auto at = [&](size_t offset) {
    return file + ":" + std::to_string(line_of_offset(text, offset)) + ": byte " + std::to_string(offset) + ": ";
  };
  if (const auto bad = first_invalid_utf8(text)) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned>(static_cast<uint8_t>(text[*bad])));
    throw InputError(at(*bad) + "invalid UTF-8 (" + byte + "); YAML files must be UTF-8");
  }
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  for (size_t i = 0; i < text.size(); ++i) {
    uint32_t c = s[i];
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
        throw InputError(at(i) + "control character " + hex_code_point(c) +
                         " is not allowed in YAML (only tab, line feed and carriage return)");
      }
    } else if (c == 0xc2 && i + 1 < text.size()) {
      c = s[i + 1];  // C2 xx encodes U+00xx (U+0080..U+00BF)
      if (c < 0xa0 && c != 0x85) {
        throw InputError(at(i) + "control character " + hex_code_point(c) + " is not allowed in YAML");
      }
    } else if (c == 0xef && i + 2 < text.size() && s[i + 1] == 0xbf && (s[i + 2] == 0xbe || s[i + 2] == 0xbf)) {
      throw InputError(at(i) + "non-character " + hex_code_point(0xfffeu + (s[i + 2] & 1u)) +
                       " is not allowed in YAML");
    }
  }
}

// One pass over the parser's events before any node is built: counts nodes with every
// alias expanded (an alias counts the nodes of what it names), bounds nesting, refuses
// recursive aliases, duplicate keys, scalars that escapes made into invalid UTF-8, and
// more than one document. Every check costs O(1) per event, so a hostile document costs
// no more than its own length.
class DocumentCheck : public YAML::EventHandler {
 public:
  explicit DocumentCheck(const std::string& file) : file_(file) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) fail(mark, "a second YAML document; a file holds exactly one");
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    node(mark, 1, KeyText{true, "~"});
    close_anchor(anchor, count_ - 1, "~");
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (anchor >= anchors_.size() || anchors_[anchor].open) {
      fail(mark, "alias *" + anchor_name(anchor) + " refers to a node that contains it");
    }
    const Anchor& a = anchors_[anchor];
    node(mark, a.nodes, a.scalar ? KeyText{true, a.text} : KeyText{}, "alias *" + anchor_name(anchor));
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    if (const auto bad = first_invalid_utf8(value)) {
      fail(mark, "scalar is not valid UTF-8 at its byte " + std::to_string(*bad) +
                     " (an escape sequence made a lone surrogate?)");
    }
    node(mark, 1, KeyText{true, value});
    close_anchor(anchor, count_ - 1, value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, false);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor, true);
  }
  void OnMapEnd() override { close(); }
  void OnAnchor(const YAML::Mark&, const std::string& name) override { pending_name_ = name; }

 private:
  struct KeyText {
    bool known = false;  // a scalar (or null, or an alias of one): duplicates are checked
    std::string text;
  };
  struct Anchor {
    std::string name;
    bool open = true;
    bool scalar = false;
    std::string text;  // a scalar's value, for keys given as aliases
    uint64_t nodes = 0;
  };
  struct Frame {
    bool map = false;
    bool expect_key = true;
    YAML::anchor_t anchor = YAML::NullAnchor;
    uint64_t start = 0;                         // count_ before this collection's own node
    std::unordered_map<std::string, int> keys;  // key -> 1-based line of its first use
  };

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& what) const {
    throw InputError(file_ + ":" + std::to_string(mark.line + 1) + ": " + what);
  }

  std::string anchor_name(YAML::anchor_t anchor) const {
    if (anchor < anchors_.size() && !anchors_[anchor].name.empty()) return anchors_[anchor].name;
    return std::to_string(anchor);
  }

  void register_anchor(YAML::anchor_t anchor) {
    if (anchor == YAML::NullAnchor) return;
    if (anchors_.size() <= anchor) anchors_.resize(anchor + 1);
    anchors_[anchor] = Anchor{pending_name_, true, false, {}, 0};
    pending_name_.clear();
  }

  void close_anchor(YAML::anchor_t anchor, uint64_t start, const std::string& scalar) {
    if (anchor == YAML::NullAnchor) return;
    register_anchor(anchor);
    Anchor& a = anchors_[anchor];
    a.open = false;
    a.scalar = true;
    a.text = scalar;
    a.nodes = count_ - start;
  }

  // A node starts: `nodes` is what it adds with aliases expanded.
  void node(const YAML::Mark& mark, uint64_t nodes, const KeyText& key, const std::string& what = "") {
    count_ = nodes > kMaxYamlNodes ? kMaxYamlNodes + 1 : count_ + nodes;
    if (count_ > kMaxYamlNodes) {
      fail(mark, (what.empty() ? std::string("the document") : what + " expands the document") + " to more than " +
                     std::to_string(kMaxYamlNodes) + " nodes (aliases expanded; the limit for a YAML file)");
    }
    if (frames_.empty() || !frames_.back().map) return;
    Frame& frame = frames_.back();
    const bool is_key = frame.expect_key;
    frame.expect_key = !frame.expect_key;
    if (!is_key || !key.known) return;
    const auto [it, inserted] = frame.keys.emplace(key.text, mark.line + 1);
    if (!inserted) {
      const std::string shown = key.text.size() > 80 ? key.text.substr(0, 80) + "..." : key.text;
      fail(mark, "duplicate key '" + printable(shown) + "' (first at line " + std::to_string(it->second) + ")");
    }
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, bool map) {
    const uint64_t start = count_;
    node(mark, 1, KeyText{});
    if (frames_.size() >= kMaxYamlNesting) {
      fail(mark, "collections nested deeper than " + std::to_string(kMaxYamlNesting));
    }
    register_anchor(anchor);
    frames_.push_back(Frame{map, true, anchor, start, {}});
  }

  void close() {
    const Frame& frame = frames_.back();
    if (frame.anchor != YAML::NullAnchor) {
      Anchor& a = anchors_[frame.anchor];
      a.open = false;
      a.nodes = count_ - frame.start;
    }
    frames_.pop_back();
  }

  const std::string& file_;
  int documents_ = 0;
  uint64_t count_ = 0;
  std::vector<Frame> frames_;
  std::vector<Anchor> anchors_;
  std::string pending_name_;
};

}  // namespace

YAML::Node parse_yaml_text(const std::string& text, const std::string& file_name) {
  if (text.size() > kMaxYamlDocumentBytes) {
    throw InputError(file_name + ": " + std::to_string(text.size()) + " bytes, more than the limit of " +
                     std::to_string(kMaxYamlDocumentBytes) + " for a YAML file");
  }
  check_yaml_characters(text, file_name);
  try {
    {
      std::istringstream in(text);
      YAML::Parser parser(in);
      DocumentCheck check(file_name);
      while (parser.HandleNextDocument(check)) {
      }
    }
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(file_name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

std::string read_text_file(const std::string& path) {
  if (regular_file_exists(path)) return read_regular_file(path, kMaxTextFileBytes);
  const auto& embedded = embedded_configs();
  const auto it = embedded.find(path);
  if (it != embedded.end()) return std::string(it->second);
  throw InputError(path + ": cannot read: no such file (nor an embedded configuration)");
}

void yaml_fail(const std::string& file, const YAML::Node& node, const std::string& key_path, const std::string& what) {
  throw InputError(line_prefix(file, node) + (key_path.empty() ? "" : key_path + ": ") + what);
}

uint64_t yaml_unsigned(const YAML::Node& node, const std::string& file, const std::string& key_path, uint64_t max) {
  long double v = 0;
  if (!node.IsScalar() || !parse_integer_text(node.Scalar(), false, v)) {
    yaml_fail(file, node, key_path, "expected an unsigned integer, got '" + scalar_text(node) + "'");
  }
  if (v > static_cast<long double>(max)) {
    yaml_fail(file, node, key_path, "value " + node.Scalar() + " is larger than the maximum " + std::to_string(max));
  }
  return static_cast<uint64_t>(v);
}

int64_t yaml_signed(const YAML::Node& node, const std::string& file, const std::string& key_path, int64_t min,
                    int64_t max) {
  long double v = 0;
  if (!node.IsScalar() || !parse_integer_text(node.Scalar(), true, v)) {
    yaml_fail(file, node, key_path, "expected an integer, got '" + scalar_text(node) + "'");
  }
  if (v < static_cast<long double>(min) || v > static_cast<long double>(max)) {
    yaml_fail(file, node, key_path,
              "value " + node.Scalar() + " outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return static_cast<int64_t>(v);
}

std::string yaml_string(const YAML::Node& node, const std::string& file, const std::string& key_path) {
  if (!node.IsScalar()) yaml_fail(file, node, key_path, "expected a string");
  return node.Scalar();
}

YamlMap::YamlMap(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {
  if (!node_.IsMap()) {
    yaml_fail(file_, node_, path_, node_.IsNull() ? "expected a mapping, found nothing" : "expected a mapping");
  }
}

bool YamlMap::has(const std::string& key) const { return static_cast<bool>(node_[key]); }

std::string YamlMap::key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

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

std::string YamlMap::string(const std::string& key) { return yaml_string(lookup(key), file_, key_path(key)); }

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
