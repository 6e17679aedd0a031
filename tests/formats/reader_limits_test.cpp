// Hostile input for every reader: mutated and padded Cap'n Proto captures, YAML alias bombs,
// duplicate keys, invalid UTF-8, oversized documents, devices and FIFOs. Each must end in one
// InputError line naming the file (and the line or field), never a crash, hang or bad_alloc.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <random>

#include "arch/machine.hpp"
#include "formats/capture.hpp"
#include "formats/npy.hpp"
#include "formats/package_io.hpp"
#include "formats/safetensors.hpp"
#include "io/input_file.hpp"
#include "io/yaml_reader.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// The bytes of tests/data/captures/small.yaml in the Cap'n Proto form.
std::string small_capture_capnp() {
  const Capture capture = read_capture(testing::source_path("tests/data/captures/small.yaml"));
  const std::string path = testing::temp_dir("capture_capnp") + "/small.capnp";
  write_capture_capnp(capture, path);
  return testing::read_file(path);
}

Capture from_bytes(const std::string& bytes, const std::string& name = "c.capnp") {
  // A vector's storage is 16-aligned, so the message after the 8-byte magic is word-aligned.
  const std::vector<uint8_t> data(bytes.begin(), bytes.end());
  return read_capture_from_bytes(data.data(), data.size(), name);
}

TEST(CaptureCapnpReader, EveryMutationReadsOrIsBadInput) {
  const std::string original = small_capture_capnp();
  ASSERT_EQ(from_bytes(original).phases.size(), 3u);
  std::mt19937_64 random(20240612);
  size_t read = 0, refused = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes = original;
    const int edits = 1 + static_cast<int>(random() % 8);
    for (int e = 0; e < edits && bytes.size() > 8; ++e) {
      const size_t at = 8 + random() % (bytes.size() - 8);  // keep the magic
      switch (random() % 4) {
        case 0:  // a random byte
          bytes[at] = static_cast<char>(random());
          break;
        case 1:  // one flipped bit
          bytes[at] = static_cast<char>(bytes[at] ^ (1 << (random() % 8)));
          break;
        case 2:  // a large 32-bit value (sizes, offsets, counts)
          if (at + 4 <= bytes.size()) {
            const uint32_t big = 0xffffffffu >> (random() % 16);
            std::memcpy(&bytes[at & ~size_t{3}], &big, 4);
          }
          break;
        default:  // truncated to whole words
          bytes.resize(std::max<size_t>(8, at & ~size_t{7}));
          break;
      }
    }
    try {
      (void)capture_stats(from_bytes(bytes));
      ++read;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("c.capnp: ", 0), 0u) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      ++refused;
    }
  }
  EXPECT_GT(read, 0u);
  EXPECT_GT(refused, 1000u);
}

TEST(CaptureCapnpReader, RefusesTrailingData) {
  const std::string original = small_capture_capnp();
  EXPECT_EQ(error_of([&] { from_bytes(original + std::string(8, '\0')); }),
            "c.capnp: corrupt capture: 8 bytes after the message");
  EXPECT_EQ(error_of([&] { from_bytes(original + "x"); }).rfind("c.capnp: truncated capture", 0), 0u);
}

TEST(CaptureCapnpReader, RefusesDestinationOffsetsOutsideTheLists) {
  Capture capture = read_capture(testing::source_path("tests/data/captures/small.yaml"));
  const std::string path = testing::temp_dir("capture_offsets") + "/c.capnp";
  write_capture_capnp(capture, path);
  std::string bytes = testing::read_file(path);
  // Phase 0 has destinationStart [0, 1, 3]; make its middle entry point far past the lists.
  const uint32_t starts[3] = {0, 1, 3};
  const auto at = bytes.find(std::string(reinterpret_cast<const char*>(starts), sizeof starts));
  ASSERT_NE(at, std::string::npos);
  const uint32_t far = 0x7fffffff;
  std::memcpy(&bytes[at + 4], &far, 4);
  EXPECT_EQ(error_of([&] { from_bytes(bytes); }),
            "c.capnp: phase 0 (index 0): destinationStart[1]: 2147483647 is beyond the 3 "
            "destinations");
}

TEST(CaptureCapnpReader, RefusesInvalidUtf8Text) {
  Capture capture = read_capture(testing::source_path("tests/data/captures/small.yaml"));
  capture.phases[1].label = "layer.\xff";
  const std::string path = testing::temp_dir("capture_utf8") + "/c.capnp";
  write_capture_capnp(capture, path);
  EXPECT_EQ(error_of([&] { read_capture(path); }), path + ": phase 7 (index 1): label: invalid UTF-8 at byte 6");
}

TEST(CaptureReader, RefusesAPackage) {
  EXPECT_EQ(error_of([] { from_bytes(std::string("LKSPKG01") + std::string(8, '\0'), "p"); }),
            "p: a package (LKSPKG magic), not a capture");
}

// ---- YAML ------------------------------------------------------------------------------

std::string yaml_error(const std::string& text) {
  return error_of([&] { parse_yaml_text(text, "f.yaml"); });
}

