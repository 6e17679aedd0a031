// Images the IPU21 stack built (IPU21-DEVICE.md section 12.4) back to a package: per tile,
// the generated program (the "generated tile program" debug region, entered at its start)
// read into steps, the rows' span as the table, every other
// segment but the entry stub kept as data. docs/device.md, "Import".
#include <algorithm>
#include <cstdio>
#include <optional>

#include "io/errors.hpp"
#include "io/hex.hpp"
#include "sim/device/application_export.hpp"
#include "sim/device/application_import.hpp"
#include "sim/device/application_import_parts.hpp"
#include "sim/device/stack_code_reader.hpp"
#include "sim/device/tile_image_memory.hpp"

namespace lockstep::arch {
namespace {

constexpr const char* kStackRowRegion = "exchange row";  // the stack's per-row debug region

struct StackTile {
  std::string where;  // "FILE: tile 3 (physical 77)"
  const TileImage* image = nullptr;
  uint32_t logical = 0;
  std::optional<DebugRegion> program;
  std::optional<TableRegion> rows;  // the span of the tile's row regions
};

StackTile stack_tile(const Application& app, const TileImage& image, const Topology& topology,
                     const std::string& file) {
  StackTile t;
  t.image = &image;
  if (image.physical_tile >= topology.physical_tiles() || topology.logical(image.physical_tile) >= topology.tiles()) {
    throw InputError(file + ": tiles: physical tile " + std::to_string(image.physical_tile) +
                     " is not a tile of the machine (give --machine)");
  }
  t.logical = topology.logical(image.physical_tile);
  t.where = file + ": tile " + std::to_string(t.logical) + " (physical " + std::to_string(image.physical_tile) + ")";
  for (const DebugRegion& r : app.debug_regions) {
    if (r.physical_tile != image.physical_tile) continue;
    if (r.name == kCodeRegionName || r.name == kStackRowRegion) check_region_in_memory(r, t.where);
    if (r.name == kCodeRegionName) t.program = r;
    if (r.name == kStackRowRegion) {
      const uint32_t begin = t.rows ? std::min(t.rows->address, r.address) : r.address;
      const uint32_t end = std::max(t.rows ? t.rows->address + t.rows->size : 0u, r.address + r.size);
      t.rows = TableRegion{begin, end - begin};
    }
  }
  if (!t.program) throw InputError(t.where + ": no \"" + std::string(kCodeRegionName) + "\" debug region");
  return t;
}

std::vector<Segment> stack_data_segments(const StackTile& t) {
  std::vector<Segment> out;
  for (const AppSegment& s : t.image->segments) {
    if (s.address == kImageEntryPoint) continue;
    if (s.address >= t.program->address && s.address < t.program->address + t.program->size) continue;
    Segment seg;
    seg.address = s.address;
    seg.size = (s.memory_size + 3) & ~3u;
    seg.fill = s.data.empty() ? FillKind::Zero : FillKind::Bytes;
    if (!s.data.empty()) {
      seg.bytes = s.data;
      seg.bytes.resize(seg.size, 0);
    }
    out.push_back(std::move(seg));
  }
  return out;
}

// The words the stack's Repeats store in their pointer slots before the first iteration, as
// the package's initial memory (Lockstep's Repeat entry copies them into the slots itself).
void place_initial_words(std::vector<Segment>& segments, const std::map<uint32_t, uint32_t>& words) {
  for (const auto& [slot, value] : words) {
    const uint32_t address = slot;  // clang (the fuzz build) cannot capture a structured binding
    auto it = std::find_if(segments.begin(), segments.end(),
                           [&](const Segment& s) { return address >= s.address && address - s.address < s.size; });
    if (it == segments.end()) {
      segments.push_back({address, 4, FillKind::Bytes, std::vector<uint8_t>(4, 0), 0});
      it = segments.end() - 1;
    } else if (it->fill != FillKind::Bytes) {  // the image's segments are bytes or zeros
      it->fill = FillKind::Bytes;
      it->bytes.assign(it->size, 0);
    }
    for (uint32_t b = 0; b < 4; ++b) it->bytes[address - it->address + b] = static_cast<uint8_t>(value >> (8 * b));
  }
  std::sort(segments.begin(), segments.end(), [](const Segment& a, const Segment& b) { return a.address < b.address; });
}

// The plan's exchange entries (phase bit set), in order: one per exchange step.
std::vector<PlanStep> exchange_plan(const Application& app, uint32_t physical) {
  std::vector<PlanStep> out;
  for (const TileProfilePlan& p : app.profile_tiles) {
    if (p.physical_tile != physical) continue;
    for (const PlanStep& s : p.steps) {
      if (s.step.phase & kExchangePhaseBit) out.push_back(s);
    }
  }
  return out;
}

TileProgram import_stack_tile(const Application& app, const StackTile& t, uint32_t program_address,
                              const std::map<uint32_t, std::string>& symbols, std::map<uint32_t, Phase>& phases) {
  const TileImageMemory memory(*t.image);
  TileProgram program;
  program.tile = t.logical;
  program.segments = stack_data_segments(t);
  if (t.rows) program.table = *t.rows;
  std::vector<uint32_t> words;
  for (uint32_t a = t.program->address; a < t.program->address + t.program->size; a += 4)
    words.push_back(memory.word(a));
  StackCodeReader reader(std::move(words), t.program->address, symbols, [&](uint32_t a) { return memory.word(a); });
  try {
    program.steps = reader.read_stack_program(program_address);
    place_initial_words(program.segments, reader.initial_words());
  } catch (const CodeReadError& e) {
    char word[16];
    std::snprintf(word, sizeof word, "0x%08x", e.word);
    throw InputError(t.where + ": address " + hex(e.address) + ": word " + word + ": not code Lockstep can execute (" +
                     e.what + ")");
  }
  const std::vector<PlanStep> plan = exchange_plan(app, t.image->physical_tile);
  uint32_t next = 0;
  assign_phases(program.steps, plan.empty() ? nullptr : &plan, next, phases);
  return program;
}

}  // namespace

Package import_stack_application(const Application& app, const MachineDescription& machine,
                                 const std::string& file_name) {
  std::map<uint32_t, std::string> symbols;
  for (const DebugSymbol& s : app.debug_symbols) symbols[s.address] = s.name;
  const Topology topology(machine);
  std::vector<TileProgram> tiles;
  std::map<uint32_t, Phase> phases;
  for (const TileImage& image : app.tiles) {
    const StackTile t = stack_tile(app, image, topology, file_name);
    // The stack drops its per-tile externals (ipu_stack_static_program among them) from
    // debugSymbols (IPU21-KERNELS.md 14.7); the program starts at its region.
    tiles.push_back(import_stack_tile(app, t, t.program->address, symbols, phases));
  }
  return assemble_imported_package(std::move(tiles), phases, app, machine, file_name);
}

}  // namespace lockstep::arch
