#pragma once
// Runs a compiled package on the SystemC model and fails the current test, with the first
// hazard and the first expectation failures, unless it runs clean and proves its payload.
#include "arch/machine.hpp"
#include "formats/package.hpp"

namespace lockstep::testing {

void expect_package_proves_payload(const arch::Package& package, const arch::MachineDescription& machine);

}  // namespace lockstep::testing
