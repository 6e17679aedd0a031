#pragma once
// `lockstep calibrate`: each kernel's cost parameters fitted to the compute samples of
// measured profiles (docs/calibration.md). A sample counts when its step names a kernel with
// a cost model through Lockstep's `kernelSpec` metadata ("gelu(1024)"); its cycles per call
// are (duration - callCycles) / invocations, callCycles being the supervisor's call sequence
// around the kernel where the profile records it (0 where not: the fit's constant term then
// holds it). Least squares over the samples; parameters the shapes cannot tell apart keep
// their defaults, the last ones first.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "profile/profile.hpp"

namespace lockstep::calibration {

struct KernelFit {
  std::string kernel;
  uint64_t samples = 0;
  uint64_t shapes = 0;  // distinct shapes, as the cost model sees them (its terms)
  std::vector<std::string> parameters;
  std::vector<double> defaults;
  std::vector<double> fitted;
  std::vector<bool> held;  // kept at its default: the shapes do not determine it
  // Per call, model minus measured, over the samples: before (defaults) and after (fitted).
  double rms_before = 0, max_before = 0, rms_after = 0, max_after = 0;
  double mean_cycles = 0;  // measured cycles per call, mean over the samples
};

struct Calibration {
  double clock_hz = 0;
  std::vector<KernelFit> kernels;           // by name
  std::map<std::string, uint64_t> skipped;  // compute samples by kernel symbol that no cost model reads
  uint64_t without_call_cycles = 0;         // samples whose profile did not record callCycles
};

// Throws InputError when the profiles disagree on clockHz (IPU21-DEVICE.md 15.5) or a
// kernelSpec names a kernel with scalars it refuses. `names` name the profiles in errors;
// `machine` gives the terms' issue interval and worker count.
Calibration calibrate(const std::vector<arch::Profile>& profiles, const std::vector<std::string>& names,
                      const arch::MachineDescription& machine);

// The fitted parameters as `run --costs` takes them (calibration/costs_file.hpp).
std::map<std::string, std::vector<double>> fitted_costs(const Calibration& calibration);

}  // namespace lockstep::calibration
