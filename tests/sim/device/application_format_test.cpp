// The device image (`.ipuexe`, IPU21-DEVICE.md section 12): write, read, write gives the
// same bytes; a message built with capnp's raw builder against the section's ordinals
// reads back field by field (so the schema's ordinals are the stack's); every 8-byte
// truncation, a foreign file and each rule of 12.3 is refused with one line naming it.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>

#include "io/errors.hpp"
#include "sim/device/application.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

Application sample_application() {
  Application app;
  app.compiler_version = "lockstep test";
  for (uint32_t phys : {0u, 2u, 64u}) {
    TileImage tile{phys, 0x4c010, {}, 0, 0x58000};
    tile.segments.push_back(
        {0x4c010, 8, {0x00, 0x10, 0x05, 0x19, 0x00, 0x00, 0x00, 0x43}, kSegmentRead | kSegmentExecute});
    tile.segments.push_back({0x58000, 0x6e0, {0, 0, 0, 0}, kSegmentRead | kSegmentWrite});
    tile.segments.push_back({0x70000, 64, {}, kSegmentRead | kSegmentWrite});
    app.tiles.push_back(tile);
  }
  app.inputs.push_back({"x", "f16", {2, 4}, {{0, 0x70000, 0, 8}, {2, 0x70000, 8, 8}}});
  app.outputs.push_back({"y", "f32", {2}, {{64, 0x70000, 0, 8}}});
  app.weights.push_back({"w", "u8", {3}, {{0, 0x70010, 0, 3}}});
  app.host_exchange = {23, 0, 0, {{0, 4096}, {1, 8192}}, {0, 1}, {}};
  HostCall run;
  run.name = "run";
  run.phases = 3;
  run.inputs = {{1, 0, 0, 16}};
  run.outputs = {{1, 4096, 0, 8}};
  run.invocations = 2;
  run.input_batch_ends = {1};
  run.output_batch_ends = {1};
  app.host_exchange.calls.push_back(run);
  app.entry_points.push_back({"run", 0, 0});
  app.device_config_writes.push_back({0x4018, 7});
  PlanStep step;
  step.step.kernel = "exchange";
  step.step.kind = ProfileStepKind::Exchange;
  step.step.metadata = {{"reason", "x"}};
  step.step.activities = {{ActivityKind::Receive, 1, 5}};
  step.epoch = 3;
  app.profile_tiles.push_back({2, {step}});
  app.debug_symbols.push_back({"lockstep_start", 0x60000});
  app.debug_regions.push_back({kDebugAllTiles, 0x60000, 256, "generated tile program"});
  return app;
}

void expect_refused(const Application& app, const std::string& text) {
  try {
    validate_application(app, "app.ipuexe");
    FAIL() << "accepted; expected: " << text;
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "app.ipuexe: " + text);
  }
}

TEST(ApplicationFormat, RoundTripsByteForByte) {
  const std::string dir = testing::temp_dir("application_format");
  const Application app = sample_application();
  write_application(app, dir + "/a.ipuexe");
  const Application back = read_application(dir + "/a.ipuexe");
  EXPECT_EQ(back, app);
  write_application(back, dir + "/b.ipuexe");
  EXPECT_EQ(testing::read_file(dir + "/a.ipuexe"), testing::read_file(dir + "/b.ipuexe"));
  EXPECT_EQ(testing::read_file(dir + "/a.ipuexe"), application_bytes(app));
}

