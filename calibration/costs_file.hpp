#pragma once
// The costs file `lockstep calibrate -o` writes and `run --costs` reads (docs/calibration.md):
//
//   format: lockstep-costs
//   version: 1
//   clock_hz: 1500000000
//   kernels:
//     gelu: {per_value: 12, launch: 15}
//
// Every kernel listed must have a cost model and name each of its parameters once, each a
// finite number at least 0; a kernel not listed keeps its built-in cycles.
#include <map>
#include <string>
#include <vector>

#include "calibration/fit.hpp"

namespace lockstep::calibration {

using KernelCosts = std::map<std::string, std::vector<double>>;  // parameters in cost-model order

// Throws InputError "costs.yaml:LINE: kernels.gelu.per_valu: ..." naming the key.
KernelCosts read_kernel_costs(const std::string& path);
KernelCosts parse_kernel_costs(const std::string& text, const std::string& file_name);

// A parameter or residual as the file and calibrate's table print it (10 significant digits).
std::string cost_text(double value);

// The file's text: the fitted kernels, each with its samples and residual as comments.
std::string kernel_costs_text(const Calibration& calibration);

}  // namespace lockstep::calibration
