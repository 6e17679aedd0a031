#include "support/package_run.hpp"

#include <gtest/gtest.h>

#include "sim/backend.hpp"

namespace lockstep::testing {

void expect_package_proves_payload(const arch::Package& package, const arch::MachineDescription& machine) {
  // keep_going: a hazard must not hide whether the payload arrived, so both are reported.
  sim::RunOptions run_options;
  run_options.keep_going = true;
  const sim::RunResult run = sim::make_systemc_backend(machine)->run(package, run_options);
  EXPECT_TRUE(run.expectation_failures.empty()) << run.expectation_failures.size() << " expectations failed";
  for (const auto& hazard : run.hazards) {
    ADD_FAILURE() << sim::hazard_name(hazard.kind) << " tile " << hazard.tile << " phase " << hazard.phase << ": "
                  << hazard.detail;
    break;
  }
  size_t shown = 0;
  for (const auto& failure : run.expectation_failures) {
    if (shown++ == 3) break;
    ADD_FAILURE() << "tile " << failure.tile << " 0x" << std::hex << failure.address << ": expected "
                  << failure.expected << " found " << failure.found;
  }
  EXPECT_TRUE(run.ok());
}

}  // namespace lockstep::testing
