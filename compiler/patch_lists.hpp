#pragma once
// Patch lists of one row use: the shared-row setup words written once before the use, and
// the Repeat source-address words rewritten before every iteration.
#include <cstdint>
#include <vector>

#include "arch/machine.hpp"
#include "compiler/phase_schedule.hpp"
#include "compiler/shared_rows.hpp"
#include "formats/package.hpp"

namespace lockstep::compiler {

struct UsePatches {
  std::vector<arch::PatchEntry> setup;   // one value each (PatchMethod::Setup)
  std::vector<arch::PatchEntry> repeat;  // one value per iteration (Helper or Bulk)
};

// `row` is this use's row, `stored` the copy it executes at byte address `row_address`.
// Throws CompilerError when a field has more values than the phase has iterations.
UsePatches patches_for_use(const TileRow& row, const StoredRow& stored, uint32_t row_address, uint32_t iterations,
                           uint32_t phase_id);

// Long lists go to the six-worker bulk patcher, short ones to the supervisor helper.
arch::PatchMethod repeat_patch_method(size_t words, const arch::MachineDescription& machine);

// Supervisor calls a Repeat list costs per iteration: the helper is called once per word,
// the bulk patcher once per list.
uint32_t repeat_patch_calls(arch::PatchMethod method, size_t words);

// Supervisor instructions of one shared-row setup patch of n words (7 + 8n).
inline uint32_t setup_patch_instructions(size_t words) { return static_cast<uint32_t>(7 + 8 * words); }

}  // namespace lockstep::compiler
