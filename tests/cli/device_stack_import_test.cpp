// `device import` of an image laid out as the IPU21 stack builds one (IPU21-DEVICE.md
// section 12.4): its runtime symbols, its generated program (section 8's sequences, the
// exchange words copied from section 8.2's worked example), its rows and data. The image is
// written word by word from the spec here, not by Lockstep's exporter.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "arch/machine.hpp"
#include "arch/topology.hpp"
#include "sim/device/application.hpp"
#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

constexpr uint32_t kStart = 0x4c018, kBarrier = 0x50000, kPatchWord = 0x50040, kSample = 0x50080, kComplete = 0x500c0,
                   kProgram = 0x5c000, kRow = 0x60000, kSource = 0x68000, kTable = 0x6c000, kDestination = 0x70000;

arch::AppSegment segment(uint32_t address, std::vector<uint32_t> words, uint32_t flags) {
  arch::AppSegment s;
  s.address = address;
  s.memory_size = static_cast<uint32_t>(words.size() * 4);
  for (uint32_t w : words) {
    for (int b = 0; b < 4; ++b) s.data.push_back(static_cast<uint8_t>(w >> (8 * b)));
  }
  s.flags = flags;
  return s;
}

uint32_t call(uint32_t reg, uint32_t target) { return 0x18000000u | reg << 20 | target >> 2; }

// Section 8.4's Repeat of 2 around `body`, placed at `at`.
std::vector<uint32_t> repeat2(uint32_t at, const std::vector<uint32_t>& body) {
  std::vector<uint32_t> w = {0x22bbfff8, 0x19000002, 0x4fb0f000};
  const uint32_t loop = at + 4 * static_cast<uint32_t>(w.size());
  w.insert(w.end(), body.begin(), body.end());
  const uint32_t done = at + 4 * static_cast<uint32_t>(w.size() + 6);
  for (uint32_t x : {0x01b0f000u, 0x2200ffffu, 0x4fb0f000u, 0x13000000u | done >> 2, 0x19000000u | loop, 0x43000000u}) {
    w.push_back(x);
  }
  w.push_back(0x22bb0008);
  return w;
}

