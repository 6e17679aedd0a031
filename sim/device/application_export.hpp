#pragma once
// A package as the IPU21 stack's application package (`.ipuexe`, docs/IPU21-DEVICE.md
// section 12.4, docs/device.md "Export"): one TileImage per physical tile of the chip (1,472,
// as the stack writes; the tiles the package has no program for run its barriers only),
// sorted by physical id, each holding the entry stub at 0x4c010, the tile's supervisor code
// (supervisor/supervisor_code.hpp) and the package's data; the bindings on physical tiles; one
// entry point "run"; the code's symbols and regions as debug names.
#include <string>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "sim/device/application.hpp"
#include "sim/device/export_profiling.hpp"

namespace lockstep::arch {

inline constexpr uint32_t kImageEntryPoint = 0x4c010;  // the stub's address (section 1)
inline constexpr uint32_t kImageFirstFree = 0x4c018;   // first byte after the stub
inline constexpr uint32_t kImageDiagnosticAddress = 0x58000;
inline constexpr const char* kCodeRegionName = "generated tile program";
inline constexpr const char* kCodeDataRegionName = "generated tile data";
inline constexpr const char* kRowTableRegionName = "exchange row table";
inline constexpr const char* kLinkedObjectRegionName = "linked object";  // --object's code
// The code area of a tile the package has no program for: it runs only the program's
// barriers (its syncs, and each exchange as a tile without a row), as the stack's inactive
// tiles do (section 12.4); import leaves such tiles out.
inline constexpr const char* kBarrierOnlyRegionName = "barrier-only tile";

struct ExportOptions {
  std::string compiler_version;  // Application.compilerVersion ("lockstep 0.1.0")
  uint32_t invocations = 1;      // the program loops this many times in code (section 8.1)
  std::string object_path;       // ELF object providing the intrinsic symbols ("" = none)
  // A package without host phases gets the stack's host calls (sim/device/export_host_plan.hpp):
  // `initialize` for its weights, `run` for its inputs and outputs. false: its bindings stay in
  // tile memory and the image has no host calls (the stack's host-run cannot run it).
  bool host_calls = true;
  // Cycle samples the stack's way (sim/device/export_profiling.hpp); they call the stack
  // runtime's sample helper, which the object must then define.
  ProfilingMode profiling = ProfilingMode::None;
};

// Lowers every tile and assembles the image. InputError, one line starting "export: ",
// when a tile's data lies below 0x4c018 (validation already holds it below 0xe7bb0), or the code calls intrinsic
// symbols (kernels, the bulk patcher) that need vendor worker code and no object provides them. With an object, it is
// linked into every tile's free SRAM (sim/device/object_link.hpp) and each intrinsic's slot branches to its code.
Application export_application(const Package& package, const MachineDescription& machine, const ExportOptions& options);

// "f16", "f32" or "u8" for a binding's element type.
const char* dtype_name(ElementType element);

}  // namespace lockstep::arch
