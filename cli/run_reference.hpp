#pragma once
// `run --reference`: the separate FP32 reference (workload/reference.hpp) of a package made by
// `lockstep build`, from the workload text it records, the weights exactly as its segments hold
// them and the input the run uses, held against the simulated `output` binding.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "workload/reference.hpp"

namespace lockstep::cli {

// The reference output [rows, hidden] for the `patches` input the run uses: `inputs` ("patches"
// given with --input) or else the package's initial bytes of that binding. The workload is
// lowered on `machine` (the package's) only to find where its weights lie. InputError "FILE:
// --reference ..." for a package without a recorded workload, weights, input image or an
// `output` binding of FP32 [rows, hidden]. With `weights_file` (a safetensors file as `build
// --weights` reads it), the reference runs on those weights as given, before quantisation.
std::vector<float> package_reference(const arch::Package& package, const arch::MachineDescription& machine,
                                     const std::string& file, const std::map<std::string, std::vector<uint8_t>>& inputs,
                                     const std::string& weights_file = "");

// The simulated `output` binding (FP32 bytes; package_reference checked its size) against the
// reference.
workload::Agreement compare_output(const std::map<std::string, std::vector<uint8_t>>& outputs,
                                   const std::vector<float>& reference);

}  // namespace lockstep::cli
