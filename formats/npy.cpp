#include "formats/npy.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "io/mapped_file.hpp"

namespace lockstep::arch {

namespace {

constexpr std::string_view kMagic("\x93NUMPY", 6);
constexpr size_t kAlignment = 64;         // numpy aligns the data to 64 bytes
constexpr size_t kGrowthAxisDigits = 21;  // numpy leaves room to grow the first axis in place
constexpr uint64_t kVersion1MaxHeader = 65535;

// A plain number type: descr kind and size, NumPy's name for it, our enum.
struct ScalarType {
  std::string_view kind_and_size;
  size_t item_size;
  std::string_view name;
  NpyType type;
};

constexpr std::array kScalarTypes{
    ScalarType{"f2", 2, "float16", NpyType::kFloat16}, ScalarType{"f4", 4, "float32", NpyType::kFloat32},
    ScalarType{"u1", 1, "uint8", NpyType::kUint8},     ScalarType{"f8", 8, "float64", NpyType::kOther},
    ScalarType{"b1", 1, "bool", NpyType::kOther},      ScalarType{"i1", 1, "int8", NpyType::kOther},
    ScalarType{"i2", 2, "int16", NpyType::kOther},     ScalarType{"i4", 4, "int32", NpyType::kOther},
    ScalarType{"i8", 8, "int64", NpyType::kOther},     ScalarType{"u2", 2, "uint16", NpyType::kOther},
    ScalarType{"u4", 4, "uint32", NpyType::kOther},    ScalarType{"u8", 8, "uint64", NpyType::kOther},
    ScalarType{"c8", 8, "complex64", NpyType::kOther}, ScalarType{"c16", 16, "complex128", NpyType::kOther},
};

// '<' little-endian, or '|' (no byte order) for one-byte types.
const ScalarType* find_scalar_type(std::string_view descr) {
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '|')) return nullptr;
  for (const ScalarType& scalar : kScalarTypes) {
    if (descr.substr(1) != scalar.kind_and_size) continue;
    return descr[0] == '|' && scalar.item_size != 1 ? nullptr : &scalar;
  }
  return nullptr;
}

// "<f4 (float32)"; a descr we do not know is shown as it is.
std::string describe_dtype(std::string_view descr) {
  const ScalarType* scalar = find_scalar_type(descr);
  return std::string(descr) + (scalar ? " (" + std::string(scalar->name) + ")" : "");
}

[[noreturn]] void fail(const std::string& file, const std::string& what) { throw InputError(file + ": " + what); }

std::string quoted_name(std::string_view text) { return "'" + std::string(text) + "'"; }

const ScalarType& accepted_scalar_type(std::string_view descr, const std::string& file) {
  if (const ScalarType* scalar = find_scalar_type(descr)) return *scalar;
  const char kind = descr.size() > 1 ? descr[1] : '\0';
  if (!descr.empty() && descr[0] == '>') {
    fail(file, "descr: big-endian " + quoted_name(descr) + " is not supported");
  }
  if (kind == 'O') {
    fail(file, "descr: object arrays (" + quoted_name(descr) + ") are not supported");
  }
  if (kind == 'V') {
    fail(file, "descr: structured or void dtypes (" + quoted_name(descr) + ") are not supported");
  }
  fail(file, "descr: unsupported dtype " + quoted_name(descr));
}

struct HeaderFields {
  std::string descr;
  bool fortran_order = false;
  std::vector<uint64_t> shape;
};

