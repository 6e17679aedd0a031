// `device export`, `device import` and `device run` as a user runs them: a compiled
// synthetic package (exchanges, syncs, Repeats, patches; no kernels) exports, imports and
// exports again to the same bytes, and the imported package runs like the original; a
// package with kernels is refused naming them; `device run` drives a runner that calls
// `device simulate`, and refuses failing, slow and sloppy runners leaving nothing behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "sim/device/application.hpp"
#include "support/test_support.hpp"

namespace lockstep {
namespace {

using testing::expect_bad_input;
using testing::expect_nothing_written;
using testing::run_lockstep;
namespace fs = std::filesystem;

class DeviceImage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = testing::temp_dir("device-image");
    package_ = testing::source_path("tests/integration/packages/back_to_back.yaml");
  }
  static std::string dir_;
  static std::string package_;
};
std::string DeviceImage::dir_;
std::string DeviceImage::package_;

// A compiled synthetic package (its table above the loader's slot and the entry stub)
// exports, imports back byte for byte, and the imported package runs to the same cycles
// and memory.
TEST_F(DeviceImage, CompiledPackagesExportAndRoundTrip) {
  const std::string capture = dir_ + "/synth.yaml", compiled = dir_ + "/synth.capnp";
  ASSERT_EQ(run_lockstep({"capture", "synth", "--family", "transformer", "--tiles", "16", "--phases", "2", "--seed",
                          "5", "--machine", "ipu21-c600-t16", "-o", capture})
                .exit_code,
            0);
  ASSERT_EQ(run_lockstep({"compile", capture, "-o", compiled}).exit_code, 0);
  const std::string image = dir_ + "/synth.ipuexe", imported = dir_ + "/synth-imported.capnp",
                    again = dir_ + "/synth-again.ipuexe";
  auto r = run_lockstep({"device", "export", compiled, "-o", image});
  if (r.exit_code != 0 && r.err.find("vendor-compiled") != std::string::npos) {
    // With the proof's checksum kernels the export needs an object; without them it runs.
    ASSERT_EQ(run_lockstep({"compile", capture, "--no-proof", "-o", compiled}).exit_code, 0);
    r = run_lockstep({"device", "export", compiled, "-o", image});
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_lockstep({"device", "import", image, "--machine", "ipu21-c600-t16", "-o", imported});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run_lockstep({"device", "export", imported, "-o", again}).exit_code, 0);
  EXPECT_EQ(testing::read_file(image), testing::read_file(again));
  const auto original_run = run_lockstep({"run", compiled, "--json"});
  const auto imported_run = run_lockstep({"run", imported, "--json"});
  ASSERT_EQ(original_run.exit_code, 0) << original_run.err;
  ASSERT_EQ(imported_run.exit_code, 0) << imported_run.err;
  const auto a = nlohmann::json::parse(original_run.out), b = nlohmann::json::parse(imported_run.out);
  // The image's `run` call brings the completion store (3 instructions, 18 cycles).
  EXPECT_EQ(a["total_cycles"].get<uint64_t>() + 18, b["total_cycles"].get<uint64_t>());
}

// Data at the loader's launch slot (IPU21-DEVICE.md section 13) is refused naming the tile.
TEST_F(DeviceImage, DataBelowTheEntryStubIsRefused) {
  std::string yaml = testing::read_file(testing::source_path("tests/integration/packages/p2p_3w.yaml"));
  const std::string anchor = "      - {address: 0x60000, size: 12, fill: {tokens: 7}}\n";
  ASSERT_NE(yaml.find(anchor), std::string::npos);
  yaml.replace(yaml.find(anchor), anchor.size(), anchor + "      - {address: 0x4c000, words: [1]}\n");
  const std::string path = dir_ + "/low.yaml";
  testing::write_file(path, yaml);
  expect_bad_input(run_lockstep({"device", "export", path, "-o", dir_ + "/low.ipuexe"}),
                   "export: tile 0 (physical 0): data at 0x4c000 lies below 0x4c018");
  expect_nothing_written(dir_, "low.ipuexe");
}