TEST(YamlLimits, RefusesAnAliasBomb) {
  // 9 levels of ten aliases: 10^9 nodes from about 500 bytes.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  EXPECT_EQ(yaml_error(bomb),
            "f.yaml:7: alias *a5 expands the document to more than 4194304 nodes (aliases "
            "expanded; the limit for a YAML file)");
  // A few aliases are fine.
  EXPECT_EQ(yaml_error("a: &x [1, 2]\nb: *x\nc: *x\n"), "(no error)");
}

TEST(YamlLimits, RefusesRecursiveAliasesAndSecondDocuments) {
  EXPECT_EQ(yaml_error("a: &p [1, *p]\n"), "f.yaml:1: alias *p refers to a node that contains it");
  EXPECT_EQ(yaml_error("a: 1\n---\nb: 2\n"), "f.yaml:2: a second YAML document; a file holds exactly one");
  EXPECT_EQ(yaml_error("---\na: 1\n...\n"), "(no error)");
}

TEST(YamlLimits, RefusesDuplicateKeysNamingBothLines) {
  EXPECT_EQ(yaml_error("a: 1\nb:\n  c: 2\n  d: 3\n  c: 4\n"), "f.yaml:5: duplicate key 'c' (first at line 3)");
  EXPECT_EQ(yaml_error("x: {k: 1, k: 2}\n"), "f.yaml:1: duplicate key 'k' (first at line 1)");
  // Quoting does not make a different key; an alias of a scalar key is the same key.
  EXPECT_EQ(yaml_error("a: 1\n\"a\": 2\n"), "f.yaml:2: duplicate key 'a' (first at line 1)");
  EXPECT_EQ(yaml_error("&k a: 1\n*k : 2\n"), "f.yaml:2: duplicate key 'a' (first at line 1)");
  // The same key in different mappings is fine.
  EXPECT_EQ(yaml_error("- {a: 1}\n- {a: 2}\n"), "(no error)");
}

TEST(YamlLimits, RefusesInvalidUtf8WithItsOffset) {
  EXPECT_EQ(yaml_error("a: 1\nb: \"x\xc3\x28\"\n"),
            "f.yaml:2: byte 10: invalid UTF-8 (0xc3); YAML files must be UTF-8");
  EXPECT_EQ(yaml_error("a: \xed\xa0\x80\n"),  // a UTF-16 surrogate
            "f.yaml:1: byte 3: invalid UTF-8 (0xed); YAML files must be UTF-8");
  EXPECT_EQ(yaml_error("a: \xc0\xaf\n"),  // overlong
            "f.yaml:1: byte 3: invalid UTF-8 (0xc0); YAML files must be UTF-8");
  EXPECT_EQ(yaml_error("a: \"\x1b[31m\"\n"),
            "f.yaml:1: byte 4: control character U+001B is not allowed in YAML (only tab, line "
            "feed and carriage return)");
  EXPECT_EQ(yaml_error(std::string("a: 1\0", 5)),
            "f.yaml:1: byte 4: control character U+0000 is not allowed in YAML (only tab, line "
            "feed and carriage return)");
  EXPECT_EQ(yaml_error("label: \"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82\"\n"), "(no error)");
}

TEST(YamlLimits, RefusesDeepNestingAndHugeDocuments) {
  EXPECT_EQ(yaml_error(std::string(300, '[') + std::string(300, ']')), "f.yaml:1: collections nested deeper than 256");
  std::string huge(kMaxYamlDocumentBytes + 1, ' ');
  EXPECT_EQ(yaml_error(huge),
            "f.yaml: 67108865 bytes, more than the limit of 67108864 for a "
            "YAML file");
}

// ---- Regular files only ------------------------------------------------------------------

TEST(InputFiles, EveryReaderRefusesDevicesFifosAndDirectories) {
  const std::string dir = testing::temp_dir("input_files");
  const std::string fifo = dir + "/pipe.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), fifo, dir}) {
    SCOPED_TRACE(path);
    const std::string expected = path + ": not a regular file";
    EXPECT_EQ(error_of([&] { read_capture(path); }), expected);
    EXPECT_EQ(error_of([&] { read_package(path); }), expected);
    EXPECT_EQ(error_of([&] { load_machine(path); }), expected);
    EXPECT_EQ(error_of([&] { read_text_file(path); }), expected);
    EXPECT_EQ(error_of([&] { read_npy(path); }), expected);
    EXPECT_EQ(error_of([&] { read_safetensors(path); }), expected);
    EXPECT_EQ(error_of([&] { read_regular_file(path); }), expected);
  }
  EXPECT_EQ(error_of([&] { read_regular_file(dir + "/missing"); }),
            dir + "/missing: cannot open: No such file or directory");
}

TEST(InputFiles, TextFilesAreBounded) {
  const std::string path = testing::temp_dir("input_bound") + "/t.txt";
  testing::write_file(path, "12345");
  EXPECT_EQ(read_regular_file(path, 5), "12345");
  EXPECT_EQ(error_of([&] { read_regular_file(path, 4); }), path + ": 5 bytes, more than the limit of 4");
}

}  // namespace
}  // namespace lockstep::arch
