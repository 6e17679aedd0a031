#pragma once
// A device image back to a package (docs/device.md "Import"): each tile's supervisor code
// is read back into the authoring steps by recognising the sequences the lowering writes
// (supervisor/supervisor_emitter.cpp), naming called helpers from the image's per-tile debug
// regions; the recovered steps are lowered again and must give the image's words exactly,
// so what imports is code Lockstep executes as the image would. Data segments become
// package segments, bindings come back on logical tiles of `machine`.
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "sim/device/application.hpp"

namespace lockstep::arch {

// InputError, one line: "FILE: tile 12 (physical 77): address 0x6f010: word 0x12345678:
// not code Lockstep can execute (...)", or naming what the image lacks or what the model
// cannot take (device config writes, host calls, a debug region it reads outside tile
// memory, a binding whose shape does not hold its bytes). An image the IPU21
// stack built (runtime symbols ipu_stack_static_*) goes to import_stack_application.
Package import_application(const Application& app, const MachineDescription& machine, const std::string& file_name);

// The bindings whose dtype a package cannot type (u32, f8f143): they import as their bytes,
// and each is named in one line ("FILE: outputs[1]: binding 'profile.start-cycle' (u32 [1])
// imports as untyped bytes: ...") for the command to print.
std::vector<std::string> untyped_bindings(const Application& app, const std::string& file_name);

// An image the IPU21 stack built (sim/device/application_import_stack.cpp): its generated code read
// back with sim/device/stack_code_reader.hpp. The steps run on Lockstep's lowering (its runtime
// differs from the stack's, so there is no word comparison); kernels, host phases and
// checkpoints are refused naming the tile, address and word.
Package import_stack_application(const Application& app, const MachineDescription& machine,
                                 const std::string& file_name);

}  // namespace lockstep::arch