// Tile 0 sends 3 words to tile 1 (the rows of tests/integration/packages/p2p_3w.yaml, the
// source moved to 0x68000), twice, the sender re-writing its send word from a Repeat patch
// table each time; every other tile is inactive. `extra` goes first in tile 0's program.
arch::Application stack_image(const std::vector<uint32_t>& extra) {
  const auto machine = arch::load_machine("ipu21-c600-t16");
  const arch::Topology topology(machine);
  arch::Application app;
  app.compiler_version = "ipu-stack (by hand, from IPU21-DEVICE.md)";
  for (const auto& [name, address] : std::vector<std::pair<std::string, uint32_t>>{
           {"ipu_stack_static_start", kStart},
           {"ipu_stack_static_worker_barrier", kBarrier},
           {"ipu_stack_static_patch_word", kPatchWord},
           {"ipu_stack_static_sample_cycle", kSample},
           {"ipu_stack_static_complete", kComplete}}) {  // no ipu_stack_static_program: 14.7 drops it
    app.debug_symbols.push_back({name, address});
  }
  app.debug_regions.push_back({arch::kDebugAllTiles, kStart, 0x50100 - kStart, "linked executable"});
  for (uint32_t logical = 0; logical < 16; ++logical) {
    const uint32_t physical = topology.physical(logical);
    arch::TileImage image;
    image.physical_tile = physical;
    image.entry_point = 0x4c010;
    image.diagnostic_address = 0x58000;
    image.segments.push_back(segment(0x4c010, {0x19000000u | kStart, 0x43000000u}, 5));
    arch::AppSegment linked;
    linked.address = kStart;
    linked.memory_size = 0x50100 - kStart;
    linked.flags = 5;
    image.segments.push_back(linked);
    std::vector<uint32_t> body;
    uint32_t row_bytes = 4;
    if (logical == 0) {
      // Section 8.2 step 3: the Repeat patch of the send word, then the active sequence.
      body = {0x19260004, 0x1936c000,        0x01b4f000, 0x19500002, call(9, kPatchWord), 0x19800000,    0x438080a4,
              0x43f080a7, call(7, kBarrier), 0x19800001, 0x438080a6, 0x41800003,          call(10, kRow)};
      image.segments.push_back(segment(kRow, {0x40a0001b, 0x784d0001, 0x43a00000}, 5));
      row_bytes = 12;
      image.segments.push_back(segment(kSource, {0x11111111, 0x22222222, 0x33333333}, 3));
      image.segments.push_back(segment(kTable, {0x784d0001, 0x784d0001}, 1));
    } else if (logical == 1) {
      // Section 8.2's worked example, word for word.
      body = {0x19870000, 0x438080a4, 0x43f080a7, 0x18714000, 0x19800001, 0x438080a6, 0x41800003, 0x18a18000};
      image.segments.push_back(segment(kRow, {0x64000000, 0x64008640, 0x61800000, 0x40a00007, 0x43a00000}, 5));
      row_bytes = 20;
    } else {
      body = {0x19870000, 0x438080a4, 0x43f080a7, 0x40c00000, 0x41800001, 0x18a18000};  // the inactive variant
      image.segments.push_back(segment(kRow, {0x43a00000}, 5));
    }
    std::vector<uint32_t> program = logical == 0 ? extra : std::vector<uint32_t>{};
    const auto loop = repeat2(kProgram + 4 * static_cast<uint32_t>(program.size()), body);
    program.insert(program.end(), loop.begin(), loop.end());
    program.push_back(0x19000000u | kComplete);
    program.push_back(0x43000000u);
    image.segments.push_back(segment(kProgram, program, 5));
    arch::AppSegment state;
    state.address = 0x58000;
    state.memory_size = 0x6e0;
    state.data = {0, 0, 0, 0};
    state.flags = 3;
    image.segments.push_back(state);
    std::sort(image.segments.begin(), image.segments.end(),
              [](const arch::AppSegment& a, const arch::AppSegment& b) { return a.address < b.address; });
    app.debug_regions.push_back(
        {physical, kProgram, static_cast<uint32_t>(program.size() * 4), "generated tile program"});
    app.debug_regions.push_back({physical, kRow, row_bytes, "exchange row"});
    arch::TileProfilePlan plan;
    plan.physical_tile = physical;
    arch::PlanStep step;
    step.step.phase = arch::kExchangePhaseBit | 7;
    step.step.kind = logical < 2 ? arch::ProfileStepKind::Exchange : arch::ProfileStepKind::Idle;
    plan.steps.push_back(step);
    app.profile_tiles.push_back(plan);
    app.tiles.push_back(std::move(image));
  }
  std::sort(app.tiles.begin(), app.tiles.end(),
            [](const arch::TileImage& a, const arch::TileImage& b) { return a.physical_tile < b.physical_tile; });
  arch::AppBinding out{"output.0", "u8", {12}, {{topology.physical(1), kDestination, 0, 12}}};
  app.outputs.push_back(out);
  app.entry_points.push_back({"run", 0, 0});
  return app;
}

TEST(DeviceStackImport, AStackBuiltImageImportsAndRuns) {
  const std::string dir = temp_dir("stack_import");
  const std::string image = dir + "/stack.ipuexe", package = dir + "/stack.capnp";
  // A cycle sample first (section 8.6): the runtime's helper, run as a kernel.
  arch::write_application(stack_image({0x19258004, call(10, kSample)}), image);
  auto r = run_lockstep({"device", "import", image, "--machine", "ipu21-c600-t16", "-o", package});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_lockstep({"run", package, "--json", "--output-dir", dir + "/out"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["executions"].size(), 2u);
  EXPECT_EQ(j["executions"][0]["phase"], 7);
  EXPECT_EQ(j["executions"][1]["iteration"], 1);
  EXPECT_EQ(j["executions"][0]["horizon"], 61);  // p2p_3w's row timing
  const std::string bytes = read_file(dir + "/out/output.0.bin");
  EXPECT_EQ(bytes, std::string("\x11\x11\x11\x11\x22\x22\x22\x22\x33\x33\x33\x33", 12));
}

TEST(DeviceStackImport, AHostProgramThatIsNoneOfSection14sIsRefusedNamingTheWord) {
  const std::string dir = temp_dir("stack_import_host");
  const std::string image = dir + "/stack.ipuexe";
  // Section 8.7: one active host phase through the host-run helper, whose program at 0x50100
  // is the linked runtime's zeros, not a section 14 wrapper.
  auto app = stack_image({0x19200001, 0x19350000, 0x19450100, call(9, 0x500c8)});
  app.debug_symbols.push_back({"ipu_stack_static_host_run", 0x500c8});
  arch::write_application(app, image);
  const auto r = run_lockstep({"device", "import", image, "--machine", "ipu21-c600-t16", "-o", dir + "/p.capnp"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tile 0 (physical 0): address 0x5c010: word 0x22bbfff8: not code Lockstep can execute (the "
                       "host program at 0x50100 holds a word that is no instruction at 0x50100)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/p.capnp"));
}

}  // namespace
}  // namespace lockstep::testing