TEST(ApplicationFormat, EveryTruncationIsOneLine) {
  const std::string bytes = application_bytes(sample_application());
  for (size_t size = 0; size < bytes.size(); size += 8) {
    std::vector<capnp::word> words(size / 8 + 1);
    std::memcpy(words.data(), bytes.data(), size);
    try {
      parse_application(reinterpret_cast<const uint8_t*>(words.data()), size, "cut.ipuexe");
      FAIL() << "a file cut to " << size << " bytes was read";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("cut.ipuexe: ", 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(ApplicationFormat, ForeignFilesAreRefused) {
  const std::string dir = testing::temp_dir("application_foreign");
  testing::write_file(dir + "/p.ipuexe", std::string("LKSPKG01") + std::string(64, '\0'));
  EXPECT_THROW(read_application(dir + "/p.ipuexe"), InputError);
  Application app = sample_application();
  app.schema_version = 4;
  const std::string old = application_bytes(app);
  try {
    parse_application(reinterpret_cast<const uint8_t*>(old.data()), old.size(), "app.ipuexe");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "app.ipuexe: incompatible package header: schemaVersion 4 (expected 5)");
  }
}

// A message built word by word from the encoding rules and the ordinals of section 12.1
// (data fields laid out by ordinal, each in the first free aligned slot; pointers in
// ordinal order), independent of the generated code: it must read back field by field.
class RawMessage {
 public:
  size_t alloc(size_t words) {
    words_.resize(words_.size() + words, 0);
    return words_.size() - words;
  }
  // A struct with `data` words and `pointers` pointers, pointed to from word `at`.
  size_t add_struct(size_t at, uint16_t data, uint16_t pointers) {
    const size_t s = alloc(data + pointers);
    words_[at] = (uint64_t(s - at - 1) << 2) | (uint64_t(data) << 32) | (uint64_t(pointers) << 48);
    return s;
  }
  // A list of `count` structs; returns the first element's word.
  size_t add_struct_list(size_t at, uint32_t count, uint16_t data, uint16_t pointers) {
    const size_t tag = alloc(1 + size_t(count) * (data + pointers));
    const uint64_t words = uint64_t(count) * (data + pointers);
    words_[at] = 1 | (uint64_t(tag - at - 1) << 2) | (uint64_t(7) << 32) | (words << 35);
    words_[tag] = (uint64_t(count) << 2) | (uint64_t(data) << 32) | (uint64_t(pointers) << 48);
    return tag + 1;
  }
  void add_bytes(size_t at, const std::string& bytes, bool text) {
    const size_t n = bytes.size() + (text ? 1 : 0);
    const size_t s = alloc((n + 7) / 8);
    std::memcpy(reinterpret_cast<char*>(&words_[s]), bytes.data(), bytes.size());
    words_[at] = 1 | (uint64_t(s - at - 1) << 2) | (uint64_t(2) << 32) | (uint64_t(n) << 35);
  }
  void add_u32s(size_t at, const std::vector<uint32_t>& values) {
    const size_t s = alloc((values.size() + 1) / 2);
    std::memcpy(&words_[s], values.data(), 4 * values.size());
    words_[at] = 1 | (uint64_t(s - at - 1) << 2) | (uint64_t(4) << 32) | (uint64_t(values.size()) << 35);
  }
  void u32(size_t word, size_t byte, uint32_t v) { std::memcpy(reinterpret_cast<char*>(&words_[word]) + byte, &v, 4); }
  void u64(size_t word, uint64_t v) { words_[word] = v; }
  std::string file() const {
    std::string out(8, '\0');
    const uint32_t size = static_cast<uint32_t>(words_.size());
    std::memcpy(out.data() + 4, &size, 4);
    out.append(reinterpret_cast<const char*>(words_.data()), 8 * words_.size());
    return out;
  }

 private:
  std::vector<uint64_t> words_;
};

TEST(ApplicationFormat, OrdinalsAreTheStacks) {
  RawMessage m;
  const size_t root_ptr = m.alloc(1);
  const size_t root = m.add_struct(root_ptr, 2, 12);  // data: @0 +0, @3 +4, @4 +8
  m.u32(root, 0, 5);
  m.u32(root, 4, 0x4c000);
  m.u32(root + 1, 0, 638976);
  const size_t ptrs = root + 2;
  m.add_bytes(ptrs + 0, "raw 1.0", true);  // @1 compilerVersion
  m.add_bytes(ptrs + 1, "ipu21", true);    // @2 target
  // @5 tiles: TileImage data @0 +0, @1 +4, @3 +8, @4 +12; pointer @2 segments.
  const size_t tile = m.add_struct_list(ptrs + 2, 1, 2, 1);
  m.u32(tile, 0, 77);
  m.u32(tile, 4, 0x4c010);
  m.u32(tile + 1, 0, 0x123);
  m.u32(tile + 1, 4, 0x58000);
  // Segment data @0 +0, @1 +4, @3 +8; pointer @2 data.
  const size_t seg = m.add_struct_list(tile + 2, 1, 2, 1);
  m.u32(seg, 0, 0x4c010);
  m.u32(seg, 4, 16);
  m.u32(seg + 1, 0, 5);
  m.add_bytes(seg + 2, std::string("\x01\x02\x03", 3), false);
  // @7 outputs: Binding pointers name, dtype, shape, slices; RegionSlice @0 +0, @1 +4, @2 w1, @3 w2.
  const size_t out = m.add_struct_list(ptrs + 4, 1, 0, 4);
  m.add_bytes(out, "y", true);
  m.add_bytes(out + 1, "f16", true);
  m.add_u32s(out + 2, {2, 3});
  const size_t slice = m.add_struct_list(out + 3, 1, 3, 0);
  m.u32(slice, 0, 77);
  m.u32(slice, 4, 0x70000);
  m.u64(slice + 1, 40);
  m.u64(slice + 2, 12);
  // @9 hostExchange: @0 +0, @1 +4, @2 word 1; pointers pages, attachOrder, calls.
  const size_t host = m.add_struct(ptrs + 6, 2, 3);
  m.u32(host, 0, 23);
  m.u32(host, 4, 0);
  m.u64(host + 1, 8);
  const size_t page = m.add_struct_list(host + 2, 1, 2, 0);  // HostPage @0 +0, @1 word 1
  m.u32(page, 0, 0);
  m.u64(page + 1, 4096);
  m.add_u32s(host + 3, {0});
  // HostCall: data @1 +0, @2 +4, @5 +8 (XOR 1); pointers name, inputs, outputs, batch ends.
  const size_t call = m.add_struct_list(host + 4, 1, 2, 5);
  m.u32(call, 0, 9);
  m.u32(call, 4, 0);
  m.u32(call + 1, 0, 3 ^ 1);
  m.add_bytes(call + 2, "run", true);
  // @10 entryPoints: data @1 +0, @2 +4; pointer name.
  const size_t entry = m.add_struct_list(ptrs + 7, 1, 1, 1);
  m.u32(entry, 0, 4);
  m.u32(entry, 4, 1);
  m.add_bytes(entry + 1, "run", true);
  // @11 deviceConfigWrites: @0 +0, @1 +4.
  const size_t write = m.add_struct_list(ptrs + 8, 1, 1, 0);
  m.u32(write, 0, 0x4018);
  m.u32(write, 4, 99);
  // @13 debugSymbols: pointer name, data @1 +0.  @14 debugRegions: @0 +0, @1 +4, @2 +8; name.
  const size_t sym = m.add_struct_list(ptrs + 10, 1, 1, 1);
  m.u32(sym, 0, 0x60000);
  m.add_bytes(sym + 1, "lockstep_start", true);
  const size_t region = m.add_struct_list(ptrs + 11, 1, 2, 1);
  m.u32(region, 0, 77);
  m.u32(region, 4, 0x60000);
  m.u32(region + 1, 0, 64);
  m.add_bytes(region + 2, "generated tile program", true);

  const std::string file = m.file();
  std::vector<capnp::word> aligned(file.size() / 8);
  std::memcpy(aligned.data(), file.data(), file.size());
  const Application app = parse_application(reinterpret_cast<const uint8_t*>(aligned.data()), file.size(), "raw");
  EXPECT_EQ(app.compiler_version, "raw 1.0");
  ASSERT_EQ(app.tiles.size(), 1u);
  const TileImage& t = app.tiles[0];
  EXPECT_EQ(t.physical_tile, 77u);
  EXPECT_EQ(t.entry_point, 0x4c010u);
  EXPECT_EQ(t.command_address, 0x123u);
  EXPECT_EQ(t.diagnostic_address, 0x58000u);
  ASSERT_EQ(t.segments.size(), 1u);
  EXPECT_EQ(t.segments[0], (AppSegment{0x4c010, 16, {1, 2, 3}, 5}));
  ASSERT_EQ(app.outputs.size(), 1u);
  EXPECT_EQ(app.outputs[0], (AppBinding{"y", "f16", {2, 3}, {{77, 0x70000, 40, 12}}}));
  EXPECT_EQ(app.host_exchange.startup_mark, 23u);
  EXPECT_EQ(app.host_exchange.command_offset, 8u);
  EXPECT_EQ(app.host_exchange.pages, (std::vector<HostPage>{{0, 4096}}));
  EXPECT_EQ(app.host_exchange.attach_order, (std::vector<uint32_t>{0}));
  ASSERT_EQ(app.host_exchange.calls.size(), 1u);
  EXPECT_EQ(app.host_exchange.calls[0].name, "run");
  EXPECT_EQ(app.host_exchange.calls[0].command, 9u);
  EXPECT_EQ(app.host_exchange.calls[0].invocations, 3u);
  EXPECT_EQ(app.entry_points, (std::vector<EntryPoint>{{"run", 4, 1}}));
  EXPECT_EQ(app.device_config_writes, (std::vector<DeviceConfigWrite>{{0x4018, 99}}));
  EXPECT_EQ(app.debug_symbols, (std::vector<DebugSymbol>{{"lockstep_start", 0x60000}}));
  EXPECT_EQ(app.debug_regions, (std::vector<DebugRegion>{{77, 0x60000, 64, "generated tile program"}}));
  // And the generated writer puts the fields in the same places: rewritten, it reads the same.
  const std::string again = application_bytes(app);
  std::vector<capnp::word> words(again.size() / 8);
  std::memcpy(words.data(), again.data(), again.size());
  EXPECT_EQ(parse_application(reinterpret_cast<const uint8_t*>(words.data()), again.size(), "again"), app);
}

TEST(ApplicationFormat, HeaderMismatchesAreIncompatible) {
  Application app = sample_application();
  app.target = "ipu2";
  expect_refused(app, "incompatible package header: target \"ipu2\" (expected \"ipu21\")");
  app = sample_application();
  app.tile_memory_base = 0x4c010;
  expect_refused(app, "incompatible package header: tileMemoryBase 311312 (expected 311296)");
  app = sample_application();
  app.tile_memory_size = 1;
  expect_refused(app, "incompatible package header: tileMemorySize 1 (expected 638976)");
}

struct Rule {
  const char* message;
  std::function<void(Application&)> change;
};

TEST(ApplicationFormat, EachRuleOf12_3) {
  const std::vector<Rule> rules = {
      {"tiles: no tiles (an application needs at least one)", [](Application& a) { a.tiles.clear(); }},
      {"tiles[1].physicalTile: 0 appears twice", [](Application& a) { a.tiles[1].physical_tile = 0; }},
      {"tiles[2].segments[2]: 0xe8000+16 outside tile memory [0x4c000, 0xe8000)",
       [](Application& a) {
         a.tiles[2].segments[2] = {0xe8000, 16, {}, 1};
       }},
      {"tiles[0].segments[0]: 0x4b000+8 outside tile memory [0x4c000, 0xe8000)",
       [](Application& a) { a.tiles[0].segments[0].address = 0x4b000; }},
      {"tiles[0].segments[2]: data is 65 bytes, more than memorySize 64",
       [](Application& a) { a.tiles[0].segments[2].data.assign(65, 1); }},
      {"tiles[0].segments[2]: 0x586dc overlaps segments[1] (0x58000+1760)",
       [](Application& a) { a.tiles[0].segments[2].address = 0x586dc; }},
      {"deviceConfigWrites[0].offset: 0x4019 is not 4-byte aligned",
       [](Application& a) { a.device_config_writes[0].offset = 0x4019; }},
      {"deviceConfigWrites[1].offset: 0x4018 is written twice",
       [](Application& a) {
         a.device_config_writes.push_back({0x4018, 1});
       }},
      {"profileTiles[0].physicalTile: 5 is not a tile of the application",
       [](Application& a) { a.profile_tiles[0].physical_tile = 5; }},
      {"profileTiles[1].physicalTile: 2 has a second plan",
       [](Application& a) { a.profile_tiles.push_back(a.profile_tiles[0]); }},
      {"profileTiles[0].steps[0].localIndex: 1 (expected 0)",
       [](Application& a) { a.profile_tiles[0].steps[0].step.local_index = 1; }},
      {"debugSymbols[0].name: empty", [](Application& a) { a.debug_symbols[0].name.clear(); }},
      {"debugRegions[0].name: empty", [](Application& a) { a.debug_regions[0].name.clear(); }},
      {"debugRegions[0].size: 0 (a region needs at least one byte)",
       [](Application& a) { a.debug_regions[0].size = 0; }},
      {"debugRegions[0]: 0xffffff00+512 overflows 32 bits",
       [](Application& a) {
         a.debug_regions[0].address = 0xffffff00;
         a.debug_regions[0].size = 512;
       }},
      {"debugRegions[0].physicalTile: 7 is not a tile of the application",
       [](Application& a) { a.debug_regions[0].physical_tile = 7; }},
      {"outputs[0].name: empty", [](Application& a) { a.outputs[0].name.clear(); }},
      {"weights[0].name: 'x' names a second binding", [](Application& a) { a.weights[0].name = "x"; }},
      {"inputs[0].slices[1].tile: 3 is not a tile of the application",
       [](Application& a) { a.inputs[0].slices[1].tile = 3; }},
      {"inputs[0].slices[0]: 0xe7ff8+16 outside tile memory [0x4c000, 0xe8000)",
       [](Application& a) {
         a.inputs[0].slices[0] = {0, 0xe7ff8, 0, 16};
       }},
      {"hostExchange.pages[1].index: 0 appears twice", [](Application& a) { a.host_exchange.pages[1].index = 0; }},
      {"hostExchange.attachOrder[1]: page 9 does not exist",
       [](Application& a) { a.host_exchange.attach_order[1] = 9; }},
      {"hostExchange.commandPage: page 4 does not exist", [](Application& a) { a.host_exchange.command_page = 4; }},
      {"hostExchange.commandOffset: 4093 + 4 is beyond the command page's 4096 bytes",
       [](Application& a) { a.host_exchange.command_offset = 4093; }},
      {"hostExchange.calls[0].invocations: 0 (at least 1)",
       [](Application& a) { a.host_exchange.calls[0].invocations = 0; }},
      {"hostExchange.calls[0].inputBatchEnds: empty, but the call has 1 slices",
       [](Application& a) { a.host_exchange.calls[0].input_batch_ends.clear(); }},
      {"hostExchange.calls[0].outputBatchEnds[0]: 2 is beyond the 1 slices",
       [](Application& a) { a.host_exchange.calls[0].output_batch_ends = {2}; }},
      {"hostExchange.calls[0].inputBatchEnds[1]: not strictly increasing",
       [](Application& a) {
         a.host_exchange.calls[0].inputs.push_back({1, 16, 16, 16});
         a.host_exchange.calls[0].input_batch_ends = {1, 1};
       }},
      {"hostExchange.calls[0].inputBatchEnds: ends at 1, not at the slice count 2",
       [](Application& a) {
         a.host_exchange.calls[0].inputs.push_back({1, 16, 16, 16});
       }},
      {"hostExchange.calls[0].outputs[0]: 8190+8 is beyond page 1's 8192 bytes",
       [](Application& a) { a.host_exchange.calls[0].outputs[0].page_offset = 8190; }},
      {"hostExchange.calls[0].inputs[0].page: 3 does not exist",
       [](Application& a) { a.host_exchange.calls[0].inputs[0].page = 3; }},
  };
  validate_application(sample_application(), "app.ipuexe");
  for (const Rule& rule : rules) {
    Application app = sample_application();
    rule.change(app);
    expect_refused(app, rule.message);
  }
  // The writer runs them too, and writes nothing.
  const std::string dir = testing::temp_dir("application_rules");
  Application bad = sample_application();
  bad.tiles.clear();
  EXPECT_THROW(write_application(bad, dir + "/bad.ipuexe"), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir + "/bad.ipuexe"));
}

}  // namespace
}  // namespace lockstep::arch
