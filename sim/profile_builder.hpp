#pragma once
// Turns the step records of a profiled run (model/step_record.hpp) into a cycle profile
// in the stack's terms (IPU21-DEVICE.md 15.4): exchange, synchronisation, compute and
// idle samples with phase, epoch, operation, kernel and metadata.
#include <cstdint>
#include <string>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "model/chip.hpp"
#include "profile/profile.hpp"

namespace lockstep::sim {

arch::Profile build_profile(const model::Chip& chip, const arch::Package& package,
                            const arch::MachineDescription& machine, uint64_t total_cycles);

}  // namespace lockstep::sim
