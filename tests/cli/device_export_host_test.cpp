// `device export` of a package with host phases: each host step becomes the host program of
// IPU21-DEVICE.md section 14 (packets, requests, `sync 15`/`sync 7`, `sans 1; sync 1` where a
// tile abstains) and the session becomes host pages and calls (12.1, 13). The image imports
// back to the same bytes and simulates through its host call to the package's own outputs
// and cycles.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>

#include "arch/host_packets.hpp"
#include "arch/instruction.hpp"
#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "formats/package.hpp"
#include "formats/token.hpp"
#include "sim/device/application.hpp"
#include "support/elf_objects.hpp"
#include "support/test_support.hpp"

namespace lockstep {
namespace {

using testing::run_lockstep;

// Tile 0 reads 76 bytes (a 64-byte long packet and a 12-byte short one) and sends them back;
// tile 3 reads 64 bytes, so physical tile 1 (3 & 0x3d) sends the host its request.
constexpr const char* kEcho = R"(version: 1
machine: {name: ipu21-c600-t16, digest: "ec84217a6976797c"}
tiles:
  - tile: 0
    segments:
      - {address: 0x50180, size: 80, fill: zero}
    steps:
      - host: {transfers: [{to: tile, tile_address: 0x50180, host_address: 0x1000, bytes: 76}]}
      - host: {transfers: [{to: host, tile_address: 0x50180, host_address: 0x1100, bytes: 76}]}
  - tile: 3
    steps:
      - host: {transfers: [{to: tile, tile_address: 0x50200, host_address: 0x1200, bytes: 64}]}
      - host: {transfers: []}
bindings:
  - {name: x, kind: input, slices: [{tile: 0, address: 0x50180, bytes: 76}, {tile: 3, address: 0x50200, bytes: 64}]}
  - {name: y, kind: output, slices: [{tile: 0, address: 0x50180, bytes: 76}]}
host:
  arena_bytes: 8192
  command_address: 0
  calls:
    - {name: run, command: 0, phases: 2, inputs: [{host_address: 0x1000, file_offset: 0, bytes: 76}, {host_address: 0x1200, file_offset: 76, bytes: 64}], outputs: [{host_address: 0x1100, file_offset: 0, bytes: 76}], input_batch_ends: [2], output_batch_ends: [1], input_bindings: [x], output_bindings: [y]}
)";

class DeviceExportHost : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = testing::temp_dir("device-export-host");
    package_ = dir_ + "/echo.yaml";
    testing::write_file(package_, kEcho);
    std::string input;
    for (int i = 1; i <= 140; ++i) input.push_back(static_cast<char>(i));
    input_ = dir_ + "/x.bin";
    testing::write_file(input_, input);
    image_ = dir_ + "/echo.ipuexe";
    const auto r = run_lockstep({"device", "export", package_, "-o", image_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static std::string dir_, package_, input_, image_;
};
std::string DeviceExportHost::dir_, DeviceExportHost::package_, DeviceExportHost::input_, DeviceExportHost::image_;

TEST_F(DeviceExportHost, TheSessionBecomesTheStacksPagesAndCalls) {
  const arch::Application app = arch::read_application(image_);
  const arch::HostExchange& h = app.host_exchange;
  EXPECT_EQ(h.startup_mark, 23u);  // 1,472 tiles in loader batches of 64
  ASSERT_EQ(h.pages.size(), 2u);
  EXPECT_EQ(h.pages[0].size, 4096u);  // the command page
  EXPECT_EQ(h.pages[1].size, 4096u);
  EXPECT_EQ(h.attach_order, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(h.command_page, 0u);
  ASSERT_EQ(h.calls.size(), 1u);
  const arch::HostCall& run = h.calls[0];
  EXPECT_EQ(run.name, "run");
  EXPECT_EQ(run.phases, 2u);
  ASSERT_EQ(run.inputs.size(), 2u);
  EXPECT_EQ(run.inputs[1].page, 1u);
  EXPECT_EQ(run.inputs[1].page_offset, 0x200u);  // host address 0x1200
  EXPECT_EQ(run.inputs[1].file_offset, 76u);
  EXPECT_EQ(run.input_batch_ends, (std::vector<uint32_t>{2}));
  EXPECT_EQ(run.output_batch_ends, (std::vector<uint32_t>{1}));
}

// The words of one tile's program from its "generated tile program" region.
std::vector<uint32_t> program_words(const arch::Application& app, uint32_t physical) {
  for (const arch::DebugRegion& r : app.debug_regions) {
    if (r.physical_tile != physical || r.name != "generated tile program") continue;
    for (const arch::TileImage& t : app.tiles) {
      if (t.physical_tile != physical) continue;
      for (const arch::AppSegment& s : t.segments) {
        if (s.address <= r.address && r.address + r.size <= s.address + s.data.size()) {
          std::vector<uint32_t> words(r.size / 4);
          std::memcpy(words.data(), s.data.data() + (r.address - s.address), r.size);
          return words;
        }
      }
    }
  }
  return {};
}

bool holds(const std::vector<uint32_t>& words, const std::vector<uint32_t>& run) {
  return std::search(words.begin(), words.end(), run.begin(), run.end()) != words.end();
}

// Section 14's wrappers: a reading tile that requests for itself syncs with 15, one whose
// request another tile sends with 7, a tile that only requests sends its bitmap, and a tile
// with no part abstains.
TEST_F(DeviceExportHost, EachTileRunsTheHostProgramOfItsPart) {
  const arch::Application app = arch::read_application(image_);
  const arch::Topology topology(arch::load_machine("ipu21-c600-t16"));
  const uint32_t tile0 = topology.physical(0), tile3 = topology.physical(3);
  const uint32_t requester3 = arch::host_requester(tile3);
  ASSERT_NE(requester3, tile3);  // the C600 numbering puts tile 3's request on another tile
  uint32_t idle = 0;
  while (idle == tile0 || idle == tile3 || idle == requester3 || idle == arch::host_requester(tile0)) ++idle;
  const auto mux = [](uint32_t physical) { return 0x19800000u | arch::host_mux(physical); };
  const uint32_t put_mux = 0x438080a0u, sync7 = 0x41800007u, sync15 = 0x4180000fu, sans1 = 0x40c00001u,
                 sync1 = 0x41800001u;
  const uint32_t reads0 = arch::host_requester(tile0) == tile0 ? sync15 : sync7;
  EXPECT_TRUE(holds(program_words(app, tile0), {mux(tile0), put_mux, reads0, 0x19800013u /* 76 / 4 words */}));
  EXPECT_TRUE(holds(program_words(app, tile0), {mux(tile0), put_mux, sync7, 0x19800001u}));  // the write
  EXPECT_TRUE(holds(program_words(app, tile3), {mux(tile3), put_mux, sync7, 0x19800010u /* 64 / 4 */}));
  EXPECT_TRUE(holds(program_words(app, requester3), {mux(requester3), put_mux, sync15}));
  EXPECT_TRUE(holds(program_words(app, idle), {sans1, sync1}));  // no part at all
  EXPECT_FALSE(holds(program_words(app, idle), {sync15}));
  const std::array<uint32_t, 2> bitmap = arch::host_request_bitmap({tile3});
  const uint32_t bit = (tile3 / 64) * 2 + ((tile3 >> 1) & 1);
  EXPECT_EQ(bitmap[0], bit < 24 ? 1u << bit : 0u);
  EXPECT_EQ(bitmap[1], bit < 24 ? 0u : 1u << (bit - 24));
}

// The host drives the image through calls, so every tile ends as the stack runtime's completion
// helper does (1 stored at 0x58000, then the branch to 0), and the image lists the `completion`
// output last, on logical tile 0, in no call (IPU21-DEVICE.md 9.2, 12.4, 17.3).
TEST_F(DeviceExportHost, EveryTileSetsTheCompletionWordThatTheLastOutputReads) {
  const arch::Application app = arch::read_application(image_);
  const arch::Topology topology(arch::load_machine("ipu21-c600-t16"));
  ASSERT_FALSE(app.outputs.empty());
  const arch::AppBinding& completion = app.outputs.back();
  EXPECT_EQ(completion.name, "completion");
  EXPECT_EQ(completion.dtype, "u32");
  ASSERT_EQ(completion.slices.size(), 1u);
  EXPECT_EQ(completion.slices[0].tile, topology.physical(0));
  EXPECT_EQ(completion.slices[0].tile_address, 0x58000u);
  EXPECT_EQ(completion.slices[0].size, 4u);
  for (const arch::HostCall& call : app.host_exchange.calls) {
    uint64_t moved = 0;
    for (const auto& s : call.outputs) moved = std::max(moved, s.file_offset + s.size);
    EXPECT_EQ(moved, 76u) << call.name;  // y only
  }
  // setzi $m0, 1; setzi $m1, 0x58000; st32 $m0, $m1, $m15, 0; br $m15
  arch::Instruction value, word, store, halt;
  value.op = word.op = arch::Opcode::SetZi;
  value.reg = 0;
  value.immediate = 1;
  word.reg = 1;
  word.immediate = 0x58000;
  store.op = arch::Opcode::St32;
  store.source = 0;
  store.base = 1;
  store.index = 15;
  halt.op = arch::Opcode::Br;
  halt.reg = 15;
  std::vector<uint32_t> ending;
  for (const arch::Instruction& in : {value, word, store, halt}) arch::encode_into(in, ending);
  for (const arch::TileImage& t : app.tiles) {
    const std::vector<uint32_t> words = program_words(app, t.physical_tile);
    ASSERT_GE(words.size(), ending.size());
    EXPECT_TRUE(std::equal(ending.begin(), ending.end(), words.end() - 4)) << "physical tile " << t.physical_tile;
  }
}

TEST_F(DeviceExportHost, ExportImportExportGivesTheSameBytes) {
  const std::string imported = dir_ + "/back.yaml", again = dir_ + "/again.ipuexe";
  auto r = run_lockstep({"device", "import", image_, "--machine", "ipu21-c600-t16", "-o", imported});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_lockstep({"device", "export", imported, "-o", again});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing::read_file(image_), testing::read_file(again));
}

// The image's host call carries the input file in and the output file back; the outputs and
// the cycles (host phases included) are the package's own.
TEST_F(DeviceExportHost, TheImageSimulatesThroughItsHostCallToThePackagesOutputsAndCycles) {
  const std::string outputs = dir_ + "/pkg-out", sim = dir_ + "/sim", raw = dir_ + "/run.bin";
  auto r = run_lockstep({"run", package_, "--input", "x=" + input_, "--output-dir", outputs, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto package_run = nlohmann::json::parse(r.out);
  r = run_lockstep({"device", "simulate", image_, "--machine", "ipu21-c600-t16", "--input", "run=" + input_,
                    "--call-output", "run=" + raw, "-o", sim, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string echoed = testing::read_file(input_).substr(0, 76);
  EXPECT_EQ(testing::read_file(raw), echoed);
  EXPECT_EQ(testing::read_file(sim + "/outputs/y.bin"), echoed);
  EXPECT_EQ(testing::read_file(outputs + "/y.bin"), echoed);
  const auto image_run = nlohmann::json::parse(r.out);
  EXPECT_EQ(image_run.at("total_cycles"), package_run.at("total_cycles")) << r.out;
}

TEST_F(DeviceExportHost, AHostCallCannotLoopInCode) {
  const auto r = run_lockstep({"device", "export", package_, "--invocations", "2", "-o", dir_ + "/loop.ipuexe"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "error: export: --invocations 2: the package has host phases, and a host call runs its "
            "program's phases once\n");
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// `--profiling full` on a package with Repeats (repeat27: a Repeat of patches, an exchange and a
// kernel): the samples call the stack runtime's
// helper (the object defines it), `profile.cycles` has one slice per tile of (steps + 1) words
// at one 0x4000-aligned address from 0x5c000, each tile's plan has exactly its steps (17.3), a
// Repeat's entry lists the exchanges inside it, and the image imports and exports again to the
// same bytes.
TEST(DeviceExportProfiling, FullSamplesMatchThePlansAndRoundTrip) {
  const std::string dir = testing::temp_dir("device-export-profiling");
  const std::string compiled = testing::source_path("tests/integration/packages/repeat27.yaml");
  const std::string image = dir + "/p.ipuexe";
  auto r = run_lockstep({"device", "export", compiled, "--profiling", "full", "-o", image});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ipu_stack_static_sample_cycle (tiles 0-1)"), std::string::npos) << r.err;
  testing::write_file(dir + "/sample.o",
                      testing::elf_object_defining({"ipu_stack_static_sample_cycle", "lockstep_kernel_checksum_2"}));
  r = run_lockstep({"device", "export", compiled, "--profiling", "full", "--object", dir + "/sample.o", "-o", image});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const arch::Application app = arch::read_application(image);
  const arch::AppBinding* cycles = nullptr;
  std::vector<std::string> names;
  for (const arch::AppBinding& b : app.outputs) {
    names.push_back(b.name);
    if (b.name == "profile.cycles") cycles = &b;
  }
  ASSERT_NE(cycles, nullptr);
  EXPECT_EQ(names.front(), "profile.start-cycle");
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[names.size() - 2], "profile.end-cycle");
  EXPECT_EQ(names.back(), "completion");  // after the profile, in no call (17.3)
  EXPECT_EQ(cycles->dtype, "u32");
  ASSERT_EQ(cycles->slices.size(), 2u);
  size_t repeats_with_exchanges = 0;
  for (size_t i = 0; i < cycles->slices.size(); ++i) {
    const arch::RegionSlice& s = cycles->slices[i];
    EXPECT_EQ(s.tile_address % 0x4000, 0u);
    EXPECT_GE(s.tile_address, 0x5c000u);
    if (i > 0) {
      EXPECT_GT(s.tile, cycles->slices[i - 1].tile);  // ascending physical ids
    }
    for (const arch::TileProfilePlan& plan : app.profile_tiles) {
      if (plan.physical_tile != s.tile) continue;
      EXPECT_EQ(s.size, 4 * (plan.steps.size() + 1)) << "tile " << s.tile;
      for (size_t k = 0; k < plan.steps.size(); ++k) {
        EXPECT_EQ(plan.steps[k].step.local_index, k);
        if (plan.steps[k].step.kernel == "repeat" && !plan.steps[k].step.metadata.empty()) ++repeats_with_exchanges;
      }
    }
  }
  EXPECT_GT(repeats_with_exchanges, 0u);
  const std::string back = dir + "/back.capnp", again = dir + "/again.ipuexe";
  r = run_lockstep({"device", "import", image, "--machine", "ipu21-c600-t16", "-o", back});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run_lockstep({"device", "export", back, "--object", dir + "/sample.o", "-o", again}).exit_code, 0);
  // The Repeat's exchange came back with its phase: the same id and label as the package's.
  r = run_lockstep({"inspect", back, "--json"});
  EXPECT_NE(r.out.find("\"layer\""), std::string::npos) << r.out.substr(0, 2000);
  EXPECT_TRUE(testing::read_file(image) == testing::read_file(again));
  // Exported again with samples already in it: refused rather than sampled twice.
  r = run_lockstep(
      {"device", "export", back, "--profiling", "full", "--object", dir + "/sample.o", "-o", dir + "/twice.ipuexe"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the package already has host phases"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

std::vector<std::string> problems_of(const std::string& image) {
  const auto r = run_lockstep({"device", "inspect", image, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> out;
  const nlohmann::json info = nlohmann::json::parse(r.out);
  for (const auto& p : info["stack_tool_problems"]) out.push_back(p.get<std::string>());
  return out;
}

bool names(const std::vector<std::string>& problems, const std::string& text) {
  for (const std::string& p : problems) {
    if (p.find(text) != std::string::npos) return true;
  }
  return false;
}

// Images of 16-, 64- and 1,472-tile machines, exported with host calls and full profiling,
// pass every rule `device inspect` holds them to (sections 12.3 by the reader; 13, 17.3 and
// 17.4 as the stack's tools would); each image made to break one rule draws that problem.
// (Batch ends missing where slices exist is 12.3's too: the writer refuses such an image.)
TEST(DeviceExportRules, ExportedImagesPassTheStacksRulesAndBrokenOnesAreNamed) {
  const std::string dir = testing::temp_dir("device-export-rules");
  testing::write_file(dir + "/sample.o", testing::elf_object_defining({"ipu_stack_static_sample_cycle"}));
  std::string image16;
  for (const char* machine : {"ipu21-c600-t16", "ipu21-c600-t64", "ipu21-c600"}) {
    const std::string base = dir + "/" + machine;
    ASSERT_EQ(run_lockstep({"capture", "synth", "--family", "transformer", "--tiles", "16", "--phases", "2", "--seed",
                            "3", "--machine", machine, "-o", base + ".yaml"})
                  .exit_code,
              0);
    ASSERT_EQ(run_lockstep({"compile", base + ".yaml", "--no-proof", "-o", base + ".capnp"}).exit_code, 0);
    const auto r = run_lockstep({"device", "export", base + ".capnp", "--profiling", "full", "--object",
                                 dir + "/sample.o", "-o", base + ".ipuexe"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(problems_of(base + ".ipuexe"), std::vector<std::string>{}) << machine;
    EXPECT_EQ(arch::read_application(base + ".ipuexe").tiles.size(), 1472u) << machine;
    if (image16.empty()) image16 = base + ".ipuexe";
  }
  const arch::Application good = arch::read_application(image16);
  const auto broken = [&](const std::string& name, const std::function<void(arch::Application&)>& breaking) {
    arch::Application app = good;
    breaking(app);
    const std::string path = dir + "/" + name + ".ipuexe";
    arch::write_application(app, path);
    return problems_of(path);
  };
  // The last 28 tiles run barriers only: nothing refers to them.
  EXPECT_TRUE(names(broken("tiles",
                           [](arch::Application& a) {
                             a.tiles.resize(1444);
                             std::erase_if(a.debug_regions, [](const arch::DebugRegion& r) {
                               return r.physical_tile != arch::kDebugAllTiles && r.physical_tile >= 1444;
                             });
                           }),
                    "tile count 1444 is not a whole number of loader batches of 64"));
  EXPECT_TRUE(names(broken("lowest", [](arch::Application& a) { a.tiles[5].segments.front().address = 0x4c020; }),
                    ": lowest segment at 0x4c020, not 0x4c010"));
  EXPECT_TRUE(names(broken("calls", [](arch::Application& a) { a.host_exchange.calls.clear(); }), "no host calls"));
  EXPECT_TRUE(names(broken("cycles", [](arch::Application& a) { a.outputs.erase(a.outputs.begin() + 1); }),
                    "no profile.cycles output binding"));
  EXPECT_TRUE(names(broken("short",
                           [](arch::Application& a) {
                             a.host_exchange.calls.back().outputs.resize(1);
                             a.host_exchange.calls.back().output_batch_ends = {1};
                           }),
                    "host call run: its output file"));
  EXPECT_TRUE(names(broken("plan", [](arch::Application& a) { a.profile_tiles.front().steps.pop_back(); }),
                    "needs a profile.cycles slice of"));
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// `replay --device-image`: one phase as an image the stack runs, without checksum kernels; the
// destination words it reads back through proof.sampled are payload tokens of the replay's
// seed (their top bits are the seed's mix, IPU21 tokens being unique per source word), and the
// image simulates with them.
TEST(DeviceReplayImage, APhaseBecomesAnImageThatReadsBackSampledDestinationWords) {
  const std::string dir = testing::temp_dir("device-replay-image");
  ASSERT_EQ(run_lockstep({"capture", "synth", "--family", "transformer", "--tiles", "16", "--phases", "3", "--seed",
                          "3", "--machine", "ipu21-c600-t16", "-o", dir + "/synth.yaml"})
                .exit_code,
            0);
  testing::write_file(dir + "/sample.o", testing::elf_object_defining({"ipu_stack_static_sample_cycle"}));
  auto r = run_lockstep({"replay", dir + "/synth.yaml", "--phase", "1", "--config", "B256", "--seed", "7", "--samples",
                         "512", "--device-image", dir + "/phase1.ipuexe", "--profiling", "full", "--object",
                         dir + "/sample.o"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("phase 1 config B256, 1472 tiles, "), std::string::npos) << r.out;
  EXPECT_EQ(problems_of(dir + "/phase1.ipuexe"), std::vector<std::string>{});
  r = run_lockstep({"device", "simulate", dir + "/phase1.ipuexe", "--machine", "ipu21-c600-t16", "-o", dir + "/sim"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string words = testing::read_file(dir + "/sim/outputs/proof.sampled.bin");
  ASSERT_GE(words.size(), 4u * 256);
  EXPECT_LE(words.size(), 4u * (512 + 64));  // about --samples words, in pieces of up to 64
  const uint32_t mix = arch::token_seed_mix(7);
  for (size_t i = 0; i < words.size(); i += 4) {
    uint32_t w = 0;
    std::memcpy(&w, words.data() + i, 4);
    ASSERT_EQ(w & 0xe0000000u, mix) << "word " << i / 4 << " is no token of seed 7: " << w;
  }
  // The profile has the phase's exchange, measured from the samples.
  r = run_lockstep({"profile", "summary", dir + "/sim/profile.lsprof"});
  EXPECT_NE(r.out.find("exchange"), std::string::npos) << r.out;
  // A whole compiled package the same way: `compile --device-proof N` exports with no
  // checksum kernel to call.
  ASSERT_EQ(
      run_lockstep({"compile", dir + "/synth.yaml", "--device-proof", "1000", "-o", dir + "/all.capnp"}).exit_code, 0);
  r = run_lockstep({"device", "export", dir + "/all.capnp", "-o", dir + "/all.ipuexe"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_lockstep({"device", "inspect", dir + "/all.ipuexe"});
  EXPECT_NE(r.out.find("output proof.sampled: u8 ["), std::string::npos) << r.out;
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// An object that cannot stand for the stack's code: one line naming the symbol, exit 2,
// nothing written.
TEST(DeviceExportObjects, AnObjectMissingASymbolOrDefiningOneTwiceIsRefused) {
  const std::string dir = testing::temp_dir("device-export-objects");
  const std::string package = testing::source_path("tests/integration/packages/repeat27.yaml");
  testing::write_file(dir + "/missing.o", testing::elf_object_defining({"ipu_stack_static_sample_cycle"}));
  auto r = run_lockstep(
      {"device", "export", package, "--profiling", "full", "--object", dir + "/missing.o", "-o", dir + "/a.ipuexe"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: export: " + dir + "/missing.o: does not define lockstep_kernel_checksum_2\n");
  testing::write_file(dir + "/twice.o",
                      testing::elf_object_defining({"ipu_stack_static_sample_cycle", "lockstep_kernel_checksum_2",
                                                    "lockstep_kernel_checksum_2"}));
  r = run_lockstep(
      {"device", "export", package, "--profiling", "full", "--object", dir + "/twice.o", "-o", dir + "/a.ipuexe"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + dir + "/twice.o: symbol lockstep_kernel_checksum_2 is defined twice\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/a.ipuexe"));
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// A bulk patch (the six-worker patcher, worker code only a vendor compiler makes) exports as
// the supervisor helper's per-iteration stores: the same words and values, read back as a
// helper patch, and the image round-trips.
TEST(DeviceExportObjects, ABulkPatchExportsAsTheSupervisorHelper) {
  const std::string dir = testing::temp_dir("device-export-bulk");
  std::string yaml = testing::read_file(testing::source_path("tests/data/packages/long_rows.yaml"));
  for (size_t at = yaml.find("0x4c"); at != std::string::npos; at = yaml.find("0x4c", at)) yaml.replace(at, 4, "0x54");
  testing::write_file(dir + "/rows.yaml", yaml);  // the rows above the loader's slot
  testing::write_file(dir + "/fill.o", testing::elf_object_defining({"lockstep_kernel_fill_1"}));
  auto r =
      run_lockstep({"device", "export", dir + "/rows.yaml", "--object", dir + "/fill.o", "-o", dir + "/rows.ipuexe"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(problems_of(dir + "/rows.ipuexe").size(), 1u);  // no profile.cycles only
  r = run_lockstep({"device", "import", dir + "/rows.ipuexe", "--machine", "ipu21-c600-t16", "-o", dir + "/back.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const arch::Package original = arch::read_package(dir + "/rows.yaml"), back = arch::read_package(dir + "/back.yaml");
  const auto patch_of = [](const arch::Package& p) {
    const auto& repeat = std::get<arch::RepeatStep>(p.tiles.front().steps.front().kind);
    return std::get<arch::PatchStep>(repeat.body.front().kind);
  };
  EXPECT_EQ(patch_of(original).method, arch::PatchMethod::Bulk);
  EXPECT_EQ(patch_of(back).method, arch::PatchMethod::Helper);
  EXPECT_EQ(patch_of(back).entries, patch_of(original).entries);
  ASSERT_EQ(
      run_lockstep({"device", "export", dir + "/back.yaml", "--object", dir + "/fill.o", "-o", dir + "/again.ipuexe"})
          .exit_code,
      0);
  EXPECT_TRUE(testing::read_file(dir + "/rows.ipuexe") == testing::read_file(dir + "/again.ipuexe"));
  EXPECT_EQ(run_lockstep({"run", dir + "/back.yaml"}).exit_code, 0);
}

}  // namespace
}  // namespace lockstep
