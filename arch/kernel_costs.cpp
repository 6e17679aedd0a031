#include "arch/kernel_costs.hpp"

#include <cmath>

namespace lockstep::arch {

uint64_t cost_cycles(const std::vector<double>& parameters, const std::vector<double>& terms) {
  long double total = 0;
  for (size_t i = 0; i < parameters.size() && i < terms.size(); ++i) {
    total += static_cast<long double>(parameters[i]) * terms[i];
  }
  const long double nearest = std::round(total);
  if (std::fabs(total - nearest) < 1e-6L) total = nearest;
  return total <= 0 ? 0 : static_cast<uint64_t>(std::ceil(total));
}

uint64_t fitted_or_builtin(const MachineDescription& machine, const std::string& kernel,
                           const std::vector<double>& terms, uint64_t builtin) {
  const auto fitted = machine.kernel_costs.find(kernel);
  return fitted == machine.kernel_costs.end() ? builtin : cost_cycles(fitted->second, terms);
}

}  // namespace lockstep::arch
