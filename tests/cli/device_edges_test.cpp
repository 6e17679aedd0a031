// Issue 26, as a user meets it: a result folder that claims a terabyte output, an image whose
// debug regions lie outside tile memory, device config writes, host calls, a bogus dtype, a
// shape or file offset past 64 bits, a packed profile and a profile with a tile twice. Each is
// exit 2 with one line naming the file and what is wrong, and nothing written. `device import
// -o x.yaml` writes YAML.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "profile/profile.hpp"
#include "sim/device/application.hpp"
#include "support/test_support.hpp"

namespace lockstep {
namespace {

using testing::expect_bad_input;
using testing::expect_nothing_written;
using testing::run_lockstep;
namespace fs = std::filesystem;

using testing::integration_package;

// p2p_3w with an output binding: the 12 bytes tile 1 receives.
std::string bound_package(const std::string& dir) {
  const std::string path = dir + "/bound.yaml";
  testing::write_file(path,
                      testing::read_file(integration_package("p2p_3w")) +
                          "bindings:\n"
                          "  - {name: received, kind: output, slices: [{tile: 1, address: 0x70000, bytes: 12}]}\n");
  return path;
}

// A simulated result folder of bound.yaml in DIR/sim.
std::string simulated(const std::string& dir) {
  const auto r = run_lockstep({"device", "simulate", bound_package(dir), "-o", dir + "/sim"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir + "/sim";
}

// A copy of `from` at `to` whose result.json lists the output with `bytes` bytes.
void claim_output_bytes(const std::string& from, const std::string& to, uint64_t bytes) {
  fs::copy(from, to, fs::copy_options::recursive);
  auto json = nlohmann::ordered_json::parse(testing::read_file(to + "/result.json"));
  json["outputs"][0]["bytes"] = bytes;
  testing::write_file(to + "/result.json", json.dump(2));
}

TEST(DeviceEdges, CrosscheckRefusesAnOutputSizeTheFileDoesNotHaveBeforeAllocatingIt) {
  const std::string dir = testing::temp_dir("edges_crosscheck");
  const std::string sim = simulated(dir);
  for (const uint64_t bytes : {uint64_t{1'000'000'000'000}, uint64_t{1} << 32}) {
    const std::string dev = dir + "/dev" + std::to_string(bytes);
    claim_output_bytes(sim, dev, bytes);
    expect_bad_input(run_lockstep({"crosscheck", "--simulated", sim, "--device", dev, "-o", dir + "/r"}),
                     dev + "/outputs/received.bin: 12 bytes, but result.json says " + std::to_string(bytes));
    expect_nothing_written(dir, "r");
  }
}

TEST(DeviceEdges, DeviceRunRefusesARunnerWhoseResultClaimsATerabyte) {
  const std::string dir = testing::temp_dir("edges_run");
  claim_output_bytes(simulated(dir), dir + "/template", 1'000'000'000'000);
  const std::string runner = "cp -R '" + dir + "/template/.' \"$LOCKSTEP_RESULT_DIR\"/";
  const auto r = run_lockstep({"device", "run", bound_package(dir), "--runner", runner, "-o", dir + "/dev"});
  expect_bad_input(r, "the runner left a malformed result folder: ");
  EXPECT_NE(r.err.find("/outputs/received.bin: 12 bytes, but result.json says 1000000000000"), std::string::npos)
      << r.err;
  expect_nothing_written(dir, "dev");
}

class DeviceImportEdges : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::temp_dir("edges_import");
    image_ = dir_ + "/app.ipuexe";
    // Without host calls: the tests below add their own.
    ASSERT_EQ(run_lockstep({"device", "export", bound_package(dir_), "--host-io", "none", "-o", image_}).exit_code, 0);
    app_ = arch::read_application(image_);
  }
  // Writes `app` (unchecked, as a hostile writer would) and imports it to DIR/out.capnp.
  testing::CommandResult import(const arch::Application& app) {
    testing::write_file(dir_ + "/bad.ipuexe", arch::application_bytes(app));
    return run_lockstep(
        {"device", "import", dir_ + "/bad.ipuexe", "--machine", "ipu21-c600-t16", "-o", dir_ + "/out.capnp"});
  }
  arch::DebugRegion& region(uint32_t physical, const std::string& name) {
    for (auto& r : app_.debug_regions) {
      if (r.physical_tile == physical && r.name == name) return r;
    }
    throw std::logic_error("no region " + name);
  }
  std::string dir_, image_;
  arch::Application app_;
};

TEST_F(DeviceImportEdges, ADebugRegionOutsideTileMemoryIsRefusedBeforeItIsRead) {
  for (const uint32_t address : {0xffffff00u, 0x7fffffffu}) {
    arch::Application app = app_;
    for (auto& r : app.debug_regions) {
      if (r.physical_tile == 0 && r.name == "generated tile program") {
        r.address = address;
        r.size = 0x80;
      }
    }
    char text[16];
    std::snprintf(text, sizeof text, "0x%x", address);
    expect_bad_input(import(app), dir_ +
                                      "/bad.ipuexe: tile 0 (physical 0): debug region "
                                      "\"generated tile program\" at " +
                                      text + "+128 lies outside tile memory [0x4c000, 0xe8000)");
    expect_nothing_written(dir_, "out.capnp");
  }
  region(0, "lockstep_start").address = 0x7fffff00;
  expect_bad_input(import(app_), "debug region \"lockstep_start\" at 0x7fffff00+");
  expect_nothing_written(dir_, "out.capnp");
}

TEST_F(DeviceImportEdges, DeviceConfigWritesAreRefused) {
  app_.device_config_writes = {{0x4018, 7}};
  expect_bad_input(import(app_), dir_ +
                                     "/bad.ipuexe: deviceConfigWrites: 1 write: the model "
                                     "has no device configuration registers");
  expect_nothing_written(dir_, "out.capnp");
}

// Calls whose phases the program does not run: the package's validation names them.
TEST_F(DeviceImportEdges, HostCallsWhosePhasesTheProgramDoesNotRunAreRefused) {
  app_.host_exchange.pages = {{0, 4096}};
  app_.host_exchange.attach_order = {0};
  for (const char* name : {"initialize", "run"}) {
    arch::HostCall call;
    call.name = name;
    call.phases = 1;
    app_.host_exchange.calls.push_back(call);
  }
  arch::write_application(app_, dir_ + "/calls.ipuexe");  // a valid image (section 12.3)
  expect_bad_input(run_lockstep({"device", "import", dir_ + "/calls.ipuexe", "--machine", "ipu21-c600-t16", "-o",
                                 dir_ + "/out.capnp"}),
                   dir_ + "/calls.ipuexe: host.calls: their phases add up to 2 but the tiles have 0 host steps each");
  expect_nothing_written(dir_, "out.capnp");
}

TEST_F(DeviceImportEdges, ADtypeOutsideTheFiveIsRefusedByTheReader) {
  app_.outputs[0].dtype = "bogus";
  expect_bad_input(import(app_), dir_ +
                                     "/bad.ipuexe: outputs[0].dtype: binding 'received': "
                                     "\"bogus\" is not a dtype (f16, f32, f8f143, u32, u8)");
  expect_nothing_written(dir_, "out.capnp");
  const auto inspect = run_lockstep({"device", "inspect", dir_ + "/bad.ipuexe"});
  EXPECT_EQ(inspect.exit_code, 2) << inspect.out;
}

TEST_F(DeviceImportEdges, AShapeOrFileOffsetPast64BitsIsRefused) {
  arch::Application app = app_;
  app.outputs[0].dtype = "u32";
  app.outputs[0].shape = {0xffffffffu, 0xffffffffu};
  expect_bad_input(import(app), dir_ +
                                    "/bad.ipuexe: outputs[0]: binding 'received': shape "
                                    "[4294967295, 4294967295] of u32 overflows 64 bits");
  expect_nothing_written(dir_, "out.capnp");
  app = app_;
  app.outputs[0].slices[0].file_offset = UINT64_MAX;
  expect_bad_input(import(app), dir_ +
                                    "/bad.ipuexe: outputs[0].slices[0]: binding 'received': "
                                    "fileOffset 18446744073709551615 + size 12 overflows 64 bits");
  expect_nothing_written(dir_, "out.capnp");
  app = app_;
  app.outputs[0].shape = {13};
  expect_bad_input(import(app),
                   "binding 'received': shape [13] of u8 is 13 bytes, but its "
                   "slices hold 12");
}

TEST_F(DeviceImportEdges, AU32BindingImportsAsBytesWithAWarning) {
  app_.outputs[0].dtype = "u32";
  app_.outputs[0].shape = {3};
  const auto r = import(app_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("[warning] " + dir_ +
                       "/bad.ipuexe: outputs[0]: binding 'received' (u32 [3]) imports as untyped "
                       "bytes"),
            std::string::npos)
      << r.err;
}

TEST_F(DeviceImportEdges, AYamlNameWritesYaml) {
  for (const char* name : {"/x.yaml", "/x.yml"}) {
    const std::string out = dir_ + name;
    const auto r = run_lockstep({"device", "import", image_, "--machine", "ipu21-c600-t16", "-o", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string text = testing::read_file(out);
    EXPECT_EQ(text.find('\0'), std::string::npos) << name << " is not text";
    EXPECT_EQ(text.rfind("LKSPKG", 0), std::string::npos) << name;
    // It reads back as the package: exporting it gives the image's bytes.
    ASSERT_EQ(run_lockstep({"device", "export", out, "--host-io", "none", "-o", out + ".ipuexe"}).exit_code, 0);
    EXPECT_TRUE(testing::read_file(out + ".ipuexe") == testing::read_file(image_)) << name;
  }
  ASSERT_EQ(
      run_lockstep({"device", "import", image_, "--machine", "ipu21-c600-t16", "-o", dir_ + "/x.capnp"}).exit_code, 0);
  EXPECT_EQ(testing::read_file(dir_ + "/x.capnp").rfind("LKSPKG", 0), 0u);
}

TEST(DeviceEdges, CrosscheckRefusesAProfileWithATileTwice) {
  const std::string dir = testing::temp_dir("edges_profile");
  const std::string sim = simulated(dir);
  fs::copy(sim, dir + "/dev", fs::copy_options::recursive);
  arch::Profile profile = arch::read_profile(sim + "/profile.lsprof");
  ASSERT_GE(profile.tiles.size(), 2u);
  profile.tiles[1].physical_tile = profile.tiles[0].physical_tile;
  arch::write_profile(profile, dir + "/dev/profile.lsprof");
  expect_bad_input(run_lockstep({"crosscheck", "--simulated", sim, "--device", dir + "/dev", "-o", dir + "/r"}),
                   dir + "/dev/profile.lsprof: tiles[1]: physicalTile " +
                       std::to_string(profile.tiles[0].physical_tile) + " appears twice (also tiles[0])");
  expect_nothing_written(dir, "r");
}

}  // namespace
}  // namespace lockstep
