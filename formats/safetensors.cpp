#include "formats/safetensors.hpp"

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "formats/npy.hpp"
#include "io/atomic_file.hpp"
#include "io/errors.hpp"
#include "io/mapped_file.hpp"
#include "io/utf8.hpp"

namespace lockstep::arch {

namespace {

using Json = nlohmann::json;

constexpr size_t kLengthSize = 8;
constexpr uint64_t kMaxHeaderLength = 100'000'000;  // the reference reader's limit
constexpr std::string_view kMetadataKey = "__metadata__";

struct DtypeSize {
  std::string_view dtype;
  size_t size;
};

constexpr std::array kDtypeSizes{
    DtypeSize{"BOOL", 1},    DtypeSize{"U8", 1},      DtypeSize{"I8", 1},  DtypeSize{"F8_E5M2", 1},
    DtypeSize{"F8_E4M3", 1}, DtypeSize{"F8_E8M0", 1}, DtypeSize{"I16", 2}, DtypeSize{"U16", 2},
    DtypeSize{"F16", 2},     DtypeSize{"BF16", 2},    DtypeSize{"I32", 4}, DtypeSize{"U32", 4},
    DtypeSize{"F32", 4},     DtypeSize{"I64", 8},     DtypeSize{"U64", 8}, DtypeSize{"F64", 8},
};

[[noreturn]] void fail(const std::string& file, const std::string& what) { throw InputError(file + ": " + what); }

// A name from the file in quotes, control bytes escaped so the message stays one line.
std::string quoted_name(std::string_view name) {
  std::string text = "'";
  for (const char c : name) {
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) {
      text += c;
      continue;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
    text += escaped;
  }
  return text + "'";
}

std::string tensor_prefix(const std::string& file, std::string_view name) {
  return file + ": tensor " + quoted_name(name) + ": ";
}

uint64_t read_length(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = kLengthSize; i-- > 0;) value = value << 8 | static_cast<uint8_t>(bytes[i]);
  return value;
}

// Files mistaken for safetensors, by their first bytes. None can start a safetensors file:
// read as a header length, each is far beyond any file.
struct OtherFormat {
  std::string_view magic;
  std::string_view what;
};

constexpr std::array kOtherFormats{
    OtherFormat{std::string_view("\x93NUMPY", 6), "a .npy array"},
    OtherFormat{"LKSPKG", "a Lockstep package"},
    OtherFormat{"LKSCAP", "a Lockstep capture"},
    OtherFormat{std::string_view("PK\x03\x04", 4), "a zip archive (a PyTorch checkpoint?)"},
    OtherFormat{"GGUF", "a GGUF file"},
    OtherFormat{std::string_view("\x89HDF\r\n\x1a\n", 8), "an HDF5 file"},
    OtherFormat{std::string_view("\177ELF", 4), "an ELF file"},
};

constexpr size_t kTextSniffBytes = 64;

// The first bytes are UTF-8 text without control bytes other than tab and line ends.
bool looks_like_text(std::string_view bytes) {
  const std::string_view head = bytes.substr(0, kTextSniffBytes);
  for (size_t at = 0; at < head.size();) {
    const auto c = static_cast<unsigned char>(head[at]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return false;
    const size_t length = utf8_sequence_length(head, at);
    if (length == 0) return head.size() < bytes.size() && head.size() - at < 4;  // cut short
    at += length;
  }
  return true;
}

// What a file that cannot be safetensors is, from its first bytes; "" when not known.
std::string other_format(std::string_view bytes) {
  for (const OtherFormat& format : kOtherFormats) {
    if (bytes.starts_with(format.magic)) return std::string(format.what);
  }
  return looks_like_text(bytes) ? "a text file" : "";
}

// The JSON text. The header length is checked against the file first (a file of another
// kind is named as what it is), then against the limit, before anything is read.
std::string_view header_text(std::string_view bytes, const std::string& file) {
  if (bytes.size() < kLengthSize) {
    fail(file, "truncated: " + std::to_string(bytes.size()) + " bytes, shorter than the 8-byte header length");
  }
  const uint64_t length = read_length(bytes);
  if (length > bytes.size() - kLengthSize) {
    const std::string other = other_format(bytes);
    if (!other.empty()) fail(file, "is " + other + ", not a safetensors file");
    fail(file,
         "header length " + std::to_string(length) + " exceeds the file (" + std::to_string(bytes.size()) + " bytes)");
  }
  if (length > kMaxHeaderLength) {
    fail(file, "header length " + std::to_string(length) + " exceeds the 100 MB limit");
  }
  return bytes.substr(kLengthSize, length);
}

// JSON objects keep the last of repeated keys; the header's keys must each appear once.
// Tracks the keys of every open object while parsing, naming the entry a repeat is in.
class RepeatedKeys {
 public:
  explicit RepeatedKeys(const std::string& file) : file_(file) {}

  bool operator()(int, Json::parse_event_t event, const Json& parsed) {
    if (event == Json::parse_event_t::object_start) open_.emplace_back();
    if (event == Json::parse_event_t::object_end) open_.pop_back();
    if (event == Json::parse_event_t::key) check(parsed.get<std::string>());
    return true;
  }

 private:
  void check(const std::string& key) {
    if (open_.size() == 1) entry_ = key;
    if (open_.back().insert(key).second) return;
    if (open_.size() == 1 && key == kMetadataKey) fail(file_, "__metadata__ appears twice");
    if (open_.size() == 1) {
      throw InputError(tensor_prefix(file_, key) + "named twice in the header");
    }
    const std::string where = entry_ == kMetadataKey ? file_ + ": __metadata__: " : tensor_prefix(file_, entry_);
    throw InputError(where + "key " + quoted_name(key) + " appears twice");
  }

  const std::string& file_;
  std::vector<std::set<std::string>> open_;
  std::string entry_;  // the top-level key whose value is being read
};

Json parse_header(std::string_view text, const std::string& file) {
  Json header;
  try {
    header = Json::parse(text.begin(), text.end(), RepeatedKeys(file));
  } catch (const Json::exception& e) {
    fail(file, std::string("header: invalid JSON: ") + e.what());
  }
  if (!header.is_object()) fail(file, "header: expected a JSON object");
  return header;
}

std::map<std::string, std::string> read_metadata(const Json& entry, const std::string& file) {
  std::map<std::string, std::string> metadata;
  if (!entry.is_object()) fail(file, "__metadata__: expected an object of strings");
  for (const auto& [key, value] : entry.items()) {
    if (!value.is_string()) fail(file, "__metadata__: " + quoted_name(key) + ": expected a string");
    metadata.emplace(key, value.get<std::string>());
  }
  return metadata;
}

// A JSON array of non-negative integers, of `size` entries when one is given.
std::vector<uint64_t> read_integers(const Json& value, std::optional<size_t> size, const std::string& where) {
  const std::string what =
      size ? "an array of " + std::to_string(*size) + " integers" : "an array of non-negative integers";
  if (!value.is_array() || (size && value.size() != *size)) throw InputError(where + what);
  std::vector<uint64_t> integers;
  for (const Json& item : value) {
    if (!item.is_number_unsigned()) throw InputError(where + what);
    integers.push_back(item.get<uint64_t>());
  }
  return integers;
}

void check_keys(const Json& entry, const std::string& prefix) {
  if (!entry.is_object()) throw InputError(prefix + "expected an object");
  for (const auto& [key, value] : entry.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      throw InputError(prefix + "unexpected key " + quoted_name(key));
    }
  }
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(key)) throw InputError(prefix + "missing key '" + key + "'");
  }
}