// The header dictionary in Python literal syntax: exactly the keys 'descr', 'fortran_order'
// and 'shape' in any order, trailing commas allowed, nothing else (no expressions).
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  HeaderFields parse() {
    HeaderFields fields;
    bool seen[3] = {false, false, false};
    expect('{');
    while (!take('}')) {
      const std::string key = string_literal();
      expect(':');
      parse_value(key, fields, seen);
      if (!take(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) fail_at("unexpected text after the dictionary");
    const char* names[3] = {"descr", "fortran_order", "shape"};
    for (int i = 0; i < 3; ++i) {
      if (!seen[i]) fail(file_, std::string("header: missing key '") + names[i] + "'");
    }
    return fields;
  }

 private:
  void parse_value(const std::string& key, HeaderFields& fields, bool (&seen)[3]) {
    const int index = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
    if (index < 0) fail(file_, "header: unexpected key " + quoted_name(key));
    if (seen[index]) fail(file_, "header: key " + quoted_name(key) + " appears twice");
    seen[index] = true;
    if (index == 0) fields.descr = descr();
    if (index == 1) fields.fortran_order = boolean();
    if (index == 2) fields.shape = shape_tuple();
  }

  std::string descr() {
    skip_space();
    if (peek() == '[') fail(file_, "descr: structured dtypes are not supported");
    return string_literal();
  }

  bool boolean() {
    skip_space();
    if (text_.substr(pos_).starts_with("True")) {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_).starts_with("False")) {
      pos_ += 5;
      return false;
    }
    fail_at("expected True or False");
  }

  // "()", "(3,)", "(3, 4)", "(3, 4,)"; "(3)" is a number in Python, not a tuple.
  std::vector<uint64_t> shape_tuple() {
    std::vector<uint64_t> dims;
    expect('(');
    if (take(')')) return dims;
    for (;;) {
      dims.push_back(dimension());
      if (take(')')) {
        if (dims.size() == 1) fail(file_, "shape: (" + std::to_string(dims[0]) + ") is not a tuple");
        return dims;
      }
      expect(',');
      if (take(')')) return dims;
    }
  }

  // Decimal digits; Python 2's long suffix 'L' (old NumPy files) is allowed.
  uint64_t dimension() {
    skip_space();
    if (!is_digit(peek())) fail_at("expected a dimension");
    uint64_t value = 0;
    while (is_digit(peek())) {
      const auto digit = static_cast<uint64_t>(text_[pos_++] - '0');
      if (value > (UINT64_MAX - digit) / 10) fail(file_, "shape: a dimension exceeds 2^64");
      value = value * 10 + digit;
    }
    if (peek() == 'L') ++pos_;
    return value;
  }

  // Single or double quotes; no escapes or control bytes (no descr or key needs them).
  std::string string_literal() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail_at("expected a quoted string");
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail_at("unterminated string");
    const std::string_view body = text_.substr(pos_ + 1, end - pos_ - 1);
    for (const char c : body) {
      if (c == '\\' || static_cast<unsigned char>(c) < 0x20) fail_at("unsupported string");
    }
    pos_ = end + 1;
    return std::string(body);
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

  void skip_space() {
    while (is_space(peek())) ++pos_;
  }

  bool take(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }

  void expect(char c) {
    if (!take(c)) fail_at(std::string("expected '") + c + "'");
  }

  [[noreturn]] void fail_at(const std::string& what) const {
    fail(file_, "header: " + what + " at header byte " + std::to_string(pos_));
  }

  std::string_view text_;
  const std::string& file_;
  size_t pos_ = 0;
};

// The magic, the version and the header length, checked against the file's size.
struct Preamble {
  std::string_view header;
  size_t data_offset = 0;
};

uint32_t little_endian(std::string_view bytes) {
  uint32_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) value = value << 8 | static_cast<uint8_t>(bytes[i]);
  return value;
}

[[noreturn]] void fail_truncated(std::string_view bytes, const std::string& file) {
  fail(file, "truncated: " + std::to_string(bytes.size()) + " bytes, shorter than the preamble");
}

Preamble read_preamble(std::string_view bytes, const std::string& file) {
  if (!kMagic.starts_with(bytes.substr(0, kMagic.size()))) {
    fail(file, "not a .npy file (bad magic)");
  }
  if (bytes.size() < kMagic.size() + 2) fail_truncated(bytes, file);
  const auto major = static_cast<uint8_t>(bytes[6]);
  const auto minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    fail(file, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  }
  const size_t length_size = major == 1 ? 2 : 4;  // 2.0 and 3.0 allow 4 GiB headers
  const size_t preamble = kMagic.size() + 2 + length_size;
  if (bytes.size() < preamble) fail_truncated(bytes, file);
  const uint64_t header_length = little_endian(bytes.substr(8, length_size));
  if (header_length > bytes.size() - preamble) {
    fail(file, "header length " + std::to_string(header_length) + " exceeds the file (" + std::to_string(bytes.size()) +
                   " bytes)");
  }
  return {bytes.substr(preamble, header_length), preamble + header_length};
}

// The product of the shape and the item size, checked against the bytes after the header.
std::vector<uint8_t> copy_data(std::string_view data, const NpyArray& array, size_t item, const std::string& file) {
  const std::string what = shape_text(array.shape) + " of " + array.dtype;
  const std::optional<uint64_t> elements = shape_element_count(array.shape);
  uint64_t needed = 0;
  if (!elements || __builtin_mul_overflow(*elements, item, &needed)) {
    fail(file, "shape: " + what + " exceeds 2^64 bytes");
  }
  if (data.size() < needed) {
    fail(file, "truncated: shape " + what + " needs " + std::to_string(needed) + " data bytes, the file has " +
                   std::to_string(data.size()));
  }
  if (data.size() > needed) {
    fail(file, std::to_string(data.size() - needed) + " bytes after the data (shape " + what + " needs " +
                   std::to_string(needed) + ")");
  }
  return {data.begin(), data.end()};
}