TEST_F(DeviceImage, ExportImportExportGivesTheSameBytesForEachPackage) {
  for (const char* name : {"p2p_3w", "multicast", "paired"}) {
    const std::string pkg = testing::source_path(std::string("tests/integration/packages/") + name + ".yaml");
    const std::string a = dir_ + "/" + name + ".ipuexe", b = dir_ + "/" + name + ".again.ipuexe";
    ASSERT_EQ(run_lockstep({"device", "export", pkg, "-o", a}).exit_code, 0) << name;
    const auto r =
        run_lockstep({"device", "import", a, "-o", dir_ + "/" + name + ".capnp", "--machine", "ipu21-c600-t16"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(run_lockstep({"device", "export", dir_ + "/" + name + ".capnp", "-o", b}).exit_code, 0) << name;
    EXPECT_EQ(testing::read_file(a), testing::read_file(b)) << name;
  }
}

TEST_F(DeviceImage, ExportImportExportGivesTheSameBytes) {
  const std::string a = dir_ + "/a.ipuexe", b = dir_ + "/b.ipuexe", back = dir_ + "/back.capnp";
  const auto exported = run_lockstep({"device", "export", package_, "-o", a});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const arch::Application app = arch::read_application(a);
  // Every physical tile of the chip, as the stack writes (section 12.4): the package's 3
  // tiles, and 1,469 (13 more of the 16-tile machine and the 1,456 outside it) that run the
  // program's barriers only.
  ASSERT_EQ(app.tiles.size(), 1472u);
  size_t barrier_only = 0;
  for (const auto& r : app.debug_regions) barrier_only += r.name == "barrier-only tile";
  EXPECT_EQ(barrier_only, 1469u);
  for (size_t i = 1; i < app.tiles.size(); ++i) EXPECT_LT(app.tiles[i - 1].physical_tile, app.tiles[i].physical_tile);
  for (const auto& tile : app.tiles) {
    EXPECT_EQ(tile.entry_point, 0x4c010u);
    EXPECT_EQ(tile.diagnostic_address, 0x58000u);
    ASSERT_FALSE(tile.segments.empty());
    EXPECT_EQ(tile.segments.front().address, 0x4c010u);  // the loader's rule (section 13)
  }
  EXPECT_EQ(app.entry_points, (std::vector<arch::EntryPoint>{{"run", 0, 0}}));

  const auto imported = run_lockstep({"device", "import", a, "-o", back, "--machine", "ipu21-c600-t16"});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const auto again = run_lockstep({"device", "export", back, "-o", b});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(testing::read_file(a), testing::read_file(b));

  // The imported package runs as the original does, plus what the image's host call brings:
  // a `run` call without phases (nothing is bound), so only the completion store at the end,
  // 3 instructions of 6 cycles (docs/device.md "Completion").
  const auto original = run_lockstep({"run", package_, "--json"});
  const auto copy = run_lockstep({"run", back, "--json"});
  ASSERT_EQ(original.exit_code, 0) << original.err;
  ASSERT_EQ(copy.exit_code, 0) << copy.err;
  EXPECT_EQ(nlohmann::json::parse(original.out)["total_cycles"].get<uint64_t>() + 18,
            nlohmann::json::parse(copy.out)["total_cycles"].get<uint64_t>());
}

// The loader sends at most 643 frames of 992 bytes from 0x4c010 (section 17.4): a package
// whose data reaches past 0xe7bb0 cannot become an image (validation, which export runs
// first, holds packages to the loader's limit), and nothing is written.
TEST_F(DeviceImage, DataPastTheLoadersLastFrameIsRefused) {
  const std::string package = dir_ + "/high.yaml", image = dir_ + "/high.ipuexe";
  std::string text = testing::read_file(package_);
  const size_t at = text.find("segments:");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + std::string("segments:").size(), "\n      - {address: 0xe7ba0, size: 32, fill: zero}");
  testing::write_file(package, text);
  const auto r = run_lockstep({"device", "export", package, "-o", image});
  expect_bad_input(r, "reaches past the loader limit 0xe7bb0");
  EXPECT_FALSE(fs::exists(image));
}

TEST_F(DeviceImage, ImportNamesAWordItCannotExecute) {
  const std::string a = dir_ + "/flip.ipuexe";
  ASSERT_EQ(run_lockstep({"device", "export", package_, "-o", a}).exit_code, 0);
  arch::Application app = arch::read_application(a);
  // The last code word of the first tile (its halt) becomes a trap.
  const arch::DebugRegion* code = nullptr;
  for (const auto& r : app.debug_regions) {
    if (r.physical_tile == app.tiles[0].physical_tile && r.name == "generated tile program") code = &r;
  }
  ASSERT_NE(code, nullptr);
  for (auto& seg : app.tiles[0].segments) {
    if (seg.address == code->address) {
      seg.data[seg.data.size() - 4] = 0x00;
      seg.data[seg.data.size() - 3] = 0x10;
      seg.data[seg.data.size() - 2] = 0x80;
      seg.data[seg.data.size() - 1] = 0x41;
    }
  }
  arch::write_application(app, a);
  const auto r = run_lockstep({"device", "import", a, "-o", dir_ + "/flip.capnp", "--machine", "ipu21-c600-t16"});
  expect_bad_input(r, "word 0x41801000: not code Lockstep can execute");
  EXPECT_NE(r.err.find("tile 0 (physical 0)"), std::string::npos) << r.err;
  expect_nothing_written(dir_, "flip.capnp");
}

TEST_F(DeviceImage, ForeignFilesAreOneLine) {
  const std::string binary = dir_ + "/pkg.capnp";
  ASSERT_EQ(run_lockstep({"package", "convert", package_, "-o", binary}).exit_code, 0);
  expect_bad_input(run_lockstep({"device", "import", binary, "-o", dir_ + "/x.capnp"}), "is a Lockstep package");
  const std::string cut = dir_ + "/cut.ipuexe";
  ASSERT_EQ(run_lockstep({"device", "export", package_, "-o", cut}).exit_code, 0);
  const std::string bytes = testing::read_file(cut);
  testing::write_file(cut, bytes.substr(0, bytes.size() / 2 & ~size_t{7}));
  expect_bad_input(run_lockstep({"device", "import", cut, "-o", dir_ + "/x.capnp"}), "truncated device image");
  expect_nothing_written(dir_, "x.capnp");
  // Images and profiles are flat messages of one family: each reader names the other.
  const std::string image = dir_ + "/whole.ipuexe", profile = dir_ + "/p.lsprof", stack = dir_ + "/stack.lsprof";
  ASSERT_EQ(run_lockstep({"device", "export", package_, "-o", image}).exit_code, 0);
  ASSERT_EQ(run_lockstep({"run", package_, "--profile", profile}).exit_code, 0);
  ASSERT_EQ(run_lockstep({"profile", "export", profile, "--stack", stack}).exit_code, 0);
  expect_bad_input(run_lockstep({"profile", "summary", image}), "is a device image (.ipuexe), not a profile");
  for (const std::string& p : {profile, stack}) {
    expect_bad_input(run_lockstep({"device", "import", p, "-o", dir_ + "/x.capnp"}),
                     "is a cycle profile (.lsprof), not a device image");
  }
  expect_bad_input(run_lockstep({"device", "import", package_, "-o", dir_ + "/x.capnp"}),
                   "is a text file, not a device image");
  expect_nothing_written(dir_, "x.capnp");
}

TEST_F(DeviceImage, KernelsNeedVendorCode) {
  const std::string pkg = testing::source_path("tests/integration/packages/repeat27.yaml");
  const auto r = run_lockstep({"device", "export", pkg, "-o", dir_ + "/k.ipuexe"});
  expect_bad_input(r, "export: kernels need vendor-compiled worker code: lockstep_kernel_checksum_2 (tiles ");
  EXPECT_NE(r.err.find("give --object FILE providing them"), std::string::npos);
  expect_nothing_written(dir_, "k.ipuexe");
}

TEST_F(DeviceImage, RunDrivesARunnerThatSimulates) {
  const std::string runner = "\"" + std::string(LOCKSTEP_BINARY_PATH) +
                             "\" device simulate \"$LOCKSTEP_PACKAGE\" -o \"$LOCKSTEP_RESULT_DIR\" "
                             "--invocations \"$LOCKSTEP_INVOCATIONS\" >/dev/null && test -s \"$1\" && "
                             "test \"$2\" = \"$LOCKSTEP_RESULT_DIR\" && test \"$3\" = \"$LOCKSTEP_PACKAGE\"";
  const auto r = run_lockstep({"device", "run", package_, "--runner", runner, "-o", dir_ + "/dev", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto result = nlohmann::json::parse(testing::read_file(dir_ + "/dev/result.json"));
  EXPECT_EQ(result["runner"], "lockstep-simulator");
  EXPECT_EQ(result["status"], "ok");
  expect_nothing_written(dir_, "dev.tmp");
  // The folder checks against a plain simulation of the same package.
  ASSERT_EQ(run_lockstep({"device", "simulate", package_, "-o", dir_ + "/sim"}).exit_code, 0);
  const auto check = run_lockstep({"crosscheck", "--simulated", dir_ + "/sim", "--device", dir_ + "/dev", "-o",
                                   dir_ + "/report", "--max-total-error", "0"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST_F(DeviceImage, RunRefusesFailingSlowAndSloppyRunners) {
  expect_bad_input(run_lockstep({"device", "run", package_, "--runner", "exit 3", "-o", dir_ + "/f1"}),
                   "the runner exited with status 3; no result folder written");
  expect_nothing_written(dir_, "f1");
  const auto slow = run_lockstep(
      {"device", "run", package_, "--runner", "sleep 30 & sleep 30", "-o", dir_ + "/f2", "--timeout", "0.5"});
  expect_bad_input(slow, "the runner took longer than --timeout");
  expect_nothing_written(dir_, "f2");
  expect_bad_input(run_lockstep({"device", "run", package_, "--runner",
                                 "echo '{}' > \"$LOCKSTEP_RESULT_DIR/result.json\"", "-o", dir_ + "/f3"}),
                   "the runner left a malformed result folder");
  expect_nothing_written(dir_, "f3");
  expect_bad_input(run_lockstep({"device", "run", package_, "--runner", "true", "-o", dir_ + "/f4"}),
                   "the runner left a malformed result folder");
  expect_nothing_written(dir_, "f4");
}

}  // namespace
}  // namespace lockstep
