#pragma once
// NumPy .npy arrays (format versions 1.0, 2.0 and 3.0), the form model inputs and outputs are
// exchanged in. Plain little-endian numbers in C order only; everything else is refused with
// one line "file: what is wrong" (InputError). Rules: docs/formats.md, "NumPy and safetensors".
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::arch {

// The element types the model reads and writes. kOther: another plain little-endian number
// ("<i4", "<f8", "|b1", ...): readable, kept as bytes, refused by expect_npy.
enum class NpyType { kFloat16, kFloat32, kUint8, kOther };

struct NpyArray {
  std::string dtype;  // the descr as in the header, e.g. "<f2"
  NpyType type = NpyType::kOther;
  std::vector<uint64_t> shape;  // () is a scalar: one element
  bool fortran_order = false;   // always false once read; the writer refuses true
  std::vector<uint8_t> data;    // C order, little-endian bytes
};

// "<f2", "<f4", "|u1" (kOther has none: throws std::invalid_argument).
std::string_view npy_descr(NpyType type);

// An array of `type` with its descr filled in; `data` must hold exactly the elements.
NpyArray make_npy(NpyType type, std::vector<uint64_t> shape, std::vector<uint8_t> data);

// Reads and validates a whole file. InputError "path: what is wrong" on anything refused.
NpyArray read_npy(const std::string& path);

// The same from bytes already in memory; `file` names them in messages.
NpyArray parse_npy(std::string_view bytes, const std::string& file);

// The file's bytes: version 1.0 (2.0 when the header exceeds 65535 bytes), C order, header
// padded with spaces to a 64-byte boundary and ended by '\n'. std::invalid_argument when the
// array is inconsistent (unknown descr, data size != elements x item size, fortran_order).
std::string npy_bytes(const NpyArray& array);

// npy_bytes written atomically (io/atomic_file.hpp: "path.tmp-XXXXXX", then renamed over `path`;
// a reader never sees half a file).
void write_npy(const std::string& path, const NpyArray& array);

// InputError unless the array has this type and shape, e.g.
// "image.npy: dtype: expected <f2 (float16), got <f4 (float32)" or
// "image.npy: shape: expected (729, 588), got (3, 224, 224)".
void expect_npy(const NpyArray& array, const std::string& file, NpyType type, const std::vector<uint64_t>& shape);

// Python's spelling of a shape: "()", "(3,)", "(3, 224, 224)".
std::string shape_text(const std::vector<uint64_t>& shape);

// The product of the dimensions (1 for a scalar); nullopt when it overflows uint64.
std::optional<uint64_t> shape_element_count(const std::vector<uint64_t>& shape);

}  // namespace lockstep::arch
