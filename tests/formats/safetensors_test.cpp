// safetensors files: round trips through the writer, a header written by hand, every refusal
// with its exact message, and a fixed-seed loop of truncated and corrupted files that must read
// or fail with InputError, allocating no more than a few times the file.
#include "formats/safetensors.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "formats/npy.hpp"
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

// The 8-byte length, then exactly this JSON and these bytes.
std::string safetensors_file(const std::string& json, const std::string& data = "") {
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

// One tensor entry "t" with this body, over `data_size` zero bytes.
std::string tensor_error(const std::string& body, size_t data_size = 8) {
  return error_of(safetensors_file("{\"t\": " + body + "}", std::string(data_size, '\0')));
}

std::vector<SafeTensorData> sample_tensors() {
  return {
      {"encoder.fc1.weight", "F16", {2, 3}, pattern(12, 1)},
      {"scale", "F32", {}, pattern(4, 2)},
      {"empty", "U8", {0}, {}},
      {"bf", "BF16", {4}, pattern(8, 3)},
      {"fp8", "F8_E4M3", {2, 2}, pattern(4, 4)},
      {"a.b", "F16", {1, 0, 3}, {}},
  };
}

TEST(SafeTensorsRoundTrip, EveryTensorAndTheMetadataThroughAFile) {
  const std::string path = testing::temp_dir("safetensors_round_trip") + "/w.safetensors";
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"note", "x"}};
  write_safetensors(path, sample_tensors(), metadata);
  SafeTensors read = read_safetensors(path);
  const SafeTensors copy = read;
  read = SafeTensors();
  const SafeTensors weights = copy;  // the bytes stay valid while any copy lives
  EXPECT_EQ(weights.file(), path);
  EXPECT_EQ(weights.metadata(), metadata);
  EXPECT_EQ(weights.tensors().size(), sample_tensors().size());
  for (const SafeTensorData& want : sample_tensors()) {
    const SafeTensor& got = weights.get(want.name, want.dtype, want.shape);
    EXPECT_EQ(std::vector<uint8_t>(got.bytes.begin(), got.bytes.end()), want.data) << want.name;
    EXPECT_EQ(got.end - got.begin, want.data.size());
  }
  const std::string file = testing::read_file(path);
  EXPECT_EQ(file[0] % 8, 0);  // the header is padded so the data starts 8-aligned
}

TEST(SafeTensorsWrite, ExactBytes) {
  const std::string bytes = safetensors_bytes({{"a", "F32", {2}, {1, 2, 3, 4, 5, 6, 7, 8}}});
  const std::string json = R"({"a":{"data_offsets":[0,8],"dtype":"F32","shape":[2]}})";
  ASSERT_EQ(json.size(), 54u);
  EXPECT_EQ(bytes, safetensors_file(json + "  ", "\x01\x02\x03\x04\x05\x06\x07\x08"));
  EXPECT_EQ(safetensors_bytes({}), safetensors_file("{}      "));
}

TEST(SafeTensorsWrite, RefusesInconsistentTensors) {
  EXPECT_THROW(safetensors_bytes({{"a", "F16", {3}, {1, 2}}}), std::invalid_argument);
  EXPECT_THROW(safetensors_bytes({{"a", "F12", {1}, {1}}}), std::invalid_argument);
  EXPECT_THROW(safetensors_bytes({{"a", "U8", {1}, {1}}, {"a", "U8", {1}, {1}}}), std::invalid_argument);
  EXPECT_THROW(safetensors_bytes({{"__metadata__", "U8", {1}, {1}}}), std::invalid_argument);
}

TEST(SafeTensorsRead, HandWrittenFile) {
  // As the reference writer lays it out: metadata first, data in offset order, padding.
  const std::string json = R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F16","shape":[2,2],"data_offsets":[4,12]},)"
                           R"("b":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}   )";
  const SafeTensors weights = parse_safetensors(safetensors_file(json, "abcd01234567"), "h");
  EXPECT_EQ(weights.metadata().at("format"), "pt");
  const SafeTensor& w = weights.get("w", "F16", {2, 2});
  EXPECT_EQ(std::string(w.bytes.begin(), w.bytes.end()), "01234567");
  EXPECT_EQ(w.begin, 4u);
  const SafeTensor& b = weights.get("b", "U8", {4});
  EXPECT_EQ(std::string(b.bytes.begin(), b.bytes.end()), "abcd");
  EXPECT_EQ(weights.find("c"), nullptr);
}

