// scripts/host-run-runner.sh against a stand-in for the IPU21 stack's command line that accepts
// only the arguments IPU21-DEVICE.md section 17 gives (host-run, profile-extract) and logs them:
// the wrapper must call exactly those, split the run output by the call's file layout (17.1),
// and stop before the device on an image the stack's tools would refuse.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "sim/device/application.hpp"
#include "support/elf_objects.hpp"
#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

// Exits 2 (the stack's parse error) on anything but section 17's forms.
constexpr const char* kStandIn = R"(#!/bin/sh
echo "$*" >> "$STAND_IN_LOG"
case "$1" in
  host-run)
    [ $# -eq 7 ] && [ "$5" = run ] && [ "$6" = --output ] || exit 2
    case "$7" in run=*) printf '0123456789abcdef' > "${7#run=}";; *) exit 2;; esac
    echo "calls=1 hostRun=PASS";;
  profile-extract)
    [ $# -eq 7 ] && [ "$4" = -o ] && [ "$6" = --clock-hz ] || exit 2
    cp "$STAND_IN_PROFILE" "$5"
    echo "package=$2 deviceOutputBytes=16 tiles=64 profile=$5";;
  *) exit 2;;
esac
)";

class HostRunRunner : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir("host_run_runner");
    stand_in_ = dir_ + "/ipu-stack";
    write_file(stand_in_, kStandIn);
    std::filesystem::permissions(stand_in_, std::filesystem::perms::owner_all);
  }
  std::string environment() const {
    return "IPU_BOOTLOADER=" + dir_ + "/boot.elf IPU_CONFIGURATION=" + dir_ + "/card.ipucfg IPU_STACK=" + stand_in_ +
           " STAND_IN_LOG=" + dir_ + "/log STAND_IN_PROFILE=" + dir_ +
           "/sim/profile.lsprof LOCKSTEP=" + LOCKSTEP_BINARY_PATH + " ";
  }
  std::string script() const { return "sh " + source_path("scripts/host-run-runner.sh"); }
  std::string dir_, stand_in_;
};

// 64 tiles (one loader batch), a `run` call whose output holds y (8 bytes) then profile.cycles.
arch::Application runnable_image() {
  arch::Application app;
  app.compiler_version = "by hand, from IPU21-DEVICE.md 12-17";
  for (uint32_t t = 0; t < 64; ++t) {
    arch::TileImage image;
    image.physical_tile = t;
    image.entry_point = 0x4c010;
    arch::AppSegment stub;
    stub.address = 0x4c010;
    stub.memory_size = 8;
    stub.flags = 5;
    image.segments.push_back(stub);
    app.tiles.push_back(image);
  }
  app.outputs.push_back({"y", "u8", {8}, {{0, 0x60000, 0, 8}}});
  app.outputs.push_back({"profile.cycles", "u32", {2}, {{0, 0x5c000, 0, 8}}});
  app.host_exchange.startup_mark = 1;
  app.host_exchange.pages = {{0, 4096}, {1, 4096}};
  app.host_exchange.attach_order = {0, 1};
  arch::HostCall run;
  run.name = "run";
  run.phases = 1;
  run.outputs = {{1, 0, 0, 16}};
  run.output_batch_ends = {1};
  app.host_exchange.calls.push_back(run);
  app.entry_points.push_back({"run", 0, 0});
  return app;
}

TEST_F(HostRunRunner, CallsOnlyTheStacksDocumentedCommandLineAndSplitsTheRunOutput) {
  const std::string package = source_path("tests/integration/packages/p2p_3w.yaml");
  ASSERT_EQ(run_lockstep({"device", "simulate", package, "-o", dir_ + "/sim"}).exit_code, 0);
  const std::string image = dir_ + "/app.ipuexe", result = dir_ + "/result";
  arch::write_application(runnable_image(), image);
  std::filesystem::create_directory(result);
  const std::string command = environment() + "LOCKSTEP_IMAGE=" + image + " LOCKSTEP_RESULT_DIR=" + result +
                              " LOCKSTEP_CLOCK_HZ=1330000000 " + script() + " > " + dir_ + "/out 2> " + dir_ + "/err";
  ASSERT_EQ(std::system(command.c_str()), 0) << read_file(dir_ + "/err");
  EXPECT_EQ(read_file(dir_ + "/log"),
            "host-run " + image + " " + dir_ + "/boot.elf " + dir_ + "/card.ipucfg run --output run=" + result +
                "/.host-run/run.bin\n"
                "profile-extract " +
                image + " " + result + "/.host-run/run.bin -o " + result + "/profile.lsprof --clock-hz 1330000000\n");
  EXPECT_EQ(read_file(result + "/outputs/y.bin"), "01234567");
  EXPECT_FALSE(std::filesystem::exists(result + "/.host-run"));
  // A folder the cross-check reads: compared with itself, it agrees.
  const auto r = run_lockstep({"crosscheck", "--simulated", result, "--device", result, "-o", dir_ + "/report"});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
}

