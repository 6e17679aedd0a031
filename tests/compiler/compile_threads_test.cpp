// The package does not depend on the thread count: phases are scheduled, tiles planned and
// packaged, and the payload proof read and digested in parallel, every result kept by index.
// One thread and several must give the same bytes.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <string>

#include "compiler/compile.hpp"
#include "formats/package.hpp"
#include "formats/package_io.hpp"
#include "workload/synth.hpp"

namespace lockstep::compiler {
namespace {

std::string compiled_bytes(const arch::Capture& capture, const arch::MachineDescription& machine,
                           const std::string& config, size_t threads) {
  const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  CompileOptions options;
  options.config = parse_config(config);
  return arch::package_to_capnp_bytes(compile_capture(capture, machine, options).package);
}

TEST(CompileThreads, OneThreadAndSeveralGiveTheSamePackage) {
  const arch::MachineDescription machine = arch::load_machine("ipu21-c600");
  for (const auto family : {workload::SynthFamily::Transformer, workload::SynthFamily::Multicast}) {
    workload::SynthOptions synth;
    synth.family = family;
    synth.tiles = 64;
    synth.seed = 5;
    synth.phases = 6;
    const arch::Capture capture = workload::synthesize_capture(synth, machine);
    for (const std::string config : {"B1024", "latency"}) {
      const std::string one = compiled_bytes(capture, machine, config, 1);
      EXPECT_EQ(compiled_bytes(capture, machine, config, 2), one) << config;
      EXPECT_EQ(compiled_bytes(capture, machine, config, 5), one) << config;
    }
  }
}

}  // namespace
}  // namespace lockstep::compiler