std::string read_dtype(const Json& value, const std::string& prefix) {
  if (!value.is_string()) throw InputError(prefix + "dtype: expected a string");
  const auto dtype = value.get<std::string>();
  if (!safetensors_item_size(dtype)) {
    throw InputError(prefix + "dtype: unsupported " + quoted_name(dtype));
  }
  return dtype;
}

// The byte range must lie in the data and hold exactly the shape's elements.
void check_range(const SafeTensor& tensor, size_t data_size, const std::string& prefix) {
  const std::string range = "[" + std::to_string(tensor.begin) + ", " + std::to_string(tensor.end) + "]";
  if (tensor.begin > tensor.end) throw InputError(prefix + "data_offsets: " + range + " ends before it begins");
  if (tensor.end > data_size) {
    throw InputError(prefix + "data_offsets: " + range + " outside the " + std::to_string(data_size) + " data bytes");
  }
  const std::string what = shape_text(tensor.shape) + " of " + tensor.dtype;
  const std::optional<uint64_t> elements = shape_element_count(tensor.shape);
  uint64_t needed = 0;
  if (!elements || __builtin_mul_overflow(*elements, *safetensors_item_size(tensor.dtype), &needed)) {
    throw InputError(prefix + "shape: " + what + " exceeds 2^64 bytes");
  }
  if (tensor.end - tensor.begin != needed) {
    throw InputError(prefix + "data_offsets: " + range + " hold " + std::to_string(tensor.end - tensor.begin) +
                     " bytes, shape " + what + " needs " + std::to_string(needed));
  }
}

