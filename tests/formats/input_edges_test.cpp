// Issue 26's safetensors edges: a tensor named twice in the header is refused naming it, and a
// file of another kind (a .npy array, a Lockstep package or capture, text) given where
// safetensors are expected is named as what it is, its header length checked against the file
// before the size limit.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "formats/npy.hpp"
#include "formats/safetensors.hpp"
#include "io/errors.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

// The 8-byte length, then exactly this JSON and these bytes.
std::string safetensors_file(const std::string& json, const std::string& data) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>(uint64_t{json.size()} >> (8 * i));
  return out + json + data;
}

std::string error_of(const std::string& bytes) {
  try {
    parse_safetensors(bytes, "weights.safetensors");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string entry(int begin, int end) {
  return R"({"dtype": "F32", "shape": [1], "data_offsets": [)" + std::to_string(begin) + ", " +
         std::to_string(end) + "]}";
}

TEST(SafetensorsInputEdges, TensorNamedTwiceIsRefusedNamingItAndTheFile) {
  const std::string twice =
      safetensors_file(R"({"w": )" + entry(0, 4) + R"(, "w": )" + entry(4, 8) + "}", "01234567");
  EXPECT_EQ(error_of(twice), "weights.safetensors: tensor 'w': named twice in the header");
  const std::string path = testing::temp_dir("input_edges_formats") + "/twice.safetensors";
  testing::write_file(path, twice);
  try {
    read_safetensors(path);
    ADD_FAILURE() << "read a file naming 'w' twice";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": tensor 'w': named twice in the header");
  }
}

TEST(SafetensorsInputEdges, KeysRepeatedInsideAnEntryOrTheMetadataAreRefused) {
  const std::string dtype_twice = safetensors_file(
      R"({"w": {"dtype": "F32", "dtype": "F16", "shape": [1], "data_offsets": [0, 4]}})", "0123");
  EXPECT_EQ(error_of(dtype_twice), "weights.safetensors: tensor 'w': key 'dtype' appears twice");
  const std::string metadata_key_twice =
      safetensors_file(R"({"__metadata__": {"a": "1", "a": "2"}})", "");
  EXPECT_EQ(error_of(metadata_key_twice),
            "weights.safetensors: __metadata__: key 'a' appears twice");
  const std::string metadata_twice =
      safetensors_file(R"({"__metadata__": {}, "__metadata__": {}})", "");
  EXPECT_EQ(error_of(metadata_twice), "weights.safetensors: __metadata__ appears twice");
}

TEST(SafetensorsInputEdges, DistinctNamesAndEqualKeysInDifferentEntriesStillRead) {
  const SafeTensors read = parse_safetensors(
      safetensors_file(R"({"a": )" + entry(0, 4) + R"(, "b": )" + entry(4, 8) + "}", "01234567"),
      "weights.safetensors");
  EXPECT_EQ(read.tensors().size(), 2u);
}

TEST(SafetensorsInputEdges, NpyArrayIsNamedAsOne) {
  const std::string npy = npy_bytes(make_npy(NpyType::kFloat32, {2}, std::vector<uint8_t>(8)));
  EXPECT_EQ(error_of(npy), "weights.safetensors: is a .npy array, not a safetensors file");
}

TEST(SafetensorsInputEdges, OtherKnownFilesAreNamedAsWhatTheyAre) {
  EXPECT_EQ(error_of("LKSPKG01" + std::string(64, '\0')),
            "weights.safetensors: is a Lockstep package, not a safetensors file");
  EXPECT_EQ(error_of("LKSCAP01" + std::string(64, '\0')),
            "weights.safetensors: is a Lockstep capture, not a safetensors file");
  EXPECT_EQ(error_of("version: 1\nphases: []\n"),
            "weights.safetensors: is a text file, not a safetensors file");
  EXPECT_EQ(error_of("{\"w\": \"caf\xc3\xa9\"}\n"),
            "weights.safetensors: is a text file, not a safetensors file");
  EXPECT_EQ(
      error_of(std::string("PK\x03\x04", 4) + std::string(60, '\0')),
      "weights.safetensors: is a zip archive (a PyTorch checkpoint?), not a safetensors file");
}

// A header length beyond the file is named as such before the 100 MB limit is considered.
TEST(SafetensorsInputEdges, HeaderLengthIsCheckedAgainstTheFileFirst) {
  EXPECT_EQ(error_of(std::string("\x00\x00\x00\x00\x00\x01\x00\x00{}", 10)),
            "weights.safetensors: header length 1099511627776 exceeds the file (10 bytes)");
  EXPECT_EQ(error_of(std::string(8, '\xff') + "{}"),
            "weights.safetensors: header length 18446744073709551615 exceeds the file (10 bytes)");
}

// Within a file that holds it, a header over 100 MB meets the limit (a sparse file: only the
// length is written).
TEST(SafetensorsInputEdges, HeaderLengthWithinALargeFileIsHeldToTheLimit) {
  const std::string path = testing::temp_dir("input_edges_large") + "/large.safetensors";
  testing::write_file(path, std::string("\x01\xe1\xf5\x05\x00\x00\x00\x00", 8));
  std::filesystem::resize_file(path, 100'000'016);
  try {
    read_safetensors(path);
    ADD_FAILURE() << "read a 100 MB header";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": header length 100000001 exceeds the 100 MB limit");
  }
}

}  // namespace
}  // namespace lockstep::arch
