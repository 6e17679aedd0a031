// NumPy .npy files: round trips, headers written by hand as NumPy writes them (1.0, 2.0, 3.0),
// every refusal with its exact message, and a fixed-seed loop of truncated and corrupted
// files that must read or fail with InputError, allocating no more than a few times the file.
#include "formats/npy.hpp"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/errors.hpp"
#include "support/test_support.hpp"
#include "tests/formats/corrupted_files.hpp"

namespace lockstep::arch {
namespace {

std::vector<uint8_t> pattern(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(size);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

size_t item_bytes(NpyType type) { return type == NpyType::kFloat32 ? 4 : type == NpyType::kFloat16 ? 2 : 1; }

// A file with exactly this header text (no padding added) after a version `major` preamble.
std::string npy_file(int major, const std::string& header, const std::string& data = "") {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const size_t length_bytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < length_bytes; ++i) out += static_cast<char>(header.size() >> (8 * i));
  return out + header + data;
}

std::string as_string(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

std::string error_of(const std::string& bytes) {
  try {
    parse_npy(bytes, "image.npy");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string header_with(const std::string& descr, const std::string& order, const std::string& shape) {
  return "{'descr': " + descr + ", 'fortran_order': " + order + ", 'shape': " + shape + ", }\n";
}

TEST(NpyRoundTrip, EveryTypeAndShapeThroughAFile) {
  const std::string dir = testing::temp_dir("npy_round_trip");
  const std::vector<std::vector<uint64_t>> shapes = {{}, {0}, {3}, {2, 3}, {2, 0, 4}, {1, 1, 1, 5}, {7, 3, 2}};
  uint32_t seed = 1;
  for (const NpyType type : {NpyType::kFloat16, NpyType::kFloat32, NpyType::kUint8}) {
    for (const auto& shape : shapes) {
      const uint64_t elements = *shape_element_count(shape);
      const NpyArray array = make_npy(type, shape, pattern(elements * item_bytes(type), seed++));
      const std::string path = dir + "/a.npy";
      write_npy(path, array);
      const NpyArray back = read_npy(path);
      EXPECT_EQ(back.dtype, npy_descr(type));
      EXPECT_EQ(back.type, type);
      EXPECT_EQ(back.shape, shape);
      EXPECT_FALSE(back.fortran_order);
      EXPECT_EQ(back.data, array.data);
      const std::string file = testing::read_file(path);
      const size_t header_end = file.size() - array.data.size();
      EXPECT_EQ(header_end % 64, 0u) << shape_text(shape);
      EXPECT_EQ(file[header_end - 1], '\n');
      EXPECT_EQ(file[6], 1);  // version 1.0
    }
  }
}

// np.save("a.npy", np.array([1, 2, 3], dtype=np.float16)) writes exactly these bytes.
TEST(NpyWrite, MatchesNumpyByteForByte) {
  const std::vector<uint8_t> data = {0x00, 0x3c, 0x00, 0x40, 0x00, 0x42};
  std::string want("\x93NUMPY\x01\x00\x76\x00", 10);
  want += "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }";
  want += std::string(127 - want.size(), ' ') + "\n" + as_string(data);
  EXPECT_EQ(npy_bytes(make_npy(NpyType::kFloat16, {3}, data)), want);
}

TEST(NpyWrite, UsesVersionTwoWhenTheHeaderExceeds65535Bytes) {
  const std::vector<uint64_t> shape(25000, 1);  // "1, " each: a 75 KB header
  const NpyArray array = make_npy(NpyType::kFloat32, shape, {1, 2, 3, 4});
  const std::string bytes = npy_bytes(array);
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ((bytes.size() - 4) % 64, 0u);
  const NpyArray back = parse_npy(bytes, "big.npy");
  EXPECT_EQ(back.shape, shape);
  EXPECT_EQ(back.data, array.data);
}

TEST(NpyWrite, RefusesInconsistentArrays) {
  EXPECT_THROW(make_npy(NpyType::kFloat16, {3}, {1, 2}), std::invalid_argument);
  NpyArray fortran = make_npy(NpyType::kUint8, {2}, {1, 2});
  fortran.fortran_order = true;
  EXPECT_THROW(npy_bytes(fortran), std::invalid_argument);
  NpyArray unknown = make_npy(NpyType::kUint8, {2}, {1, 2});
  unknown.dtype = ">u2";
  EXPECT_THROW(npy_bytes(unknown), std::invalid_argument);
  EXPECT_THROW(make_npy(NpyType::kOther, {}, {}), std::invalid_argument);
}

TEST(NpyRead, HandWrittenVersionOneHeader) {
  // Keys in another order, double quotes, no trailing comma, an old 16-byte padding.
  const std::string header = "{\"shape\": (2, 3), 'descr': '<f2', 'fortran_order': False}    \n";
  const std::vector<uint8_t> data = pattern(12, 7);
  const NpyArray array = parse_npy(npy_file(1, header, as_string(data)), "h.npy");
  EXPECT_EQ(array.dtype, "<f2");
  EXPECT_EQ(array.type, NpyType::kFloat16);
  EXPECT_EQ(array.shape, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(array.data, data);
}

TEST(NpyRead, HandWrittenVersionTwoAndThreeHeaders) {
  for (const int major : {2, 3}) {
    const std::string header =
        "{'descr': '|u1', 'fortran_order': False, 'shape': (4,), }" + std::string(200, ' ') + "\n";
    const NpyArray array = parse_npy(npy_file(major, header, "abcd"), "h.npy");
    EXPECT_EQ(array.type, NpyType::kUint8);
    EXPECT_EQ(array.shape, std::vector<uint64_t>{4});
    EXPECT_EQ(as_string(array.data), "abcd");
  }
}

TEST(NpyRead, ScalarsEmptyArraysPythonTwoLongsAndOtherNumberTypes) {
  EXPECT_EQ(parse_npy(npy_file(1, header_with("'<f4'", "False", "()"), "abcd"), "s.npy").shape,
            std::vector<uint64_t>{});
  EXPECT_EQ(parse_npy(npy_file(1, header_with("'<f4'", "False", "(0, 5)")), "e.npy").shape,
            (std::vector<uint64_t>{0, 5}));
  EXPECT_EQ(parse_npy(npy_file(1, header_with("'<f2'", "False", "(2L, 1L)"), "abcd"), "l.npy").shape,
            (std::vector<uint64_t>{2, 1}));
  const NpyArray ints = parse_npy(npy_file(1, header_with("'<i4'", "False", "(1,)"), "abcd"), "i.npy");
  EXPECT_EQ(ints.type, NpyType::kOther);
  EXPECT_EQ(ints.dtype, "<i4");
}

TEST(NpyRead, MissingFileNamesIt) {
  try {
    read_npy("/nonexistent/image.npy");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/image.npy: cannot open: No such file or directory");
  }
}

TEST(NpyRead, RefusalsOfThePreamble) {
  EXPECT_EQ(error_of(""), "image.npy: truncated: 0 bytes, shorter than the preamble");
  EXPECT_EQ(error_of(std::string("\x93NUMPY\x01", 7)), "image.npy: truncated: 7 bytes, shorter than the preamble");
  EXPECT_EQ(error_of(std::string("\x93NUMPY\x02\x00\x10\x00", 10)),
            "image.npy: truncated: 10 bytes, shorter than the preamble");
  EXPECT_EQ(error_of("PK\x03\x04 a zip file"), "image.npy: not a .npy file (bad magic)");
  std::string v4 = npy_file(1, header_with("'<f2'", "False", "()"), "ab");
  v4[6] = 4;
  EXPECT_EQ(error_of(v4), "image.npy: unsupported .npy format version 4.0");
  std::string v11 = npy_file(1, header_with("'<f2'", "False", "()"), "ab");
  v11[7] = 1;
  EXPECT_EQ(error_of(v11), "image.npy: unsupported .npy format version 1.1");
  std::string long_header = npy_file(2, "{}");
  long_header[8] = '\x88';
  long_header[9] = '\x13';  // 5000
  EXPECT_EQ(error_of(long_header), "image.npy: header length 5000 exceeds the file (14 bytes)");
  long_header[11] = '\xff';
  EXPECT_EQ(error_of(long_header), "image.npy: header length 4278195080 exceeds the file (14 bytes)");
}

TEST(NpyRead, RefusalsOfTheDtype) {
  const auto error_for = [](const std::string& descr) {
    return error_of(npy_file(1, header_with(descr, "False", "()"), "abcd"));
  };
  EXPECT_EQ(error_for("'>f4'"), "image.npy: descr: big-endian '>f4' is not supported");
  EXPECT_EQ(error_for("'|O'"), "image.npy: descr: object arrays ('|O') are not supported");
  EXPECT_EQ(error_for("'|V4'"), "image.npy: descr: structured or void dtypes ('|V4') are not supported");
  EXPECT_EQ(error_for("[('a', '<f4')]"), "image.npy: descr: structured dtypes are not supported");
  EXPECT_EQ(error_for("'<U1'"), "image.npy: descr: unsupported dtype '<U1'");
  EXPECT_EQ(error_for("'|f4'"), "image.npy: descr: unsupported dtype '|f4'");
  EXPECT_EQ(error_for("'<f16'"), "image.npy: descr: unsupported dtype '<f16'");
  EXPECT_EQ(error_of(npy_file(1, header_with("'<f4'", "True", "(1,)"), "abcd")),
            "image.npy: fortran_order: True is not supported (save the array in C order)");
}

TEST(NpyRead, RefusalsOfTheHeaderDictionary) {
  const auto error_for = [](const std::string& header) { return error_of(npy_file(1, header, "ab")); };
  EXPECT_EQ(error_for("{'descr': '<f2', 'fortran_order': False}"), "image.npy: header: missing key 'shape'");
  EXPECT_EQ(error_for("{'descr': '<f2', 'fortran_order': False, 'shape': (), 'x': 1}"),
            "image.npy: header: unexpected key 'x'");
  EXPECT_EQ(error_for("{'descr': '<f2', 'descr': '<f2'}"), "image.npy: header: key 'descr' appears twice");
  EXPECT_EQ(error_for("{'descr' '<f2'}"), "image.npy: header: expected ':' at header byte 9");
  EXPECT_EQ(error_for("{'descr': '<f2', 'fortran_order': false, 'shape': ()}"),
            "image.npy: header: expected True or False at header byte 34");
  EXPECT_EQ(error_for("{'descr': '<f2', 'fortran_order': False, 'shape': [1]}"),
            "image.npy: header: expected '(' at header byte 50");
  EXPECT_EQ(error_for("{'descr': '<f2', 'fortran_order': False, 'shape': (1)}"),
            "image.npy: shape: (1) is not a tuple");
  EXPECT_EQ(error_for("{'descr': '<f2', 'fortran_order': False, 'shape': (-1,)}"),
            "image.npy: header: expected a dimension at header byte 51");
  EXPECT_EQ(error_for("{'descr': '<f2', 'fortran_order': False, 'shape': (1,,)}"),
            "image.npy: header: expected a dimension at header byte 53");
  EXPECT_EQ(error_for("{'descr': '<f2', 'fortran_order': False, 'shape': ()} x"),
            "image.npy: header: unexpected text after the dictionary at header byte 54");
  EXPECT_EQ(error_for("{'descr: '<f2'}"), "image.npy: header: expected ':' at header byte 10");
  EXPECT_EQ(error_for("{'descr\n': '<f2'}"), "image.npy: header: unsupported string at header byte 1");
  EXPECT_EQ(error_for("{'descr': '<f2"), "image.npy: header: unterminated string at header byte 10");
  EXPECT_EQ(error_for(""), "image.npy: header: expected '{' at header byte 0");
  EXPECT_EQ(error_for("{'descr': '<f2', 'fortran_order': False, 'shape': (18446744073709551616,)}"),
            "image.npy: shape: a dimension exceeds 2^64");
}

TEST(NpyRead, RefusalsOfTheDataSize) {
  EXPECT_EQ(error_of(npy_file(1, header_with("'<f2'", "False", "(2, 3)"), "0123456789")),
            "image.npy: truncated: shape (2, 3) of <f2 needs 12 data bytes, the file has 10");
  EXPECT_EQ(error_of(npy_file(1, header_with("'<f2'", "False", "(2,)"), "0123456")),
            "image.npy: 3 bytes after the data (shape (2,) of <f2 needs 4)");
  EXPECT_EQ(error_of(npy_file(1, header_with("'<f2'", "False", "(4294967296, 4294967296)"))),
            "image.npy: shape: (4294967296, 4294967296) of <f2 exceeds 2^64 bytes");
  EXPECT_EQ(error_of(npy_file(1, header_with("'<f4'", "False", "(4611686018427387904,)"))),
            "image.npy: shape: (4611686018427387904,) of <f4 exceeds 2^64 bytes");
  EXPECT_EQ(error_of(npy_file(1, header_with("'<f4'", "False", "(1000000000, 1000000000)"))),
            "image.npy: truncated: shape (1000000000, 1000000000) of <f4 needs 4000000000000000000 "
            "data bytes, the file has 0");
}

TEST(NpyExpect, NamesTheFileAndWhatDiffers) {
  const NpyArray image = make_npy(NpyType::kFloat32, {3, 2, 2}, std::vector<uint8_t>(48));
  const auto message = [&](NpyType type, const std::vector<uint64_t>& shape) {
    try {
      expect_npy(image, "image.npy", type, shape);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message(NpyType::kFloat32, {3, 2, 2}), "(no error)");
  EXPECT_EQ(message(NpyType::kFloat16, {3, 2, 2}), "image.npy: dtype: expected <f2 (float16), got <f4 (float32)");
  EXPECT_EQ(message(NpyType::kUint8, {3, 2, 2}), "image.npy: dtype: expected |u1 (uint8), got <f4 (float32)");
  EXPECT_EQ(message(NpyType::kFloat32, {729, 588}), "image.npy: shape: expected (729, 588), got (3, 2, 2)");
  EXPECT_EQ(message(NpyType::kFloat32, {12}), "image.npy: shape: expected (12,), got (3, 2, 2)");
  EXPECT_EQ(message(NpyType::kFloat32, {}), "image.npy: shape: expected (), got (3, 2, 2)");
  const NpyArray ints = parse_npy(npy_file(1, header_with("'<i4'", "False", "()"), "abcd"), "i.npy");
  try {
    expect_npy(ints, "labels.npy", NpyType::kUint8, {});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "labels.npy: dtype: expected |u1 (uint8), got <i4 (int32)");
  }
}

// Truncations and overwritten bytes of a valid file (most in the header): every outcome is a
// read or an InputError naming the file in one line, and no allocation exceeds 8x the file.
TEST(NpyRead, CorruptedFilesReadOrFailCleanly) {
  CorruptionOutcomes outcomes;
  // The first 12 bytes: the preamble and the header's length.
  ASSERT_NO_FATAL_FAILURE(read_corrupted_copies(
      npy_bytes(make_npy(NpyType::kFloat16, {3, 4}, pattern(24, 3))), 12, "fuzz.npy", 8, 256,
      [](const std::string& bytes, const std::string& name) { parse_npy(bytes, name); }, outcomes));
  EXPECT_GT(outcomes.reads, 100);
  EXPECT_GT(outcomes.refusals, 1000);
}

}  // namespace
}  // namespace lockstep::arch
