// Package -> device image (docs/IPU21-DEVICE.md section 12.4, docs/device.md "Export").
#include "sim/device/application_export.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "arch/host_packets.hpp"
#include "arch/instruction.hpp"
#include "arch/topology.hpp"
#include "formats/token.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "sim/device/elf_object.hpp"
#include "sim/device/export_host_plan.hpp"
#include "sim/device/object_link.hpp"
#include "supervisor/supervisor_code.hpp"

namespace lockstep::arch {
namespace {

std::vector<uint8_t> word_bytes(const std::vector<uint32_t>& words, size_t first, size_t count) {
  std::vector<uint8_t> out(4 * count);
  for (size_t i = 0; i < count; ++i) {
    const uint32_t w = words[first + i];
    for (int b = 0; b < 4; ++b) out[4 * i + b] = static_cast<uint8_t>(w >> (8 * b));
  }
  return out;
}

// `setzi $m0, start; br $m0`: the two words the loader enters at (section 1).
AppSegment entry_stub(uint32_t start) {
  Instruction setzi;
  setzi.op = Opcode::SetZi;
  setzi.reg = 0;
  setzi.immediate = static_cast<int32_t>(start);
  Instruction br;
  br.op = Opcode::Br;
  br.reg = 0;
  std::vector<uint32_t> words = encode(setzi);
  encode_into(br, words);
  return {kImageEntryPoint, 8, word_bytes(words, 0, 2), kSegmentRead | kSegmentExecute};
}

// A package segment's bytes as the loader writes them: Zero stays a bare memorySize.
AppSegment data_segment(const Segment& seg, uint32_t logical, const TableRegion& table) {
  AppSegment out{seg.address, seg.size, {}, kSegmentRead | kSegmentWrite};
  // Rows are executed: a segment over the row table is code, as the stack marks rows R|X.
  const bool rows =
      table.size > 0 && seg.address < table.address + table.size && table.address < seg.address + seg.size;
  if (rows) out.flags = kSegmentRead | kSegmentExecute;
  if (seg.fill == FillKind::Bytes) out.data = seg.bytes.vector();
  if (seg.fill == FillKind::Tokens) {
    std::vector<uint32_t> words(seg.size / 4);
    for (uint32_t i = 0; i < words.size(); ++i) words[i] = payload_token(seg.token_seed, logical, seg.address + 4 * i);
    out.data = word_bytes(words, 0, words.size());
  }
  return out;
}

// Every call in the code area whose target is an intrinsic symbol's slot.
std::vector<std::string> called_intrinsics(const TileCode& code) {
  std::map<uint32_t, std::string> intrinsic;
  for (const CodeSymbol& s : code.symbols) {
    if (s.intrinsic) intrinsic[s.address] = s.name;
  }
  std::vector<std::string> out;
  if (intrinsic.empty()) return out;
  const size_t code_words = code.code_bytes / 4;
  for (size_t i = 0; i < code_words && i < code.words.size(); ++i) {
    const uint32_t w = code.words[i];
    if ((w & 0xff000000u) != 0x18000000u) continue;  // call $r, target (section 5.1)
    const auto it = intrinsic.find((w & 0x7ffffu) << 2);
    if (it != intrinsic.end() && std::find(out.begin(), out.end(), it->second) == out.end()) out.push_back(it->second);
  }
  return out;
}

// "0-733,736-1471"; past four ranges the rest is counted ("0,2,4,6,... (736 tiles)"), so
// the error stays one readable line on a whole chip.
std::string tile_ranges(const std::vector<uint32_t>& tiles) {
  constexpr int kRangesShown = 4;
  std::string out;
  int shown = 0;
  for (size_t i = 0; i < tiles.size();) {
    size_t j = i;
    while (j + 1 < tiles.size() && tiles[j + 1] == tiles[j] + 1) ++j;
    if (!out.empty()) out += ",";
    if (++shown > kRangesShown) return out + "... (" + std::to_string(tiles.size()) + " tiles)";
    out += std::to_string(tiles[i]) + (j > i ? "-" + std::to_string(tiles[j]) : "");
    i = j + 1;
  }
  return out;
}

// Kernels and the bulk patcher are worker code only a vendor compiler makes: refuse unless
// an object provides them (its symbols checked here, linked per tile by link_tile_object).
std::optional<ElfObject> require_intrinsics(const std::map<std::string, std::vector<uint32_t>>& needed,
                                            const ExportOptions& options) {
  if (needed.empty() && options.object_path.empty()) return std::nullopt;
  std::string list;
  for (const auto& [name, tiles] : needed) {
    list += (list.empty() ? "" : ", ") + name + " (tiles " + tile_ranges(tiles) + ")";
  }
  if (options.object_path.empty()) {
    throw InputError("export: kernels need vendor-compiled worker code: " + list +
                     "; give --object FILE providing them");
  }
  ElfObject object = read_elf_object(options.object_path);
  std::set<std::string> defined;
  for (const ElfSymbol& s : object.symbols) {
    if (s.section != 0 && !s.name.empty()) defined.insert(s.name);
  }
  std::string missing;
  for (const auto& [name, tiles] : needed) {
    if (!defined.count(name)) missing += (missing.empty() ? "" : ", ") + name;
  }
  if (!missing.empty()) throw InputError("export: " + options.object_path + ": does not define " + missing);
  return object;
}

struct Lowered {
  uint32_t logical = 0;
  uint32_t physical = 0;
  TileCode code;
  std::optional<LinkedObject> object;  // with --object: linked beside the code area
  bool barrier_only = false;           // no program in the package: barrier_skeleton's code
};

// Links the object into the tile's free SRAM and points each intrinsic's slot at its code:
// the slot's `trap 1` becomes `bri symbol` (the call's $m10 still returns to the caller).
void link_tile_object(Lowered& t, const TileProgram& program, const MachineDescription& machine,
                      const ElfObject& object, const std::string& file) {
  std::map<std::string, uint32_t> runtime;
  for (const CodeSymbol& s : t.code.symbols) {
    if (!s.intrinsic) runtime[s.name] = s.address;
  }
  const uint32_t base = place_in_free_sram(program, machine, linked_size(object), {{t.code.base, t.code.end()}});
  t.object = link_object(object, base, runtime, file);
  for (const CodeSymbol& s : t.code.symbols) {
    const auto linked = t.object->symbols.find(s.name);
    if (s.intrinsic && linked != t.object->symbols.end()) {
      t.code.words[(s.address - t.code.base) / 4] = bri_word(linked->second);
    }
  }
}

TileImage tile_image(const Lowered& t, const TileProgram& program) {
  TileImage image{t.physical, kImageEntryPoint, {}, 0, kImageDiagnosticAddress};
  const CodeSymbol* start = find_symbol(t.code, "lockstep_start");
  if (!start) throw std::logic_error("lowered code has no lockstep_start symbol");
  image.segments.push_back(entry_stub(start->address));
  const size_t code_words = t.code.code_bytes / 4;
  image.segments.push_back(
      {t.code.base, t.code.code_bytes, word_bytes(t.code.words, 0, code_words), kSegmentRead | kSegmentExecute});
  if (t.code.words.size() > code_words) {
    const uint32_t rest = static_cast<uint32_t>(4 * (t.code.words.size() - code_words));
    image.segments.push_back({t.code.base + t.code.code_bytes, rest,
                              word_bytes(t.code.words, code_words, t.code.words.size() - code_words),
                              kSegmentRead | kSegmentWrite});
  }
  if (t.object) {
    image.segments.push_back({t.object->base, static_cast<uint32_t>(t.object->bytes.size()), t.object->bytes,
                              kSegmentRead | kSegmentExecute});
  }
  for (const Segment& seg : program.segments) image.segments.push_back(data_segment(seg, t.logical, program.table));
  std::sort(image.segments.begin(), image.segments.end(),
            [](const AppSegment& a, const AppSegment& b) { return a.address < b.address; });
  for (const AppSegment& seg : image.segments) {
    if (seg.address < kImageFirstFree && seg.address != kImageEntryPoint) {
      throw InputError("export: tile " + std::to_string(t.logical) + " (physical " + std::to_string(t.physical) +
                       "): data at " + hex(seg.address) + " lies below " + hex(kImageFirstFree) +
                       ", where the loader's launch slot and the entry stub are (IPU21-DEVICE.md section 13)");
    }
  }
  return image;
}

// A program's barriers and nothing else: its syncs, each exchange as a tile without a row
// (`sans 0; sync 1`), the Repeats around them. Validation holds every tile of a package to
// the same sequence of barriers, so any tile's program gives the chip's.
std::vector<Step> barrier_skeleton(const std::vector<Step>& steps) {
  std::vector<Step> out;
  for (const Step& step : steps) {
    if (const auto* e = std::get_if<ExchangeStep>(&step.kind)) {
      ExchangeStep inactive;
      inactive.phase = e->phase;
      out.push_back(Step{inactive});
    } else if (std::holds_alternative<SyncStep>(step.kind)) {
      out.push_back(step);
    } else if (std::holds_alternative<HostStep>(step.kind)) {
      std::get<HostStep>(out.emplace_back(step).kind).transfers.clear();  // takes part only
    } else if (const auto* r = std::get_if<RepeatStep>(&step.kind)) {
      std::vector<Step> body = barrier_skeleton(r->body);
      if (!body.empty()) out.push_back(Step{RepeatStep{r->count, std::move(body), {}}});
    }
  }
  return out;
}

void add_bindings(const Package& package, const Topology& topology, Application& app) {
  for (const Binding& b : package.bindings) {
    // The runtime's cycle words are u32 (section 17.3); a package only knows their bytes.
    const bool cycle_words =
        (b.name.rfind("profile.", 0) == 0 || is_completion_binding(b)) && b.element == ElementType::Bytes;
    AppBinding out{b.name, cycle_words ? "u32" : dtype_name(b.element), b.shape, {}};
    uint64_t offset = 0;
    for (const Slice& s : b.slices) {
      out.slices.push_back({topology.physical(s.tile), s.address, offset, s.bytes});
      offset += s.bytes;
    }
    if (out.shape.empty()) out.shape = {static_cast<uint32_t>(cycle_words ? offset / 4 : offset)};
    auto& list = b.kind == BindingKind::Input ? app.inputs : b.kind == BindingKind::Output ? app.outputs : app.weights;
    list.push_back(std::move(out));
  }
}

void add_debug(const std::vector<Lowered>& tiles, const Package& package, Application& app) {
  std::map<std::pair<std::string, uint32_t>, bool> seen;
  for (const Lowered& t : tiles) {
    for (const CodeSymbol& s : t.code.symbols) {
      if (seen.emplace(std::make_pair(s.name, s.address), true).second)
        app.debug_symbols.push_back({s.name, s.address});
    }
    app.debug_regions.push_back({t.physical, t.code.base, t.code.code_bytes, kCodeRegionName});
    if (t.barrier_only)
      app.debug_regions.push_back({t.physical, t.code.base, t.code.code_bytes, kBarrierOnlyRegionName});
    // Symbols per tile too: the code area's place (so every address) differs between tiles,
    // and debugSymbols has no tile field. Each runs to the next, the last to the program.
    for (size_t i = 0; i < t.code.symbols.size(); ++i) {
      const uint32_t address = t.code.symbols[i].address;
      const uint32_t end = i + 1 < t.code.symbols.size() ? t.code.symbols[i + 1].address : t.code.program;
      app.debug_regions.push_back({t.physical, address, std::max<uint32_t>(end - address, 4), t.code.symbols[i].name});
    }
    if (t.object) {
      app.debug_regions.push_back(
          {t.physical, t.object->base, static_cast<uint32_t>(t.object->bytes.size()), kLinkedObjectRegionName});
    }
    const uint32_t rest = t.code.end() - t.code.base - t.code.code_bytes;
    if (rest > 0) app.debug_regions.push_back({t.physical, t.code.base + t.code.code_bytes, rest, kCodeDataRegionName});
    for (const TileProgram& p : package.tiles) {
      if (p.tile == t.logical && p.table.size > 0) {
        app.debug_regions.push_back({t.physical, p.table.address, p.table.size, kRowTableRegionName});
      }
    }
  }
}

void plan_exchanges(const std::vector<Step>& steps, const Package& package, std::vector<PlanStep>& out) {
  for (const Step& step : steps) {
    if (const auto* r = std::get_if<RepeatStep>(&step.kind)) plan_exchanges(r->body, package, out);
    const auto* e = std::get_if<ExchangeStep>(&step.kind);
    if (!e) continue;
    PlanStep plan;
    plan.step.local_index = static_cast<uint32_t>(out.size());
    plan.step.phase = kExchangePhaseBit | e->phase;
    plan.step.kind = ProfileStepKind::Exchange;
    plan.step.kernel = "exchange";
    for (const Phase& phase : package.phases) {
      if (phase.id != e->phase) continue;
      plan.step.operation = phase.operation;
      plan.step.phase_label = phase.label;
      plan.step.metadata.push_back({"execution_count", std::to_string(phase.execution_count)});
    }
    out.push_back(std::move(plan));
  }
}

// The stack's profile plans describe each tile's steps (section 15.4); here they carry each
// exchange step's phase (id, label, operation), which the code itself does not hold, so
// that `device import` gives the steps their phases back.
void add_plans(const std::vector<Lowered>& tiles, const Package& package, Application& app) {
  for (const Lowered& t : tiles) {
    for (const TileProgram& p : package.tiles) {
      if (p.tile != t.logical) continue;
      TileProfilePlan plan{t.physical, profiled_plan(p, package)};
      if (plan.steps.empty()) plan_exchanges(p.steps, package, plan.steps);
      if (!plan.steps.empty()) app.profile_tiles.push_back(std::move(plan));
    }
  }
}

// The package's host session as pages (section 12.1). The stack's layout where it fits: a
// 4 KiB command page 0 and the rest as page 1, attached in that order, when the command word
// and every slice lie inside one of the two; else one page. Import puts the pages back to
// back in attach order, so either gives the same addresses back.
HostExchange host_exchange(const HostSession& session, uint32_t tiles) {
  HostExchange out;
  if (session.calls.empty()) return out;
  const auto inside_one = [&](uint64_t address, uint64_t bytes) {
    return address + bytes <= kHostPageBytes || address >= kHostPageBytes;
  };
  bool split = session.arena_bytes > kHostPageBytes && inside_one(session.command_address, 4);
  for (const HostCallSpec& c : session.calls) {
    for (const auto* list : {&c.inputs, &c.outputs}) {
      for (const HostFileSlice& s : *list) split = split && inside_one(s.host_address, s.bytes);
    }
  }
  const auto place = [&](uint32_t address) -> std::pair<uint32_t, uint64_t> {
    if (split && address >= kHostPageBytes) return {1, address - kHostPageBytes};
    return {0, address};
  };
  if (split) {
    out.pages = {{0, kHostPageBytes}, {1, session.arena_bytes - kHostPageBytes}};
    out.attach_order = {0, 1};
  } else {
    out.pages = {{0, session.arena_bytes}};
    out.attach_order = {0};
  }
  out.startup_mark = tiles / 64;  // the loader's batches (section 13)
  std::tie(out.command_page, out.command_offset) = place(session.command_address);
  for (const HostCallSpec& c : session.calls) {
    HostCall call{c.name, c.command, c.phases, {}, {}, 1, c.input_batch_ends, c.output_batch_ends};
    for (const HostFileSlice& s : c.inputs) {
      const auto [page, offset] = place(s.host_address);
      call.inputs.push_back({page, offset, s.file_offset, s.bytes});
    }
    for (const HostFileSlice& s : c.outputs) {
      const auto [page, offset] = place(s.host_address);
      call.outputs.push_back({page, offset, s.file_offset, s.bytes});
    }
    out.calls.push_back(std::move(call));
  }
  return out;
}

// Lockstep's `gelu` is the stack's `ipu_stack_gelu_tanh_approx_f16` exactly (the same registers,
// out, in, count; the same nine FP16 steps from one table; the same 10e + 11 cycles), which
// takes even counts only (docs/kernels-stack.md).
constexpr const char* kStackGelu = "ipu_stack_gelu_tanh_approx_f16";

// What a device cannot run as the package says, and is rewritten: a bulk patch (the six-worker
// patcher needs worker code; lockstep_patch_word makes the same stores from verified
// encodings) and a kernel the stack does exactly (called by the stack's symbol).
bool bulk_patch(const Step& step) {
  const auto* p = std::get_if<PatchStep>(&step.kind);
  return p && p->method == PatchMethod::Bulk;
}
bool stack_does_it(const Step& step) {
  const auto* k = std::get_if<KernelStep>(&step.kind);
  return k && k->name == "gelu" && k->operands.size() == 2 && k->scalars.size() == 1 && k->scalars[0] % 2 == 0;
}

// Calls `f` on every step, a Repeat's body after the Repeat.
template <class Steps, class F>
void each_step(Steps& steps, const F& f) {
  for (auto& step : steps) {
    f(step);
    if (auto* r = std::get_if<RepeatStep>(&step.kind)) each_step(r->body, f);
  }
}

bool needs_rewriting(const std::vector<TileProgram>& tiles) {
  bool needed = false;
  for (const TileProgram& t : tiles)
    each_step(t.steps, [&](const Step& s) { needed = needed || bulk_patch(s) || stack_does_it(s); });
  return needed;
}

void rewrite_for_device(std::vector<Step>& steps) {
  each_step(steps, [](Step& s) {
    if (bulk_patch(s)) std::get<PatchStep>(s.kind).method = PatchMethod::Helper;
    if (stack_does_it(s)) std::get<KernelStep>(s.kind).name = kStackGelu;
  });
}

// Lowers every tile and assembles the image of a package ready for the device.
Application assemble(const Package& package, const MachineDescription& machine, const ExportOptions& options) {
  const Topology topology(machine);
  std::map<uint32_t, const TileProgram*> programs;
  for (const TileProgram& p : package.tiles) programs[p.tile] = &p;
  const LoweringOptions lowering = package_lowering(package, machine, options.invocations);
  std::vector<Lowered> tiles;
  // Tiles the package leaves out, and those outside its machine, run its barriers only.
  std::vector<TileProgram> idle;
  idle.reserve(topology.physical_tiles());
  const std::vector<Step> skeleton =
      package.tiles.empty() ? std::vector<Step>{} : barrier_skeleton(package.tiles.front().steps);
  std::map<std::string, std::vector<uint32_t>> intrinsics;
  for (uint32_t l = 0; l < topology.physical_tiles(); ++l) {
    const auto it = programs.find(l);
    if (it == programs.end()) {
      idle.emplace_back();
      idle.back().tile = l;
      idle.back().steps = skeleton;
    }
    const TileProgram& program = it == programs.end() ? idle.back() : *it->second;
    tiles.push_back(
        {l, topology.physical(l), lower_tile_code(program, machine, lowering), std::nullopt, it == programs.end()});
    for (const std::string& name : called_intrinsics(tiles.back().code)) intrinsics[name].push_back(l);
  }
  if (const auto object = require_intrinsics(intrinsics, options)) {
    for (Lowered& t : tiles) {
      const auto it = programs.find(t.logical);
      if (it != programs.end()) link_tile_object(t, *it->second, machine, *object, options.object_path);
    }
  }
  std::sort(tiles.begin(), tiles.end(), [](const Lowered& a, const Lowered& b) { return a.physical < b.physical; });
  Application app;
  app.compiler_version = options.compiler_version;
  for (const Lowered& t : tiles) {
    const auto it = programs.find(t.logical);
    TileProgram empty;
    empty.tile = t.logical;
    app.tiles.push_back(tile_image(t, it == programs.end() ? empty : *it->second));
  }
  add_bindings(package, topology, app);
  const bool has_completion = std::any_of(package.bindings.begin(), package.bindings.end(), is_completion_binding);
  if (lowering.completion_word && !has_completion) {
    // Listed last and moved by no call: the stack appends it after planning its host
    // protocol (IPU21-DEVICE.md 12.4, 17.3); "tile 0" read as logical tile 0 [inferred].
    app.outputs.push_back({"completion", "u32", {1}, {{topology.physical(0), kCompletionWord, 0, 4}}});
  }
  app.host_exchange = host_exchange(package.host, static_cast<uint32_t>(app.tiles.size()));
  app.entry_points.push_back({"run", 0, 0});
  add_plans(tiles, package, app);
  add_debug(tiles, package, app);
  validate_application(app, "export");
  return app;
}

}  // namespace

const char* dtype_name(ElementType element) {
  switch (element) {
    case ElementType::Float16:
      return "f16";
    case ElementType::Float32:
      return "f32";
    case ElementType::Bytes:
      break;
  }
  return "u8";
}

Application export_application(const Package& package, const MachineDescription& machine,
                               const ExportOptions& options) {
  const bool plan_host_calls = options.host_calls && package.host.calls.empty();
  if (options.invocations > 1 && plan_host_calls) {
    throw InputError("export: --invocations " + std::to_string(options.invocations) +
                     ": a host call runs the program's host phases once; --host-io none loops in code without them");
  }
  if (options.invocations > 1 && !package.host.calls.empty()) {
    throw InputError("export: --invocations " + std::to_string(options.invocations) +
                     ": the package has host phases, and a host call runs its program's phases once");
  }
  if (options.profiling == ProfilingMode::None && !plan_host_calls && !needs_rewriting(package.tiles)) {
    return assemble(package, machine, options);
  }
  // What a device needs added, on one copy: the cycle samples (they fall inside the host
  // phases planned after them), the rewrites above, and the stack's host calls.
  Package device = package;
  add_profiling(device, machine, options.profiling);
  for (TileProgram& t : device.tiles) rewrite_for_device(t.steps);
  if (plan_host_calls) add_stack_host_calls(device, machine);
  validate_package(device, machine, "export (as prepared for the device)");
  return assemble(device, machine, options);
}

}  // namespace lockstep::arch
