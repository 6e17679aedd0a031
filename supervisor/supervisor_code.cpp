// Lowering steps to supervisor code. Sequences follow IPU21-DEVICE.md section 8; the runtime
// helpers are Lockstep's own, written with the instructions of section 5.1 only (no `sub`,
// no `runall`), and docs/supervisor-code.md lists every sequence with its count.
#include "supervisor/supervisor_code.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "arch/instruction.hpp"
#include "arch/kernel_signatures.hpp"
#include "arch/runtime_sram.hpp"
#include "arch/topology.hpp"
#include "formats/package_validate_host.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "supervisor/supervisor_emitter.hpp"

namespace lockstep::arch {

bool opens_record(SiteRole role) {
  switch (role) {
    case SiteRole::Sync:
    case SiteRole::Exchange:
    case SiteRole::Kernel:
    case SiteRole::Patch:
    case SiteRole::Host:
    case SiteRole::RepeatEntry:
    case SiteRole::RepeatIteration:
      return true;
    default:
      return false;
  }
}

const CodeSymbol* find_symbol(const TileCode& code, const std::string& name) {
  for (const CodeSymbol& s : code.symbols) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

namespace {

// Every byte range the tile's program uses outside the code area (sorted, merged later).
using Range = std::pair<uint64_t, uint64_t>;  // [first, end)

void used_by_steps(const std::vector<Step>& steps, std::vector<Range>& used) {
  for (const Step& step : steps) {
    if (const auto* k = std::get_if<KernelStep>(&step.kind)) {
      const KernelSignature* sig = find_kernel_signature(k->name);
      std::vector<uint64_t> spans;
      if (sig != nullptr && sig->check_scalars(k->scalars, ~0u).empty()) {
        spans = sig->operand_bytes(k->scalars, k->operands.size());
      }
      for (size_t i = 0; i < k->operands.size(); ++i) {
        const Operand& o = k->operands[i];
        used.emplace_back(o.address, o.address + (o.indirect || i >= spans.size() ? 4 : spans[i]));
      }
    } else if (const auto* r = std::get_if<RepeatStep>(&step.kind)) {
      for (const auto& p : r->pointers) used.emplace_back(p.address, p.address + 4);
      used_by_steps(r->body, used);
    } else if (const auto* p = std::get_if<PatchStep>(&step.kind)) {
      for (const auto& e : p->entries) used.emplace_back(e.word_address, e.word_address + 4);
    } else if (const auto* h = std::get_if<HostStep>(&step.kind)) {
      // Where the host's packets land (the staging buffer for staged transfers).
      const std::vector<uint32_t> landing = host_landing_addresses(*h);
      for (size_t i = 0; i < landing.size(); ++i)
        used.emplace_back(landing[i], uint64_t{landing[i]} + h->transfers[i].bytes);
    }
  }
}

// The highest 8-aligned start for `bytes` in [low, high) outside every merged range.
std::optional<uint32_t> highest_gap(const std::vector<Range>& merged, uint64_t low, uint64_t high, uint32_t bytes,
                                    uint64_t& largest) {
  // Gap i lies between merged[i-1] and merged[i]; walk them from the top down.
  for (size_t i = merged.size() + 1; i-- > 0;) {
    const uint64_t gap_start = (std::max(low, i == 0 ? low : merged[i - 1].second) + 7) & ~uint64_t(7);
    const uint64_t gap_end = std::min(high, i == merged.size() ? high : merged[i].first);
    if (gap_end <= gap_start) continue;
    largest = std::max(largest, gap_end - gap_start);
    if (gap_end - gap_start >= bytes) return static_cast<uint32_t>((gap_end - bytes) & ~uint64_t(7));
  }
  return std::nullopt;
}

}  // namespace

// The highest 8-aligned start for `bytes` below row_region_end that avoids every used range.
uint32_t place_in_free_sram(const TileProgram& program, const MachineDescription& machine, uint32_t bytes,
                            const std::vector<std::pair<uint64_t, uint64_t>>& also_used) {
  std::vector<Range> used = also_used;
  // The stack runtime's SRAM stays free, so the code is where an image with host calls has it.
  for (const SramRange& r : kRuntimeOwnedSram) used.emplace_back(r.begin, r.end);
  // The table region itself is not used: its rows are segments, its patched words are
  // listed below, and the rest of it is free (packages reserve more than their rows take).
  for (const Segment& s : program.segments) used.emplace_back(s.address, uint64_t(s.address) + s.size);
  used_by_steps(program.steps, used);
  std::sort(used.begin(), used.end());
  std::vector<Range> merged;
  for (const Range& r : used) {
    if (!merged.empty() && r.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  // The loader's launch slot and the entry stub (IPU21-DEVICE.md section 1) stay free.
  const uint64_t low = uint64_t(machine.sram_base) + kEntryStubEnd;
  const uint64_t high = machine.row_region_end;
  uint64_t largest = 0;
  // The table region first: transfers stay out of it by convention (formats/capture.hpp), so
  // receives cannot land on the code; then anywhere else, from the top down.
  const uint64_t table_end = uint64_t(program.table.address) + program.table.size;
  for (const auto& [lo, hi] :
       {Range{std::max(low, uint64_t(program.table.address)), std::min(high, table_end)}, Range{low, high}}) {
    if (const auto start = highest_gap(merged, lo, hi, bytes, largest)) return *start;
  }
  throw InputError("tile " + std::to_string(program.tile) + ": no room for " + std::to_string(bytes) +
                   " bytes of supervisor code below " + hex(machine.row_region_end) + " (largest free run " +
                   std::to_string(largest) + " bytes)");
}

std::string sram_user(const TileProgram& program, uint64_t first, uint64_t end) {
  for (const Segment& s : program.segments) {
    if (s.address < end && uint64_t{s.address} + s.size > first)
      return "segment at " + hex(s.address) + "+" + std::to_string(s.size);
  }
  std::vector<Range> used;
  used_by_steps(program.steps, used);
  for (const Range& r : used) {
    if (r.first < end && r.second > first) {
      return "a step's operand or pointer at " + hex(static_cast<uint32_t>(r.first)) + "+" +
             std::to_string(r.second - r.first);
    }
  }
  return "";
}

std::vector<std::vector<uint32_t>> host_phase_readers(const std::vector<TileProgram>& tiles,
                                                      const MachineDescription& machine) {
  std::vector<std::vector<uint32_t>> readers;
  const Topology topology(machine);
  for (const TileProgram& program : tiles) {
    size_t phase = 0;
    for (const Step& step : program.steps) {  // host steps are top-level only (validation)
      const auto* host = std::get_if<HostStep>(&step.kind);
      if (host == nullptr) continue;
      if (readers.size() <= phase) readers.resize(phase + 1);
      if (!host->transfers.empty() && host->transfers.front().direction == HostDirection::ToTile) {
        readers[phase].push_back(topology.physical(program.tile));
      }
      ++phase;
    }
  }
  for (auto& tiles : readers) std::sort(tiles.begin(), tiles.end());
  return readers;
}

LoweringOptions package_lowering(const Package& package, const MachineDescription& machine, uint32_t invocations) {
  LoweringOptions options;
  options.invocations = invocations;
  options.host_readers = host_phase_readers(package.tiles, machine);
  options.completion_word = !package.host.calls.empty();
  if (!options.completion_word) return options;
  // The store lands after everything else, over loaded data as the stack's runtime block does;
  // a step or another binding that uses the word would see it change.
  const auto taken = [&](uint32_t tile, const std::string& by) {
    throw InputError("tile " + std::to_string(tile) + ": the completion word " + hex(kCompletionWord) +
                     " (IPU21-DEVICE.md 9.2), which a program with host calls sets at its end, is taken by " + by);
  };
  for (const TileProgram& program : package.tiles) {
    std::vector<Range> used;
    used_by_steps(program.steps, used);
    for (const Range& r : used) {
      if (r.first < kCompletionWord + 4 && r.second > kCompletionWord) {
        taken(program.tile, "a step's operand or pointer at " + hex(static_cast<uint32_t>(r.first)) + "+" +
                                std::to_string(r.second - r.first));
      }
    }
  }
  for (const Binding& b : package.bindings) {
    if (is_completion_binding(b)) continue;
    for (const Slice& s : b.slices) {
      if (s.address < kCompletionWord + 4 && uint64_t{s.address} + s.bytes > kCompletionWord)
        taken(s.tile, "binding '" + b.name + "'");
    }
  }
  return options;
}

TileCode lower_tile_code(const TileProgram& program, const MachineDescription& machine,
                         const LoweringOptions& options) {
  // The one tile's mapping: a whole Topology per tile cost the chip's build 8 ms.
  const uint32_t physical = Topology::c600_physical(program.tile);
  std::vector<Range> keep_free;
  if (options.completion_word) keep_free.emplace_back(kCompletionWord, kCompletionWord + 4);
  // Sizes do not depend on addresses (every tile address fits one setzi), so a first pass at
  // the bottom of SRAM measures the area and a second writes it where it goes.
  SupervisorEmitter measure(program, machine, options, physical, machine.sram_base);
  TileCode sized = measure.run();
  const uint32_t base = place_in_free_sram(program, machine, static_cast<uint32_t>(sized.words.size() * 4), keep_free);
  SupervisorEmitter final_pass(program, machine, options, physical, base);
  TileCode code = final_pass.run();
  if (code.words.size() != sized.words.size()) {
    throw CompilerError("tile " + std::to_string(program.tile) + ": supervisor code size changed with its address");
  }
  return code;
}

}  // namespace lockstep::arch