SafeTensor read_tensor(std::string_view name, const Json& entry, std::string_view data, const std::string& file) {
  const std::string prefix = tensor_prefix(file, name);
  check_keys(entry, prefix);
  SafeTensor tensor;
  tensor.dtype = read_dtype(entry.at("dtype"), prefix);
  tensor.shape = read_integers(entry.at("shape"), std::nullopt, prefix + "shape: expected ");
  const std::vector<uint64_t> offsets = read_integers(entry.at("data_offsets"), 2, prefix + "data_offsets: expected ");
  tensor.begin = offsets[0];
  tensor.end = offsets[1];
  check_range(tensor, data.size(), prefix);
  tensor.bytes = {reinterpret_cast<const uint8_t*>(data.data()) + tensor.begin, tensor.end - tensor.begin};
  return tensor;
}

void check_writable(const SafeTensorData& tensor, const Json& header) {
  const std::string what = "safetensors: tensor '" + tensor.name + "': ";
  if (tensor.name == kMetadataKey || header.contains(tensor.name)) {
    throw std::invalid_argument(what + "reserved or duplicate name");
  }
  const std::optional<size_t> item = safetensors_item_size(tensor.dtype);
  if (!item) throw std::invalid_argument(what + "unknown dtype " + tensor.dtype);
  const std::optional<uint64_t> elements = shape_element_count(tensor.shape);
  uint64_t bytes = 0;
  if (!elements || __builtin_mul_overflow(*elements, *item, &bytes) || bytes != tensor.data.size()) {
    throw std::invalid_argument(what + "data size does not match " + shape_text(tensor.shape));
  }
}

}  // namespace

std::optional<size_t> safetensors_item_size(std::string_view dtype) {
  for (const DtypeSize& entry : kDtypeSizes) {
    if (entry.dtype == dtype) return entry.size;
  }
  return std::nullopt;
}

const SafeTensor* SafeTensors::find(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

const SafeTensor& SafeTensors::get(const std::string& name, std::string_view dtype,
                                   const std::vector<uint64_t>& shape) const {
  const SafeTensor* tensor = find(name);
  const std::string prefix = tensor_prefix(file_, name);
  if (!tensor) throw InputError(prefix + "missing");
  if (tensor->dtype != dtype) {
    throw InputError(prefix + "dtype: expected " + std::string(dtype) + ", got " + tensor->dtype);
  }
  if (tensor->shape != shape) {
    throw InputError(prefix + "shape: expected " + shape_text(shape) + ", got " + shape_text(tensor->shape));
  }
  return *tensor;
}

SafeTensors SafeTensors::parse(std::string_view bytes, const std::string& file, std::shared_ptr<const void> owner) {
  const std::string_view text = header_text(bytes, file);
  const Json header = parse_header(text, file);
  const std::string_view data = bytes.substr(kLengthSize + text.size());
  SafeTensors result;
  result.file_ = file;
  result.owner_ = std::move(owner);
  for (const auto& [name, entry] : header.items()) {
    if (name == kMetadataKey) {
      result.metadata_ = read_metadata(entry, file);
    } else {
      result.tensors_.emplace(name, read_tensor(name, entry, data, file));
    }
  }
  return result;
}

SafeTensors parse_safetensors(std::string bytes, const std::string& file) {
  auto owned = std::make_shared<const std::string>(std::move(bytes));
  return SafeTensors::parse(*owned, file, owned);
}

SafeTensors read_safetensors(const std::string& path) {
  auto mapping = std::make_shared<const MappedFile>(path);
  return SafeTensors::parse(mapping->view(), path, mapping);
}

std::string safetensors_bytes(const std::vector<SafeTensorData>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) header[std::string(kMetadataKey)] = metadata;
  std::string data;
  for (const SafeTensorData& tensor : tensors) {
    check_writable(tensor, header);
    const uint64_t begin = data.size();
    header[tensor.name] = {{"dtype", tensor.dtype},
                           {"shape", tensor.shape},
                           {"data_offsets", Json::array({begin, begin + tensor.data.size()})}};
    data.append(reinterpret_cast<const char*>(tensor.data.data()), tensor.data.size());
  }
  std::string text = header.dump();
  text.append((kLengthSize - text.size() % kLengthSize) % kLengthSize, ' ');  // aligns the data
  std::string out(kLengthSize, '\0');
  for (size_t i = 0; i < kLengthSize; ++i) out[i] = static_cast<char>(text.size() >> (8 * i) & 0xff);
  return out + text + data;
}

void write_safetensors(const std::string& path, const std::vector<SafeTensorData>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  write_file_atomically(path, safetensors_bytes(tensors, metadata));
}

}  // namespace lockstep::arch