TEST(SafeTensorsRead, GetNamesTheFileTheTensorAndWhatDiffers) {
  const std::string name = "encoder.layers.0.mlp.fc1.weight";
  const std::string json =
      "{\"" + name + R"(": {"dtype": "F16", "shape": [4304, 1151], "data_offsets": [0, 9907808]}})";
  const SafeTensors weights =
      parse_safetensors(safetensors_file(json, std::string(9907808, '\0')), "weights.safetensors");
  const auto message = [&](const std::string& tensor, const std::string& dtype, const std::vector<uint64_t>& shape) {
    try {
      weights.get(tensor, dtype, shape);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message(name, "F16", {4304, 1151}), "(no error)");
  EXPECT_EQ(message(name, "F16", {4304, 1152}),
            "weights.safetensors: tensor 'encoder.layers.0.mlp.fc1.weight': shape: expected "
            "(4304, 1152), got (4304, 1151)");
  EXPECT_EQ(message(name, "F32", {4304, 1151}),
            "weights.safetensors: tensor 'encoder.layers.0.mlp.fc1.weight': dtype: expected F32, "
            "got F16");
  EXPECT_EQ(message("encoder.layers.0.mlp.fc2.weight", "F16", {1}),
            "weights.safetensors: tensor 'encoder.layers.0.mlp.fc2.weight': missing");
}

TEST(SafeTensorsRead, MissingFileNamesIt) {
  try {
    read_safetensors("/nonexistent/w.safetensors");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/w.safetensors: cannot open: No such file or directory");
  }
}

TEST(SafeTensorsRead, RefusalsOfTheHeader) {
  EXPECT_EQ(error_of("abc"), "weights.safetensors: truncated: 3 bytes, shorter than the 8-byte header length");
  EXPECT_EQ(error_of(std::string("\x00\xe1\xf5\x05\x00\x00\x00\x00{}", 10)),
            "weights.safetensors: header length 100000000 exceeds the file (10 bytes)");
  EXPECT_EQ(error_of(std::string("\x01\xe1\xf5\x05\x00\x00\x00\x00{}", 10)),
            "weights.safetensors: header length 100000001 exceeds the file (10 bytes)");
  EXPECT_EQ(error_of(std::string(8, '\xff') + "{}"),
            "weights.safetensors: header length 18446744073709551615 exceeds the file (10 bytes)");
  EXPECT_EQ(error_of(safetensors_file("[1, 2]")), "weights.safetensors: header: expected a JSON object");
  EXPECT_EQ(error_of(safetensors_file("")).rfind("weights.safetensors: header: invalid JSON: ", 0), 0u);
  EXPECT_EQ(error_of(safetensors_file("{\"t\": 1")).rfind("weights.safetensors: header: invalid JSON: ", 0), 0u);
  EXPECT_EQ(error_of(safetensors_file("{} x")).rfind("weights.safetensors: header: invalid JSON: ", 0), 0u);
  EXPECT_EQ(error_of(safetensors_file(R"({"__metadata__": {"a": 1}})")),
            "weights.safetensors: __metadata__: 'a': expected a string");
  EXPECT_EQ(error_of(safetensors_file(R"({"__metadata__": []})")),
            "weights.safetensors: __metadata__: expected an object of strings");
  EXPECT_EQ(error_of(safetensors_file(R"({"__metadata__": {}})")), "(no error)");
}

