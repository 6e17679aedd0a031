#include "compiler/patch_lists.hpp"

#include <algorithm>
#include <string>

#include "io/errors.hpp"

namespace lockstep::compiler {

UsePatches patches_for_use(const TileRow& row, const StoredRow& stored, uint32_t row_address, uint32_t iterations,
                           uint32_t phase_id) {
  UsePatches patches;
  for (const AddressField& field : row.address_fields) {
    if (field.values.size() > std::max<uint32_t>(iterations, 1)) {
      throw CompilerError("packaging: phase " + std::to_string(phase_id) + ": tile " + std::to_string(row.tile) +
                          ": word " + std::to_string(field.word_index) + " has " + std::to_string(field.values.size()) +
                          " iteration values but the phase has " + std::to_string(iterations) + " iterations");
    }
    const bool patched = std::binary_search(stored.patched_words.begin(), stored.patched_words.end(), field.word_index);
    if (!patched) continue;
    const uint32_t address = row_address + 4 * field.word_index;
    if (varies_per_iteration(field)) {
      patches.repeat.push_back(arch::PatchEntry{address, field.values});
    } else {
      const uint32_t value = field.values.empty() ? row.words[field.word_index] : field.values.front();
      patches.setup.push_back(arch::PatchEntry{address, {value}});
    }
  }
  return patches;
}

arch::PatchMethod repeat_patch_method(size_t words, const arch::MachineDescription& machine) {
  return words >= machine.bulk_patch_threshold_words ? arch::PatchMethod::Bulk : arch::PatchMethod::Helper;
}

uint32_t repeat_patch_calls(arch::PatchMethod method, size_t words) {
  if (words == 0) return 0;
  return method == arch::PatchMethod::Bulk ? 1u : static_cast<uint32_t>(words);
}

}  // namespace lockstep::compiler
