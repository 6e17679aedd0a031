// The whole small model through the device path: `lockstep build vit-tiny` exports, with an
// ELF object defining every kernel symbol it calls, to an image with the stack's host calls;
// the image simulates through its `run` call to the package's own output, its cycles the
// package's plus the host share; it imports back and exports to the same bytes. Prints the
// figures docs/device.md quotes.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "sim/device/application.hpp"
#include "support/elf_objects.hpp"
#include "support/test_support.hpp"

namespace lockstep::testing {
namespace {

TEST(DeviceExportModel, VitTinyRunsThroughItsHostCallsToThePackagesOutput) {
  const std::string dir = temp_dir("device_export_model");
  const std::string package = dir + "/vit-tiny.lkspkg", image = dir + "/vit-tiny.ipuexe";
  ASSERT_EQ(run_lockstep({"build", "vit-tiny", "-o", package}).exit_code, 0);
  // Without an object the export names every kernel symbol the code calls: the stack's where
  // its kernel does the job exactly (gelu), Lockstep's own ABI otherwise.
  auto r = run_lockstep({"device", "export", package, "-o", image});
  ASSERT_EQ(r.exit_code, 2);
  std::set<std::string> symbols;
  const std::regex symbol("(lockstep_kernel|ipu_stack)_[a-z0-9_]+");
  for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), symbol); it != std::sregex_iterator(); ++it) {
    symbols.insert(it->str());
  }
  ASSERT_GE(symbols.size(), 5u) << r.err;
  EXPECT_TRUE(symbols.count("ipu_stack_gelu_tanh_approx_f16")) << r.err;
  EXPECT_FALSE(symbols.count("lockstep_kernel_gelu_2")) << r.err;
  write_file(dir + "/kernels.o", elf_object_defining({symbols.begin(), symbols.end()}));
  r = run_lockstep(
      {"device", "export", package, "--object", dir + "/kernels.o", "-o", image, "--host-inputs", dir + "/calls"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const arch::Application app = arch::read_application(image);
  ASSERT_EQ(app.host_exchange.calls.size(), 1u);  // vit-tiny's weights are in its image: no initialize
  const arch::HostCall& run = app.host_exchange.calls[0];
  EXPECT_EQ(run.name, "run");
  EXPECT_EQ(std::filesystem::file_size(dir + "/calls/run.bin"), 98304u);

  r = run_lockstep({"run", package, "--output-dir", dir + "/package", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto package_run = nlohmann::json::parse(r.out);
  r = run_lockstep({"device", "simulate", image, "--machine", "ipu21-c600-t64", "--input",
                    "run=" + dir + "/calls/run.bin", "-o", dir + "/image"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const arch::AppBinding& b : app.outputs) {
    if (b.name == "completion") continue;  // the runtime's word, moved by no call (17.3)
    EXPECT_EQ(read_file(dir + "/image/outputs/" + b.name + ".bin"), read_file(dir + "/package/" + b.name + ".bin"))
        << b.name;
  }
  // The image's cycles: the package's, the host share (phases, staged copies, the programs'
  // words) and the waits for it, which the imported package's split shows.
  ASSERT_EQ(
      run_lockstep({"device", "import", image, "--machine", "ipu21-c600-t64", "-o", dir + "/back.lkspkg"}).exit_code,
      0);
  r = run_lockstep({"run", dir + "/back.lkspkg", "--input", dir + "/calls/run.bin", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto image_run = nlohmann::json::parse(r.out);
  const auto image_total = nlohmann::json::parse(read_file(dir + "/image/result.json"))["total_cycles"].get<uint64_t>();
  EXPECT_EQ(image_run["total_cycles"].get<uint64_t>(), image_total);
  const uint64_t host = image_run["cycle_split"]["host"].get<uint64_t>();
  EXPECT_EQ(image_run["cycle_split"]["compute"], package_run["cycle_split"]["compute"]);
  EXPECT_EQ(image_run["cycle_split"]["exchange"], package_run["cycle_split"]["exchange"]);
  EXPECT_GE(image_total, package_run["total_cycles"].get<uint64_t>() + host);
  ASSERT_EQ(run_lockstep(
                {"device", "export", dir + "/back.lkspkg", "--object", dir + "/kernels.o", "-o", dir + "/again.ipuexe"})
                .exit_code,
            0);
  EXPECT_TRUE(read_file(image) == read_file(dir + "/again.ipuexe"));
  std::printf(
      "figures: vit-tiny image %llu bytes, %zu kernel symbols, run call %u host phases (%llu input bytes, "
      "%llu output bytes); simulated %llu cycles, of which host %llu; the package alone %llu\n",
      static_cast<unsigned long long>(std::filesystem::file_size(image)), symbols.size(), run.phases,
      static_cast<unsigned long long>(std::filesystem::file_size(dir + "/calls/run.bin")),
      static_cast<unsigned long long>(std::filesystem::file_size(dir + "/image/outputs/output.bin")),
      static_cast<unsigned long long>(image_total), static_cast<unsigned long long>(host),
      static_cast<unsigned long long>(package_run["total_cycles"].get<uint64_t>()));
}

}  // namespace
}  // namespace lockstep::testing
