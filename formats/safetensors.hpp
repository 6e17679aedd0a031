#pragma once
// safetensors weight files: an 8-byte little-endian header length N, N bytes of JSON naming
// each tensor's dtype, shape and byte range, then the bytes. Read through a memory mapping;
// every range and size is checked before use. Rules: docs/formats.md, "NumPy and safetensors".
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::arch {

// Bytes per element of a safetensors dtype ("F16" -> 2, "F8_E4M3" -> 1); nullopt if unknown.
std::optional<size_t> safetensors_item_size(std::string_view dtype);

struct SafeTensor {
  std::string dtype;  // "F16", "F32", "BF16", "F8_E4M3", "U8", ...
  std::vector<uint64_t> shape;
  uint64_t begin = 0;  // data_offsets, relative to the first byte after the header
  uint64_t end = 0;
  // The raw little-endian bytes, inside the file's mapping (or the parsed copy): valid while
  // a SafeTensors holding them lives. Not aligned in general (memcpy out of it).
  std::span<const uint8_t> bytes;
};

// Copies share the mapping.
class SafeTensors {
 public:
  // The tensor `name`, checked: InputError
  // "weights.safetensors: tensor 'x': missing",
  // "weights.safetensors: tensor 'x': dtype: expected F16, got F32" or
  // "weights.safetensors: tensor 'x': shape: expected (4304, 1152), got (4304, 1151)".
  const SafeTensor& get(const std::string& name, std::string_view dtype, const std::vector<uint64_t>& shape) const;
  const SafeTensor* find(const std::string& name) const;

  const std::map<std::string, SafeTensor>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::string& file() const { return file_; }

 private:
  friend SafeTensors parse_safetensors(std::string bytes, const std::string& file);
  friend SafeTensors read_safetensors(const std::string& path);
  static SafeTensors parse(std::string_view bytes, const std::string& file, std::shared_ptr<const void> owner);

  std::string file_;
  std::map<std::string, SafeTensor> tensors_;
  std::map<std::string, std::string> metadata_;  // "__metadata__", string to string
  std::shared_ptr<const void> owner_;            // what `bytes` point into
};

// Maps and validates a whole file. InputError "path: what is wrong" on anything refused: a
// name given twice ("path: tensor 'x': named twice in the header"), and a file of another kind
// named as what it is ("path: is a .npy array, not a safetensors file").
SafeTensors read_safetensors(const std::string& path);

// The same from bytes in memory (kept by the result); `file` names them in messages.
SafeTensors parse_safetensors(std::string bytes, const std::string& file);

// A tensor to write: its bytes are copied into the file.
struct SafeTensorData {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> data;
};

// The file's bytes: tensors in the given order, the header padded with spaces to a multiple
// of 8 bytes. std::invalid_argument on a duplicate or reserved name, an unknown dtype or a
// data size that does not match the shape.
std::string safetensors_bytes(const std::vector<SafeTensorData>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

// safetensors_bytes written atomically (io/atomic_file.hpp: "path.tmp-XXXXXX", then renamed).
void write_safetensors(const std::string& path, const std::vector<SafeTensorData>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace lockstep::arch
