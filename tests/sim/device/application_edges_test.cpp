// What `device import` and the image reader refuse before they use it (issue 26): a debug
// region the import reads outside tile memory, device config writes and host calls the model
// cannot take, a dtype outside section 12.2's five, a file offset past 2^64, a shape that
// overflows or does not hold the binding's bytes, slices that do not lie back to back. Each is
// one line naming the file, the field and what is wrong.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "arch/machine.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "sim/device/application.hpp"
#include "sim/device/application_export.hpp"
#include "sim/device/application_import.hpp"
#include "support/test_support.hpp"

namespace lockstep::arch {
namespace {

const MachineDescription& machine() {
  static const MachineDescription m = load_machine("ipu21-c600-t16");
  return m;
}

// p2p_3w as `device export` writes it, with an f16 output of its 12 received bytes.
Application exported_image() {
  Package package = read_package(testing::source_path("tests/integration/packages/p2p_3w.yaml"));
  Binding out;
  out.name = "received";
  out.kind = BindingKind::Output;
  out.element = ElementType::Float16;
  out.shape = {6};
  out.slices = {{1, 0x70000, 12}};
  package.bindings.push_back(out);
  return export_application(package, machine(), {"lockstep test", 1, "", false});  // no host calls
}

DebugRegion& region(Application& app, uint32_t physical, const std::string& name) {
  for (DebugRegion& r : app.debug_regions) {
    if (r.physical_tile == physical && r.name == name) return r;
  }
  throw std::logic_error("no region " + name);
}

// The one-line InputError `call` throws.
template <typename Call>
std::string refusal(Call call) {
  try {
    call();
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  ADD_FAILURE() << "accepted";
  return "";
}

std::string import_refusal(const Application& app) {
  return refusal([&] { import_application(app, machine(), "app.ipuexe"); });
}

std::string read_refusal(const Application& app) {
  return refusal([&] { validate_application(app, "app.ipuexe"); });
}

TEST(ApplicationEdges, TheExportedImageImportsWithItsTypes) {
  const Package package = import_application(exported_image(), machine(), "app.ipuexe");
  ASSERT_EQ(package.bindings.size(), 1u);
  EXPECT_EQ(package.bindings[0].element, ElementType::Float16);
  EXPECT_EQ(package.bindings[0].shape, std::vector<uint32_t>{6});
}

TEST(ApplicationEdges, AProgramRegionOutsideTileMemoryIsRefusedBeforeItIsRead) {
  for (const uint32_t address : {0xffffff00u, 0x7fffffffu, 0x4b000u}) {
    Application app = exported_image();
    region(app, 0, "generated tile program").address = address;
    EXPECT_NE(import_refusal(app).find("app.ipuexe: tile 0 (physical 0): debug region "
                                       "\"generated tile program\" at " +
                                       hex(address)),
              std::string::npos);
  }
  Application app = exported_image();
  region(app, 0, "generated tile program").size = 0xe8000 - 0x4c000;  // ends past 0xe8000
  EXPECT_NE(import_refusal(app).find("lies outside tile memory [0x4c000, 0xe8000)"), std::string::npos);
}

TEST(ApplicationEdges, DataAndSymbolRegionsOutsideTileMemoryAreRefused) {
  for (const char* name : {"generated tile data", "lockstep_start", "exchange row table"}) {
    Application app = exported_image();
    region(app, 0, name).address = 0x7fffff00;
    const std::string what = import_refusal(app);
    EXPECT_NE(what.find("tile 0 (physical 0): debug region \"" + std::string(name) + "\" at 0x7fffff00+"),
              std::string::npos)
        << what;
  }
}

TEST(ApplicationEdges, AStackImagesProgramRegionOutsideTileMemoryIsRefused) {
  Application app;
  app.compiler_version = "stack";
  TileImage tile{0, 0x4c010, {}, 0, 0x58000};
  tile.segments.push_back({0x4c010, 8, {}, kSegmentRead | kSegmentExecute});
  app.tiles.push_back(tile);
  app.debug_symbols.push_back({"ipu_stack_static_complete", 0x50000});
  app.debug_regions.push_back({0, 0xffffff00, 16, "generated tile program"});
  EXPECT_NE(import_refusal(app).find("app.ipuexe: tile 0 (physical 0): debug region \"generated "
                                     "tile program\" at 0xffffff00+16 lies outside tile memory"),
            std::string::npos);
  app.debug_regions[0].address = 0x5c000;
  app.debug_regions.push_back({0, 0x7fffffff, 12, "exchange row"});
  EXPECT_NE(import_refusal(app).find("debug region \"exchange row\" at 0x7fffffff+12"), std::string::npos);
}

TEST(ApplicationEdges, DeviceConfigWritesAreRefused) {
  Application app = exported_image();
  app.device_config_writes = {{0x4018, 7}, {0x401c, 1}};
  EXPECT_EQ(import_refusal(app),
            "app.ipuexe: deviceConfigWrites: 2 writes: the model has no device configuration "
            "registers");
}

// Host calls need host pages and the program's host phases: an image whose calls have
// neither is refused by name.
TEST(ApplicationEdges, HostCallsWithoutPagesOrHostPhasesAreRefused) {
  Application app = exported_image();
  app.host_exchange.calls.resize(2);
  app.host_exchange.calls[0].name = "initialize";
  app.host_exchange.calls[1].name = "run";
  EXPECT_EQ(import_refusal(app),
            "app.ipuexe: hostExchange.commandPage: page 0 is not attached (not in attachOrder): the tiles cannot "
            "address it");
  app.host_exchange.pages = {{0, 4096}};
  app.host_exchange.attach_order = {0};
  app.host_exchange.calls[1].phases = 2;
  EXPECT_EQ(import_refusal(app),
            "app.ipuexe: host.calls: their phases add up to 2 but the tiles have 0 host steps each");
}

TEST(ApplicationEdges, TheReaderRefusesADtypeOutsideTheFive) {
  Application app = exported_image();
  app.outputs[0].dtype = "bogus";
  EXPECT_EQ(read_refusal(app),
            "app.ipuexe: outputs[0].dtype: binding 'received': \"bogus\" is not a dtype (f16, "
            "f32, f8f143, u32, u8)");
  for (const char* dtype : {"f16", "f32", "f8f143", "u32", "u8"}) {
    app.outputs[0].dtype = dtype;
    EXPECT_NO_THROW(validate_application(app, "app.ipuexe")) << dtype;
  }
}

TEST(ApplicationEdges, TheReaderRefusesAFileOffsetThatOverflows) {
  Application app = exported_image();
  app.outputs[0].slices[0].file_offset = UINT64_MAX;
  EXPECT_EQ(read_refusal(app),
            "app.ipuexe: outputs[0].slices[0]: binding 'received': fileOffset "
            "18446744073709551615 + size 12 overflows 64 bits");
}

TEST(ApplicationEdges, AShapeWhoseBytesOverflowIsRefused) {
  Application app = exported_image();
  app.outputs[0].dtype = "u32";
  app.outputs[0].shape = {0xffffffffu, 0xffffffffu};
  EXPECT_EQ(import_refusal(app),
            "app.ipuexe: outputs[0]: binding 'received': shape [4294967295, 4294967295] of u32 "
            "overflows 64 bits");
  app.outputs[0].shape = {0xffffffffu, 0xffffffffu, 0xffffffffu};
  EXPECT_NE(import_refusal(app).find("overflows 64 bits"), std::string::npos);
}

TEST(ApplicationEdges, AShapeThatDoesNotHoldTheBindingsBytesIsRefused) {
  Application app = exported_image();
  app.outputs[0].shape = {2, 4};
  EXPECT_EQ(import_refusal(app),
            "app.ipuexe: outputs[0]: binding 'received': shape [2, 4] of f16 is 16 bytes, but its "
            "slices hold 12");
}

TEST(ApplicationEdges, SlicesThatDoNotLieBackToBackAreRefused) {
  Application app = exported_image();
  const uint32_t tile = app.outputs[0].slices[0].tile;
  app.outputs[0].shape = {8};
  app.outputs[0].slices = {{tile, 0x70000, 0, 8}, {tile, 0x70008, 12, 4}};
  EXPECT_EQ(import_refusal(app),
            "app.ipuexe: outputs[0]: binding 'received': its slices leave a gap at file byte 8 (a "
            "package binding is its slices back to back)");
  app.outputs[0].slices = {{tile, 0x70000, 0, 8}, {tile, 0x70008, 4, 4}};
  app.outputs[0].shape = {4};
  EXPECT_NE(import_refusal(app).find("its slices overlap at file byte 4"), std::string::npos);
  // Slices listed out of file order tile the file all the same: they import in file order.
  app.outputs[0].slices = {{tile, 0x70008, 8, 4}, {tile, 0x70000, 0, 8}};
  app.outputs[0].shape = {6};
  const Package package = import_application(app, machine(), "app.ipuexe");
  ASSERT_EQ(package.bindings[0].slices.size(), 2u);
  EXPECT_EQ(package.bindings[0].slices[0].address, 0x70000u);
}

TEST(ApplicationEdges, U32AndF8BindingsImportAsBytesAndAreNamed) {
  Application app = exported_image();
  app.outputs[0].dtype = "u32";
  app.outputs[0].shape = {3};
  const Package package = import_application(app, machine(), "app.ipuexe");
  EXPECT_EQ(package.bindings[0].element, ElementType::Bytes);
  EXPECT_TRUE(package.bindings[0].shape.empty());
  EXPECT_EQ(untyped_bindings(app, "app.ipuexe"),
            std::vector<std::string>{"app.ipuexe: outputs[0]: binding 'received' (u32 [3]) "
                                     "imports as untyped bytes: a package types f16 and f32"});
  app.outputs[0].dtype = "u8";
  app.outputs[0].shape = {12};
  EXPECT_TRUE(untyped_bindings(app, "app.ipuexe").empty());
}

}  // namespace
}  // namespace lockstep::arch
