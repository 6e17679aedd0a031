// Device image -> package (docs/device.md "Import"). Each tile: find its code area from the
// debug regions export writes, read the steps back (supervisor/code_reader.hpp), keep the other
// segments as data, lower the steps again and require the image's words.
#include "sim/device/application_import.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "arch/topology.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "io/printable.hpp"
#include "sim/device/application_export.hpp"
#include "sim/device/application_import_parts.hpp"
#include "sim/device/export_profiling.hpp"
#include "sim/device/tile_image_memory.hpp"
#include "supervisor/code_reader.hpp"
#include "supervisor/supervisor_code.hpp"

namespace lockstep::arch {
namespace {

std::string word_hex(uint32_t word) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", word);
  return buf;
}

struct TileContext {
  std::string where;  // "FILE: tile 3 (physical 77)"
  uint32_t logical = 0;
  const TileImage* image = nullptr;
  const DebugRegion* code = nullptr;  // kCodeRegionName
  uint32_t area_end = 0;              // code, data tables and stack
  std::map<uint32_t, std::string> symbols;
  std::optional<TableRegion> table;
  std::optional<DebugRegion> object;  // an object `export --object` linked in
};

[[noreturn]] void not_code(const TileContext& t, uint32_t address, uint32_t word, const std::string& what) {
  throw InputError(t.where + ": address " + hex(address) + ": word " + word_hex(word) +
                   ": not code Lockstep can execute (" + what + ")");
}

// The stack's runtime start-up (section 9.1) marks its images; Lockstep's own may call the
// runtime's helpers (the cycle sample) but start with lockstep_start.
bool built_by_stack(const Application& app) {
  bool stack = false, lockstep = false;
  for (const DebugSymbol& s : app.debug_symbols) {
    stack = stack || s.name.rfind("ipu_stack_static_", 0) == 0;
    lockstep = lockstep || s.name == "lockstep_start";
  }
  return stack && !lockstep;
}

TileContext tile_context(const Application& app, const TileImage& image, const Topology& topology,
                         const std::string& file) {
  TileContext t;
  t.image = &image;
  t.where = file + ": tile ? (physical " + std::to_string(image.physical_tile) + ")";
  if (image.physical_tile >= topology.physical_tiles() || topology.logical(image.physical_tile) >= topology.tiles() ||
      topology.physical(topology.logical(image.physical_tile)) != image.physical_tile) {
    throw InputError(file + ": tiles: physical tile " + std::to_string(image.physical_tile) +
                     " is not a tile of the machine (give --machine)");
  }
  t.logical = topology.logical(image.physical_tile);
  t.where = file + ": tile " + std::to_string(t.logical) + " (physical " + std::to_string(image.physical_tile) + ")";
  for (const DebugRegion& r : app.debug_regions) {
    if (r.physical_tile != image.physical_tile) continue;
    check_region_in_memory(r, t.where);  // each names code, data or a symbol the import reads
    if (r.name == kCodeRegionName) {
      t.code = &r;
    } else if (r.name == kRowTableRegionName) {
      t.table = TableRegion{r.address, r.size};
    } else if (r.name == kLinkedObjectRegionName) {
      t.object = r;
    } else if (r.name != kCodeDataRegionName) {
      t.symbols[r.address] = r.name;
    }
  }
  if (!t.code) {
    throw InputError(t.where + ": no \"" + std::string(kCodeRegionName) +
                     "\" debug region: not an image `lockstep device export` wrote");
  }
  t.area_end = t.code->address + t.code->size;
  for (const DebugRegion& r : app.debug_regions) {
    if (r.physical_tile == image.physical_tile && r.name == kCodeDataRegionName) t.area_end = r.address + r.size;
  }
  return t;
}

// The segments that are neither the entry stub nor the code area, as package segments.
std::vector<Segment> data_segments(const TileContext& t) {
  std::vector<Segment> out;
  for (const AppSegment& s : t.image->segments) {
    if (s.address == kImageEntryPoint) continue;
    if (s.address >= t.code->address && s.address < t.area_end) continue;
    if (t.object && s.address >= t.object->address && s.address < t.object->address + t.object->size) continue;
    Segment seg;
    seg.address = s.address;
    seg.size = s.memory_size;
    if (s.data.empty()) {
      seg.fill = FillKind::Zero;
    } else {
      seg.fill = FillKind::Bytes;
      seg.bytes = s.data;
      seg.bytes.resize(s.memory_size, 0);
    }
    out.push_back(std::move(seg));
  }
  return out;
}

std::vector<uint32_t> area_words(const TileImageMemory& memory, uint32_t base, uint32_t end) {
  std::vector<uint32_t> words;
  for (uint32_t a = base; a < end; a += 4) words.push_back(memory.word(a));
  return words;
}

TileProgram read_tile(const TileContext& t, std::map<uint32_t, Phase>& phases, const std::vector<PlanStep>* plan,
                      bool& completion) {
  const TileImageMemory memory(*t.image);
  const uint32_t base = t.code->address;
  TileProgram program;
  program.tile = t.logical;
  program.segments = data_segments(t);
  if (t.table) program.table = *t.table;
  uint32_t start = 0;
  for (const auto& [address, name] : t.symbols) {
    if (name == "lockstep_start") start = address;
  }
  // lockstep_start ends with `setzi $m0, program; br $m0`.
  uint32_t program_address = 0;
  for (uint32_t a = start; a + 4 < base + t.code->size; a += 4) {
    if (memory.word(a + 4) == 0x43000000u && (memory.word(a) & 0xfff00000u) == 0x19000000u) {
      program_address = memory.word(a) & 0xfffffu;
      break;
    }
  }
  CodeReader reader(area_words(memory, base, base + t.code->size), base, t.symbols,
                    [&](uint32_t a) { return memory.word(a); });
  try {
    program.steps = reader.read_program(program_address);
    completion = completion || reader.completion();
  } catch (const CodeReadError& e) {
    not_code(t, e.address, e.word, e.what);
  }
  uint32_t next = 0;
  // The plan's exchanges in pre-order (a full-profiling plan lists a Repeat's in its metadata).
  const std::vector<PlanStep> exchanges = plan ? plan_exchanges_in_order(*plan) : std::vector<PlanStep>{};
  assign_phases(program.steps, plan ? &exchanges : nullptr, next, phases);
  return program;
}

// What the simulator will execute must be exactly what the image holds.
void verify_tile(const TileContext& t, const TileProgram& program, const MachineDescription& machine,
                 const LoweringOptions& lowering) {
  const TileImageMemory memory(*t.image);
  const uint32_t base = t.code->address;
  const TileCode code = lower_tile_code(program, machine, lowering);
  const std::vector<uint32_t> image = area_words(memory, base, t.area_end);
  if (code.base != base) {
    not_code(t, base, memory.word(base), "the steps read back lower to an area at " + hex(code.base));
  }
  for (size_t i = 0; i < std::max(image.size(), code.words.size()); ++i) {
    const uint32_t want = i < code.words.size() ? code.words[i] : 0;
    const uint32_t have = i < image.size() ? image[i] : memory.word(base + 4 * static_cast<uint32_t>(i));
    // An intrinsic's slot branches into the linked object when the image has one.
    const bool linked_slot = t.object && want == 0x41801001u && (have & 0xfff80000u) == 0x40800000u &&
                             ((have & 0x7ffffu) << 2) - t.object->address < t.object->size;
    if (want != have && !linked_slot) {
      not_code(t, base + 4 * static_cast<uint32_t>(i), have,
               "the steps read back lower to " + word_hex(want) + " here");
    }
  }
  const CodeSymbol* entry = find_symbol(code, "lockstep_start");
  if (memory.word(kImageEntryPoint) != (0x19000000u | entry->address) ||
      memory.word(kImageEntryPoint + 4) != 0x43000000u) {
    not_code(t, kImageEntryPoint, memory.word(kImageEntryPoint), "the entry stub does not jump to lockstep_start");
  }
}

}  // namespace

