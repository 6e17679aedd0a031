#pragma once
// `lockstep device simulate`, shared by its two inputs: a package (device_simulate_command.cpp)
// and a stack image run as `host-run` would (device_simulate_image.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "sim/backend.hpp"
#include "sim/device/device_result.hpp"

namespace lockstep::cli {

struct SimulateImageArgs {
  std::string image;
  std::string output_dir;
  std::string machine;
  std::vector<std::string> calls;         // --call: the host calls in order (default: the image's)
  std::vector<std::string> inputs;        // --input CALL=FILE
  std::vector<std::string> call_outputs;  // --call-output CALL=FILE
  uint64_t max_cycles = 0;
  double timeout_seconds = 0;
  size_t jobs = 0;
  bool json = false;
  std::vector<std::string> watches;  // --watch TILE:ADDRESS[:BYTES]
  std::string costs;                 // --costs FILE (calibration/costs_file.hpp)
};

// result.json's fields for a finished run of `source` (its file's bytes give the digest);
// outputs are the run's output bindings.
replay::DeviceResult describe_simulation(const std::string& source, const std::string& source_bytes,
                                         const arch::MachineDescription& machine, uint32_t invocations,
                                         const sim::RunResult& result);

int simulate_image(const SimulateImageArgs& args);

}  // namespace lockstep::cli
