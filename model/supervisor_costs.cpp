#include "model/supervisor_costs.hpp"

#include <algorithm>
#include <cstdlib>

namespace lockstep::model {

uint64_t exchange_setup_instructions(const arch::ExchangeStep& step) {
  uint64_t n = 2;                             // setzi $m8, base; put INCOMING_BASE
  if (step.incoming_mux) n += 2;              // setzi; put INCOMING_MUX
  if (step.incoming_format != 0) n += 2;      // setzi; put INCOMING_FORMAT
  if (step.incoming_muxpair) n += 2;          // setzi; put INCOMING_MUXPAIR
  n += 1;                                     // put OUTGOING_BASE, $m15
  if (step.row_address) {
    n += 2;                                   // call the worker barrier; its return
    n += 2;                                   // setzi $m8, 1; put INCOMING_DCOUNT
    n += 1;                                   // sync 3
  } else {
    n += 2;                                   // sans 0; sync 1
  }
  n += 1;                                     // call $m10, row
  return n;
}

uint64_t sync_instructions() { return 1; }

uint64_t kernel_launch_instructions() { return 3; }  // setzi vertex; run; sync workers

uint64_t repeat_entry_instructions() { return 2; }   // setzi count; st32 frame slot 0

uint64_t repeat_iteration_instructions(const arch::RepeatStep& step, bool last) {
  uint64_t n = 0;
  for (const auto& p : step.pointers) {
    const uint64_t magnitude = static_cast<uint64_t>(std::llabs(static_cast<long long>(p.stride)));
    const uint64_t adds = std::max<uint64_t>(1, (magnitude + 32766) / 32767);
    n += 2 + adds;  // ld32; add (one per 32767 bytes); st32
  }
  n += 4;           // ld32; add -1; st32; brz
  if (!last) n += 2;  // setzi; br back
  return n;
}

uint64_t patch_instructions(const arch::PatchStep& step) {
  const uint64_t words = step.entries.size();
  switch (step.method) {
    case arch::PatchMethod::Helper: return 11 * words;
    case arch::PatchMethod::Setup: return 7 + 8 * words;
    case arch::PatchMethod::Bulk: return kernel_launch_instructions();
  }
  return 0;
}

uint64_t patch_cycles(const arch::PatchStep& step, const arch::MachineDescription& machine) {
  const uint64_t cpi = machine.supervisor_cycles_per_instruction;
  uint64_t cycles = patch_instructions(step) * cpi;
  if (step.method == arch::PatchMethod::Bulk) {
    // Six workers split the list; each word costs ld offset, ld value, st, loop (4), each
    // worker a 3-instruction prologue. Workers issue every cpi cycles.
    const uint64_t workers = std::max<uint32_t>(1, machine.workers);
    const uint64_t per = (step.entries.size() + workers - 1) / workers;
    cycles += cpi * (3 + 4 * per);
  }
  return cycles;
}

}  // namespace lockstep::model