// The phases of a tile's exchange steps, in pre-order, from its profile plan when export
// wrote one (else numbered in order).
void assign_phases(std::vector<Step>& steps, const std::vector<PlanStep>* plan, uint32_t& next,
                   std::map<uint32_t, Phase>& phases) {
  for (Step& step : steps) {
    if (auto* r = std::get_if<RepeatStep>(&step.kind)) assign_phases(r->body, plan, next, phases);
    auto* e = std::get_if<ExchangeStep>(&step.kind);
    if (!e) continue;
    const uint32_t index = next++;
    Phase phase{index, "phase " + std::to_string(index), 1, ""};
    if (plan && index < plan->size()) {
      const ProfileStep& p = (*plan)[index].step;
      phase.id = p.phase & ~kExchangePhaseBit;
      if (!p.phase_label.empty()) phase.label = p.phase_label;  // the stack's plans have none
      phase.operation = p.operation;
      for (const auto& m : p.metadata) {
        uint32_t count = 0;
        const auto [end, error] = std::from_chars(m.value.data(), m.value.data() + m.value.size(), count);
        if (m.name == "execution_count" && error == std::errc() && end == m.value.data() + m.value.size() &&
            count > 0) {
          phase.execution_count = count;
        }
      }
    }
    e->phase = phase.id;
    phases.emplace(phase.id, phase);
  }
}