TEST_F(HostRunRunner, StopsBeforeTheDeviceOnAnImageTheStackCannotRun) {
  const std::string package = source_path("tests/integration/packages/p2p_3w.yaml");
  const auto r = run_lockstep({"device", "run", package, "--runner", environment() + script(), "-o", dir_ + "/dev"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("host-run-runner: the stack cannot run this image: no profile.cycles output binding"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/log"));  // the stand-in was never called
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/dev"));
}

// The whole path a site with hardware takes: `device run --profiling full --object ...
// --runner scripts/host-run-runner.sh` exports the package with the stack's host calls and
// cycle samples, hands the runner each call's input file, and the wrapper drives section 17's
// command line (here the stand-in, which simulates underneath). Its folder is the simulated
// image's, and the cross-check of the two is exact.
TEST_F(HostRunRunner, DeviceRunThroughTheWrapperIsTheSimulatedImage) {
  const std::string package = dir_ + "/bound.yaml";
  write_file(package, read_file(source_path("tests/integration/packages/p2p_3w.yaml")) +
                          "bindings:\n"
                          "  - {name: received, kind: output, slices: [{tile: 1, address: 0x70000, bytes: 12}]}\n"
                          "  - {name: source, kind: input, slices: [{tile: 0, address: 0x60000, bytes: 12}]}\n");
  write_file(dir_ + "/sample.o", elf_object_defining({"ipu_stack_static_sample_cycle"}));
  const std::string stand_in = dir_ + "/ipu-stack-sim";
  write_file(stand_in, "#!/bin/sh\nexec python3 " + source_path("tests/support/ipu_stack_stand_in.py") + " \"$@\"\n");
  std::filesystem::permissions(stand_in, std::filesystem::perms::owner_all);
  std::filesystem::create_directories(dir_ + "/state");
  const std::string runner = "IPU_BOOTLOADER=" + dir_ + "/boot.elf IPU_CONFIGURATION=" + dir_ +
                             "/card.ipucfg IPU_STACK=" + stand_in +
                             " STAND_IN_MACHINE=ipu21-c600-t16 STAND_IN_STATE=" + dir_ + "/state STAND_IN_LOG=" + dir_ +
                             "/log LOCKSTEP=" LOCKSTEP_BINARY_PATH " " + script();
  auto r = run_lockstep({"device", "run", package, "--profiling", "full", "--object", dir_ + "/sample.o", "--runner",
                         runner, "-o", dir_ + "/dev"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(read_file(dir_ + "/log").find(" run --input run="), std::string::npos) << read_file(dir_ + "/log");
  // The same image, simulated directly.
  const std::string image = dir_ + "/bound.ipuexe";
  ASSERT_EQ(run_lockstep({"device", "export", package, "--profiling", "full", "--object", dir_ + "/sample.o", "-o",
                          image, "--host-inputs", dir_ + "/calls"})
                .exit_code,
            0);
  r = run_lockstep({"device", "simulate", image, "--machine", "ipu21-c600-t16", "--input",
                    "run=" + dir_ + "/calls/run.bin", "-o", dir_ + "/sim"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir_ + "/dev/outputs/received.bin"), read_file(dir_ + "/sim/outputs/received.bin"));
  EXPECT_EQ(read_file(dir_ + "/dev/profile.lsprof"), read_file(dir_ + "/sim/profile.lsprof"));
  r = run_lockstep({"crosscheck", "--simulated", dir_ + "/sim", "--device", dir_ + "/dev", "-o", dir_ + "/report"});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("error 0.0000%"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace lockstep::testing