TEST(SafeTensorsRead, RefusalsOfATensorEntry) {
  const std::string p = "weights.safetensors: tensor 't': ";
  EXPECT_EQ(tensor_error("[]"), p + "expected an object");
  EXPECT_EQ(tensor_error(R"({"dtype": "F16", "shape": [4]})"), p + "missing key 'data_offsets'");
  EXPECT_EQ(tensor_error(R"({"dtype": "F16", "shape": [4], "data_offsets": [0, 8], "x": 1})"),
            p + "unexpected key 'x'");
  EXPECT_EQ(tensor_error(R"({"dtype": "F4", "shape": [4], "data_offsets": [0, 8]})"), p + "dtype: unsupported 'F4'");
  EXPECT_EQ(tensor_error(R"({"dtype": 2, "shape": [4], "data_offsets": [0, 8]})"), p + "dtype: expected a string");
  EXPECT_EQ(tensor_error(R"({"dtype": "F16", "shape": [-4], "data_offsets": [0, 8]})"),
            p + "shape: expected an array of non-negative integers");
  EXPECT_EQ(tensor_error(R"({"dtype": "F16", "shape": [4.0], "data_offsets": [0, 8]})"),
            p + "shape: expected an array of non-negative integers");
  EXPECT_EQ(tensor_error(R"({"dtype": "F16", "shape": 4, "data_offsets": [0, 8]})"),
            p + "shape: expected an array of non-negative integers");
  EXPECT_EQ(tensor_error(R"({"dtype": "F16", "shape": [4], "data_offsets": [0, 8, 8]})"),
            p + "data_offsets: expected an array of 2 integers");
  EXPECT_EQ(tensor_error(R"({"dtype": "F16", "shape": [4], "data_offsets": [8, 0]})"),
            p + "data_offsets: [8, 0] ends before it begins");
  EXPECT_EQ(tensor_error(R"({"dtype": "F16", "shape": [4], "data_offsets": [4, 12]})"),
            p + "data_offsets: [4, 12] outside the 8 data bytes");
  EXPECT_EQ(tensor_error(R"({"dtype": "F16", "shape": [3], "data_offsets": [0, 8]})"),
            p + "data_offsets: [0, 8] hold 8 bytes, shape (3,) of F16 needs 6");
  EXPECT_EQ(tensor_error(R"({"dtype": "F16", "shape": [4294967296, 4294967296],)"
                         R"( "data_offsets": [0, 8]})"),
            p + "shape: (4294967296, 4294967296) of F16 exceeds 2^64 bytes");
  EXPECT_EQ(tensor_error(R"({"dtype": "F16", "shape": [18446744073709551616], "data_offsets": [0, 8]})"),
            p + "shape: expected an array of non-negative integers");
  EXPECT_EQ(error_of(safetensors_file(R"({"a\nb": []})")), "weights.safetensors: tensor 'a\\x0ab': expected an object");
}

// Truncations and overwritten bytes of a valid file (most in the header): every outcome is a
// read or an InputError naming the file in one line, and no allocation exceeds 16x the file.
TEST(SafeTensorsRead, CorruptedFilesReadOrFailCleanly) {
  CorruptionOutcomes outcomes;
  // The first 8 bytes: the header's length.
  ASSERT_NO_FATAL_FAILURE(read_corrupted_copies(
      safetensors_bytes(sample_tensors(), {{"format", "pt"}}), 8, "fuzz.safetensors", 16, 512,
      [](const std::string& bytes, const std::string& name) { parse_safetensors(bytes, name); }, outcomes));
  EXPECT_GT(outcomes.reads, 100);
  EXPECT_GT(outcomes.refusals, 1000);
}

// Issue 26's edges: a tensor named twice in the header is refused naming it, and a file of
// another kind (a .npy array, a Lockstep package or capture, text) given where safetensors are
// expected is named as what it is, its header length checked against the file before the limit.

std::string entry(int begin, int end) {
  return R"({"dtype": "F32", "shape": [1], "data_offsets": [)" + std::to_string(begin) + ", " + std::to_string(end) +
         "]}";
}

TEST(SafetensorsInputEdges, TensorNamedTwiceIsRefusedNamingItAndTheFile) {
  const std::string twice = safetensors_file(R"({"w": )" + entry(0, 4) + R"(, "w": )" + entry(4, 8) + "}", "01234567");
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
  const std::string dtype_twice =
      safetensors_file(R"({"w": {"dtype": "F32", "dtype": "F16", "shape": [1], "data_offsets": [0, 4]}})", "0123");
  EXPECT_EQ(error_of(dtype_twice), "weights.safetensors: tensor 'w': key 'dtype' appears twice");
  const std::string metadata_key_twice = safetensors_file(R"({"__metadata__": {"a": "1", "a": "2"}})", "");
  EXPECT_EQ(error_of(metadata_key_twice), "weights.safetensors: __metadata__: key 'a' appears twice");
  const std::string metadata_twice = safetensors_file(R"({"__metadata__": {}, "__metadata__": {}})", "");
  EXPECT_EQ(error_of(metadata_twice), "weights.safetensors: __metadata__ appears twice");
}

TEST(SafetensorsInputEdges, DistinctNamesAndEqualKeysInDifferentEntriesStillRead) {
  const SafeTensors read =
      parse_safetensors(safetensors_file(R"({"a": )" + entry(0, 4) + R"(, "b": )" + entry(4, 8) + "}", "01234567"),
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
  EXPECT_EQ(error_of("version: 1\nphases: []\n"), "weights.safetensors: is a text file, not a safetensors file");
  EXPECT_EQ(error_of("{\"w\": \"caf\xc3\xa9\"}\n"), "weights.safetensors: is a text file, not a safetensors file");
  EXPECT_EQ(error_of(std::string("PK\x03\x04", 4) + std::string(60, '\0')),
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