void check_region_in_memory(const DebugRegion& region, const std::string& where) {
  const uint64_t end = uint64_t{region.address} + region.size;
  if (region.address < kApplicationMemoryBase || end > uint64_t{kApplicationMemoryBase} + kApplicationMemorySize) {
    throw InputError(where + ": debug region \"" + printable(region.name) + "\" at " + hex(region.address) + "+" +
                     std::to_string(region.size) + " lies outside tile memory [" + hex(kApplicationMemoryBase) + ", " +
                     hex(uint64_t{kApplicationMemoryBase} + kApplicationMemorySize) + ")");
  }
}

void refuse_unmodelled(const Application& app, const std::string& file_name) {
  const size_t writes = app.device_config_writes.size();
  if (writes > 0) {
    throw InputError(file_name + ": deviceConfigWrites: " + std::to_string(writes) +
                     (writes == 1 ? " write" : " writes") + ": the model has no device configuration registers");
  }
}

Package import_application(const Application& app, const MachineDescription& machine, const std::string& file_name) {
  const Topology topology(machine);
  refuse_unmodelled(app, file_name);
  if (built_by_stack(app)) return import_stack_application(app, machine, file_name);
  std::vector<TileProgram> tiles;
  std::map<uint32_t, Phase> phases;
  std::map<uint32_t, const std::vector<PlanStep>*> plans;
  for (const TileProfilePlan& p : app.profile_tiles) plans[p.physical_tile] = &p.steps;
  // Tiles export gave no program of the package's (they run its barriers only, possibly
  // outside the machine) are left out, as the package left them.
  std::set<uint32_t> barrier_only;
  for (const DebugRegion& r : app.debug_regions) {
    if (r.name == kBarrierOnlyRegionName) barrier_only.insert(r.physical_tile);
  }
  std::vector<TileContext> contexts;
  bool completion = false;  // the programs end by setting the completion word
  for (const TileImage& image : app.tiles) {
    if (barrier_only.count(image.physical_tile)) continue;
    contexts.push_back(tile_context(app, image, topology, file_name));
    const auto plan = plans.find(image.physical_tile);
    tiles.push_back(read_tile(contexts.back(), phases, plan == plans.end() ? nullptr : plan->second, completion));
  }
  // A tile's host requests depend on the other tiles' reads, so all are read before any is
  // lowered again.
  LoweringOptions lowering;
  lowering.host_readers = host_phase_readers(tiles, machine);
  lowering.completion_word = completion;
  std::vector<TileProgram> kept;
  for (size_t i = 0; i < tiles.size(); ++i) {
    verify_tile(contexts[i], tiles[i], machine, lowering);
    if (tiles[i].steps.empty() && tiles[i].segments.empty() && tiles[i].table.size == 0) continue;
    kept.push_back(std::move(tiles[i]));
  }
  tiles = std::move(kept);
  Package package = assemble_imported_package(std::move(tiles), phases, app, machine, file_name);
  // The word the programs set is the export's own binding, made again on export.
  if (completion) {
    std::erase_if(package.bindings, [](const Binding& b) { return is_completion_binding(b); });
    for (HostCallSpec& call : package.host.calls) std::erase(call.output_bindings, std::string("completion"));
  }
  return package;
}

Package assemble_imported_package(std::vector<TileProgram> tiles, const std::map<uint32_t, Phase>& phases,
                                  const Application& app, const MachineDescription& machine,
                                  const std::string& file_name) {
  Package package;
  package.machine_name = machine.name;
  package.machine_digest = machine.digest;
  package.tiles = std::move(tiles);
  std::sort(package.tiles.begin(), package.tiles.end(),
            [](const TileProgram& a, const TileProgram& b) { return a.tile < b.tile; });
  for (const auto& [id, phase] : phases) package.phases.push_back(phase);
  import_bindings(app, Topology(machine), package, file_name);
  package.host = import_host_session(app, file_name);
  validate_package(package, machine, file_name);
  return package;
}

}  // namespace lockstep::arch
