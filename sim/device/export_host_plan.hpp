#pragma once
// The IPU21 stack's host protocol for a package without host phases (IPU21-DEVICE.md 13,
// 17.1, 17.4): its weights come in through an `initialize` call, its inputs through `run`,
// and its outputs go back through `run`, each binding slice cut into chunks of at most 4 KiB
// moved through its tile's 4 KiB slot of host page 1, one chunk per tile a batch. docs/device.md,
// "Host calls of an exported image".
#include "arch/machine.hpp"
#include "formats/package.hpp"

namespace lockstep::arch {

// Adds host steps (initialize phases, then run's input phases, first; run's output phases
// last) and the session that drives them to the package. Throws InputError naming the binding,
// tile and address when a slice is not whole 4-byte words (host packets move words).
void add_stack_host_calls(Package& package, const MachineDescription& machine);

}  // namespace lockstep::arch