std::string header_text(const NpyArray& array) {
  std::string text =
      "{'descr': '" + array.dtype + "', 'fortran_order': False, 'shape': " + shape_text(array.shape) + ", }";
  if (!array.shape.empty()) {
    const size_t digits = std::to_string(array.shape[0]).size();
    text.append(kGrowthAxisDigits - std::min(digits, kGrowthAxisDigits), ' ');
  }
  return text;
}

// Magic, version, length, header, spaces and '\n', ending on a 64-byte boundary. Like
// numpy, a full block of spaces is added when the header already ends on one.
std::string wrapped_header(const std::string& text) {
  for (const int major : {1, 2}) {
    const size_t length_size = major == 1 ? 2 : 4;
    const size_t unpadded = kMagic.size() + 2 + length_size + text.size() + 1;
    const size_t padding = kAlignment - unpadded % kAlignment;
    const uint64_t length = text.size() + padding + 1;
    if (major == 1 && length > kVersion1MaxHeader) continue;
    std::string out(kMagic);
    out += static_cast<char>(major);
    out += '\0';
    for (size_t i = 0; i < length_size; ++i) out += static_cast<char>(length >> (8 * i) & 0xff);
    return out + text + std::string(padding, ' ') + '\n';
  }
  throw std::invalid_argument("npy header too long");
}

void check_writable(const NpyArray& array) {
  const ScalarType* scalar = find_scalar_type(array.dtype);
  if (!scalar) throw std::invalid_argument("npy: cannot write dtype '" + array.dtype + "'");
  if (scalar->type != array.type) {
    throw std::invalid_argument("npy: dtype '" + array.dtype + "' does not match its type");
  }
  if (array.fortran_order) throw std::invalid_argument("npy: writes C order only");
  const std::optional<uint64_t> elements = shape_element_count(array.shape);
  uint64_t bytes = 0;
  if (!elements || __builtin_mul_overflow(*elements, scalar->item_size, &bytes) || bytes != array.data.size()) {
    throw std::invalid_argument("npy: " + std::to_string(array.data.size()) + " data bytes do not match shape " +
                                shape_text(array.shape) + " of " + array.dtype);
  }
}

}  // namespace

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

std::optional<uint64_t> shape_element_count(const std::vector<uint64_t>& shape) {
  uint64_t count = 1;
  for (const uint64_t dim : shape) {
    if (__builtin_mul_overflow(count, dim, &count)) return std::nullopt;
  }
  return count;
}

std::string_view npy_descr(NpyType type) {
  switch (type) {
    case NpyType::kFloat16:
      return "<f2";
    case NpyType::kFloat32:
      return "<f4";
    case NpyType::kUint8:
      return "|u1";
    case NpyType::kOther:
      break;
  }
  throw std::invalid_argument("npy_descr: kOther has no single descr");
}

NpyArray make_npy(NpyType type, std::vector<uint64_t> shape, std::vector<uint8_t> data) {
  NpyArray array{std::string(npy_descr(type)), type, std::move(shape), false, std::move(data)};
  check_writable(array);
  return array;
}

NpyArray parse_npy(std::string_view bytes, const std::string& file) {
  const Preamble preamble = read_preamble(bytes, file);
  HeaderFields fields = HeaderParser(preamble.header, file).parse();
  if (fields.fortran_order) {
    fail(file, "fortran_order: True is not supported (save the array in C order)");
  }
  const ScalarType& scalar = accepted_scalar_type(fields.descr, file);
  NpyArray array{std::move(fields.descr), scalar.type, std::move(fields.shape), false, {}};
  array.data = copy_data(bytes.substr(preamble.data_offset), array, scalar.item_size, file);
  return array;
}

NpyArray read_npy(const std::string& path) {
  const MappedFile file(path);
  return parse_npy(file.view(), path);
}

std::string npy_bytes(const NpyArray& array) {
  check_writable(array);
  return wrapped_header(header_text(array)) +
         std::string(reinterpret_cast<const char*>(array.data.data()), array.data.size());
}

void write_npy(const std::string& path, const NpyArray& array) { write_file_atomically(path, npy_bytes(array)); }

void expect_npy(const NpyArray& array, const std::string& file, NpyType type, const std::vector<uint64_t>& shape) {
  if (type == NpyType::kOther) throw std::invalid_argument("expect_npy: name a type");
  if (array.type != type) {
    fail(file, "dtype: expected " + describe_dtype(npy_descr(type)) + ", got " + describe_dtype(array.dtype));
  }
  if (array.shape != shape) {
    fail(file, "shape: expected " + shape_text(shape) + ", got " + shape_text(array.shape));
  }
}

}  // namespace lockstep::arch
