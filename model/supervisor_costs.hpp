#pragma once
// Supervisor instruction counts of each step kind (IPU21-EXCHANGE.md sections 5 and 8);
// cycles = instructions x machine.supervisor_cycles_per_instruction. docs/timing.md has
// the tables these functions implement.
#include <cstdint>

#include "arch/machine.hpp"
#include "arch/package.hpp"

namespace lockstep::model {

// Instructions before the sync of an exchange step (CSR setup, worker barrier, DCOUNT,
// the sync itself and the call of the row).
uint64_t exchange_setup_instructions(const arch::ExchangeStep& step);
// A plain sync step.
uint64_t sync_instructions();
// Launching a kernel on the workers and waiting for them.
uint64_t kernel_launch_instructions();
// Entering a Repeat: the frame slot holding the remaining count.
uint64_t repeat_entry_instructions();
// After one body: pointer advances and the count test, plus the branch back unless last.
uint64_t repeat_iteration_instructions(const arch::RepeatStep& step, bool last);
// Supervisor instructions of a patch step (Helper, Setup; Bulk: the launch part).
uint64_t patch_instructions(const arch::PatchStep& step);
// Total cycles of a patch step, Bulk's worker part included.
uint64_t patch_cycles(const arch::PatchStep& step, const arch::MachineDescription& machine);

}  // namespace lockstep::model
