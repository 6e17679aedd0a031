#pragma once
// A tile's steps lowered to IPU21 supervisor machine code (IPU21-DEVICE.md section 8, with
// Lockstep's runtime: docs/supervisor-code.md). The steps are the authoring form; these
// words are what the model executes and what `device export` puts in a device image.
#include <cstdint>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/package.hpp"

namespace lockstep::arch {

// What starts at a code address. Step sites open a profile record that the next step site
// closes; the others are markers the model acts on.
enum class SiteRole : uint8_t {
  Sync,             // a SyncStep's sequence (step: SyncStep)
  Exchange,         // an ExchangeStep's sequence (step: ExchangeStep)
  Kernel,           // a KernelStep's argument set-up and call (step: KernelStep)
  Patch,            // a PatchStep's sequence (step: PatchStep)
  Host,             // a HostStep's wrapper around its sync with the host (step: HostStep)
  RepeatEntry,      // a Repeat's frame set-up (step: RepeatStep)
  RepeatIteration,  // a Repeat's per-iteration bookkeeping after the body (step: RepeatStep)
  RepeatBody,       // marker: the first body instruction (the loop's target)
  RepeatExit,       // marker: the instruction after the loop (frame pop)
  Barrier,          // marker: the sync that is a step's barrier; `phase` set for exchanges
                    // (a HostStep's barrier is the host phase's: `step` tells it apart)
  RowCall,          // marker: the call of the exchange row after the barrier
  InvocationEnd,    // marker: one invocation of the whole program ends (its count tested)
  Halt,             // marker: the final branch to address 0
};

bool opens_record(SiteRole role);  // Sync, Exchange, Kernel, Patch, Host, RepeatEntry, RepeatIteration

struct CodeSite {
  uint32_t address = 0;
  SiteRole role = SiteRole::Sync;
  const Step* step = nullptr;  // the authoring step (markers of a Repeat: its RepeatStep)
  bool exchange = false;       // Barrier: an exchange phase's barrier (else a plain sync)
  uint32_t phase = 0;          // Barrier with exchange: the phase id
};

// A symbol the code calls. Runtime helpers that Lockstep writes in supervisor code have
// code here; intrinsic ones (kernels, the six-worker patcher) need worker code that only a
// vendor compiler produces: the model implements them, `device export` needs an object
// providing them. An intrinsic's slot holds one word, `trap 1`.
struct CodeSymbol {
  std::string name;  // "lockstep_patch_row", "lockstep_kernel_copy_2", ...
  uint32_t address = 0;
  bool intrinsic = false;
  std::string kernel;     // intrinsic kernels: the kernel name ("copy")
  uint32_t operands = 0;  // intrinsic kernels: operand registers before the scalars
};

struct TileCode {
  uint32_t tile = 0;                // logical id
  uint32_t base = 0;                // first byte of the code area (8-aligned)
  uint32_t program = 0;             // first instruction of the program (the model starts here)
  uint32_t stack_top = 0;           // initial $m11 (Repeat and invocation frames grow down from it)
  uint32_t code_bytes = 0;          // instructions (runtime, symbol slots, program) from base
  uint32_t invocations = 1;         // LoweringOptions::invocations
  std::vector<uint32_t> words;      // the whole area from base: code, then data tables, then stack
  std::vector<CodeSite> sites;      // sorted by address; several may share one address
  std::vector<CodeSymbol> symbols;  // sorted by address
  uint32_t end() const { return base + static_cast<uint32_t>(words.size() * 4); }
};

struct LoweringOptions {
  uint32_t invocations = 1;  // >1: the program loops in code (IPU21-DEVICE.md 8.1)
  // Per host step, in program order: the physical tiles that read from the host in it. A
  // tile sends the host the request of those whose requester it is (section 14), so its
  // code depends on theirs; host_phase_readers() gives this from the package.
  std::vector<std::vector<uint32_t>> host_readers;
  // The program ends by storing 1 at kCompletionWord before its halt, as the stack runtime's
  // ipu_stack_static_complete does (IPU21-DEVICE.md 9.2): an image the host drives through
  // calls has a `completion` binding there (17.3, 17.4).
  bool completion_word = false;
};

// The runtime's completion word (IPU21-DEVICE.md section 1: "runtime writes 1 at the end").
inline constexpr uint32_t kCompletionWord = 0x58000;

// The runtime's `completion` output: one 4-byte slice at the completion word (17.3).
inline bool is_completion_binding(const Binding& b) {
  return b.name == "completion" && b.kind == BindingKind::Output && b.slices.size() == 1 &&
         b.slices.front().address == kCompletionWord && b.slices.front().bytes == 4;
}

// How a package's tiles lower: host_readers from its host steps, the completion word when
// it has host calls (the host drives it), `invocations` as given.
LoweringOptions package_lowering(const Package& package, const MachineDescription& machine, uint32_t invocations = 1);

// LoweringOptions::host_readers of a package's tiles (empty without host steps).
std::vector<std::vector<uint32_t>> host_phase_readers(const std::vector<TileProgram>& tiles,
                                                      const MachineDescription& machine);

// Lowers one tile's program. The area goes in the highest free run that no segment (rows
// included), kernel operand, pointer slot or patched word of the tile uses: inside the
// table region if it fits there (transfers stay out of it), else anywhere below
// machine.row_region_end. Throws InputError ("tile 3: ...") when there is no room or a
// value does not fit a register.
TileCode lower_tile_code(const TileProgram& program, const MachineDescription& machine,
                         const LoweringOptions& options = {});

// The placement rule above for any `bytes` (the code area, or an object linked beside it),
// with `also_used` [first, end) ranges kept free too.
uint32_t place_in_free_sram(const TileProgram& program, const MachineDescription& machine, uint32_t bytes,
                            const std::vector<std::pair<uint64_t, uint64_t>>& also_used);

// "" when no segment, kernel operand, pointer slot or patched word of the tile touches
// [first, end); else what does ("segment at 0x58000+64").
std::string sram_user(const TileProgram& program, uint64_t first, uint64_t end);
// Symbols by name (exact), nullptr when absent.
const CodeSymbol* find_symbol(const TileCode& code, const std::string& name);

}  // namespace lockstep::arch
