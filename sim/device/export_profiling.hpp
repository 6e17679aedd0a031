#pragma once
// Cycle samples in an exported image, as the IPU21 stack's compiler places them
// (IPU21-DEVICE.md 15.1, 17.3): `overall` samples each tile's cycle counter into 0x58004 after
// its input host phases and into 0x58008 before its output ones; `full` also samples before
// each top-level step and after the last into a buffer at one address on every tile, read back
// as the `profile.cycles` output binding and described by the image's profile plans. A sample
// is a call of the stack runtime's `ipu_stack_static_sample_cycle`, whose worker code (it needs
// `runall`) the image gets from `--object`. docs/device.md, "Cycle samples".
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "sim/device/application.hpp"

namespace lockstep::arch {

enum class ProfilingMode { None, Overall, Full };

inline constexpr const char* kSampleSymbol = "ipu_stack_static_sample_cycle";
inline constexpr uint32_t kStartCycleAddress = 0x58004;
inline constexpr uint32_t kEndCycleAddress = 0x58008;

// Adds the samples, their binding(s) and the SRAM they use (zero segments) to the package.
// Throws InputError naming the tile and range when that SRAM is taken, or when the package
// already has host phases or profile bindings.
void add_profiling(Package& package, const MachineDescription& machine, ProfilingMode mode);

// A tile's profile plan under full profiling: its top-level steps between the buffer samples
// of `profile.cycles` (section 15.4's kinds; a Repeat's metadata lists the exchanges inside it,
// which `device import` needs for their phases). Empty when the package has no such binding.
std::vector<PlanStep> profiled_plan(const TileProgram& program, const Package& package);

// The exchange entries of a plan in pre-order, one per exchange step: entries with the phase
// bit, and the exchanges a Repeat entry lists.
std::vector<PlanStep> plan_exchanges_in_order(const std::vector<PlanStep>& plan);

}  // namespace lockstep::arch
