// The whole model as one package: the lowering's program with the compiled exchange merged
// in (see model_package.hpp).
#include "replay/model_package.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <utility>

#include "io/errors.hpp"
#include "io/hex.hpp"
#include "workload/lower.hpp"

namespace lockstep::replay {
namespace {

using arch::hex;

// One phase of the compiled package on one tile: its exchange step and the patch steps the
// compiler put before it (shared-row setup outside the phase's Repeat, then the Repeat
// patch list inside it).
struct CompiledUse {
  arch::ExchangeStep exchange;
  std::vector<arch::PatchStep> patches;
  uint32_t repeat_count = 1;  // the innermost compiled Repeat around the exchange
  bool merged = false;
};

struct CompiledTile {
  uint32_t tile = 0;
  std::map<uint32_t, CompiledUse> uses;  // by phase id
  std::vector<arch::Segment> table;      // the row segments
  bool has_rows = false;
};

std::string tile_name(uint32_t tile) { return "tile " + std::to_string(tile); }

std::string phase_name(uint32_t phase, const std::map<uint32_t, const arch::CapturePhase*>& phases) {
  const auto it = phases.find(phase);
  return "phase " + std::to_string(phase) + (it == phases.end() ? "" : " (" + it->second->label + ")");
}

const char* step_kind(const arch::Step& step) {
  static const char* const kNames[] = {"sync", "exchange", "kernel", "repeat", "patch"};
  return kNames[step.kind.index()];
}

// Walks a compiled tile's steps. Without the payload proof build_package writes, per phase:
// [setup patch] then the exchange, or [setup patch] then Repeat{[Repeat patch], exchange}.
void collect_uses(const std::vector<arch::Step>& steps, uint32_t repeat_count, std::vector<arch::PatchStep>& pending,
                  CompiledTile& out) {
  const std::string where = "merge: compiled " + tile_name(out.tile);
  for (const arch::Step& step : steps) {
    if (const auto* patch = std::get_if<arch::PatchStep>(&step.kind)) {
      for (const arch::PatchEntry& entry : patch->entries) {
        if (entry.values.size() != 1 && entry.values.size() != repeat_count) {
          throw CompilerError(where + ": patch of word " + hex(entry.word_address) + " has " +
                              std::to_string(entry.values.size()) + " values inside a Repeat of " +
                              std::to_string(repeat_count));
        }
      }
      pending.push_back(*patch);
    } else if (const auto* exchange = std::get_if<arch::ExchangeStep>(&step.kind)) {
      auto [it, inserted] = out.uses.try_emplace(exchange->phase);
      if (!inserted) {
        throw CompilerError(where + ": phase " + std::to_string(exchange->phase) + " runs twice");
      }
      CompiledUse& use = it->second;
      use.exchange = *exchange;
      use.patches = std::move(pending);
      pending.clear();
      use.repeat_count = repeat_count;
      if (exchange->row_address) {
        out.has_rows = true;
      } else if (!use.patches.empty()) {
        throw CompilerError(where + ": phase " + std::to_string(exchange->phase) +
                            ": patches before an exchange without a row");
      }
    } else if (const auto* repeat = std::get_if<arch::RepeatStep>(&step.kind)) {
      if (!repeat->pointers.empty()) {
        throw CompilerError(where +
                            ": a Repeat with iterated pointers (was the exchange compiled with the "
                            "payload proof?)");
      }
      collect_uses(repeat->body, repeat->count, pending, out);
      if (!pending.empty()) throw CompilerError(where + ": a patch at the end of a Repeat body, before no exchange");
    } else {
      throw CompilerError(where + ": unexpected " + std::string(step_kind(step)) +
                          " step (the exchange must be compiled without the payload proof)");
    }
  }
}

CompiledTile read_compiled_tile(const arch::TileProgram& tile) {
  CompiledTile out;
  out.tile = tile.tile;
  std::vector<arch::PatchStep> pending;
  collect_uses(tile.steps, 1, pending, out);
  if (!pending.empty()) throw CompilerError("merge: compiled " + tile_name(tile.tile) + ": a patch before no exchange");
  const uint64_t table_begin = tile.table.address;
  const uint64_t table_end = table_begin + tile.table.size;
  for (const arch::Segment& segment : tile.segments) {
    const bool in_table = segment.address >= table_begin && uint64_t{segment.address} + segment.size <= table_end;
    if (in_table && tile.table.size > 0 && segment.fill == arch::FillKind::Bytes) {
      out.table.push_back(segment);
    } else if (segment.fill != arch::FillKind::Tokens) {
      // Tokens fill the sources for the payload proof; the program brings its own data.
      throw CompilerError("merge: compiled " + tile_name(tile.tile) + ": unexpected segment at " +
                          hex(segment.address) + " outside the table");
    }
  }
  return out;
}

// The barrier structure of a program tile without its kernels, patches and pointers: what a
// tile the program does not list runs so that it still takes part in every barrier.
std::vector<arch::Step> skeleton(const std::vector<arch::Step>& steps) {
  std::vector<arch::Step> out;
  for (const arch::Step& step : steps) {
    if (std::holds_alternative<arch::SyncStep>(step.kind)) {
      out.push_back(step);
    } else if (std::holds_alternative<arch::HostStep>(step.kind)) {
      std::get<arch::HostStep>(out.emplace_back(step).kind).transfers.clear();  // takes part only
    } else if (const auto* exchange = std::get_if<arch::ExchangeStep>(&step.kind)) {
      arch::ExchangeStep bare;
      bare.phase = exchange->phase;
      out.push_back(arch::Step{bare});
    } else if (const auto* repeat = std::get_if<arch::RepeatStep>(&step.kind)) {
      std::vector<arch::Step> body = skeleton(repeat->body);
      if (!body.empty()) out.push_back(arch::Step{arch::RepeatStep{repeat->count, std::move(body), {}}});
    }
  }
  return out;
}

class Merger {
 public:
  Merger(const std::map<uint32_t, const arch::CapturePhase*>& phases, MergeSummary& summary)
      : phases_(phases), summary_(summary) {}

  // The program tile's steps with every exchange step completed from `compiled` (none: the
  // tile takes part in no transfer and keeps barrier-only exchange steps).
  std::vector<arch::Step> merge(const std::vector<arch::Step>& steps, uint32_t repeat_count, uint32_t tile,
                                CompiledTile* compiled) {
    std::vector<arch::Step> out;
    out.reserve(steps.size());
    for (const arch::Step& step : steps) {
      if (const auto* exchange = std::get_if<arch::ExchangeStep>(&step.kind)) {
        merge_exchange_step(*exchange, repeat_count, tile, compiled, out);
      } else if (const auto* repeat = std::get_if<arch::RepeatStep>(&step.kind)) {
        arch::RepeatStep merged;
        merged.count = repeat->count;
        merged.pointers = repeat->pointers;
        merged.body = merge(repeat->body, repeat->count, tile, compiled);
        out.push_back(arch::Step{std::move(merged)});
      } else {
        out.push_back(step);
      }
    }
    return out;
  }

 private:
  void merge_exchange_step(const arch::ExchangeStep& exchange, uint32_t repeat_count, uint32_t tile,
                           CompiledTile* compiled, std::vector<arch::Step>& out) {
    const std::string where = "merge: program " + tile_name(tile) + ": " + phase_name(exchange.phase, phases_);
    if (!phases_.count(exchange.phase)) throw InputError(where + ": not a phase of the capture");
    if (exchange.row_address) throw InputError(where + ": the program's exchange step already has a row");
    arch::ExchangeStep merged = exchange;
    if (compiled) {
      const auto it = compiled->uses.find(exchange.phase);
      if (it == compiled->uses.end()) {
        throw CompilerError(where + ": the compiled package runs no exchange of this phase on this tile");
      }
      CompiledUse& use = it->second;
      for (const arch::PatchStep& patch : use.patches) {
        const bool per_iteration = std::any_of(patch.entries.begin(), patch.entries.end(),
                                               [](const arch::PatchEntry& e) { return e.values.size() > 1; });
        if (per_iteration && use.repeat_count != repeat_count) {
          throw InputError(where + ": the compiled Repeat patch list has one value per iteration of " +
                           std::to_string(use.repeat_count) +
                           ", but the program runs this exchange inside a Repeat of " + std::to_string(repeat_count));
        }
        if (patch.method == arch::PatchMethod::Setup) {
          ++summary_.setup_patch_steps;
        } else {
          ++summary_.repeat_patch_steps;
        }
        out.push_back(arch::Step{patch});
      }
      merged.row_address = use.exchange.row_address;
      merged.incoming_base = use.exchange.incoming_base;
      merged.incoming_mux = use.exchange.incoming_mux;
      merged.incoming_format = use.exchange.incoming_format;
      merged.incoming_muxpair = use.exchange.incoming_muxpair;
      use.merged = true;
    }
    if (merged.row_address) {
      ++summary_.rows;
    } else {
      ++summary_.no_row_steps;
    }
    out.push_back(arch::Step{merged});
  }

  const std::map<uint32_t, const arch::CapturePhase*>& phases_;
  MergeSummary& summary_;
};

bool has_row(const std::vector<arch::Step>& steps) {
  for (const arch::Step& step : steps) {
    if (const auto* exchange = std::get_if<arch::ExchangeStep>(&step.kind)) {
      if (exchange->row_address) return true;
    } else if (const auto* repeat = std::get_if<arch::RepeatStep>(&step.kind)) {
      if (has_row(repeat->body)) return true;
    }
  }
  return false;
}

// Puts the compiled row segments into the program tile, inside its table region with the
// machine's fetch look-ahead, overlapping none of its own segments.
void place_table(arch::TileProgram& tile, const CompiledTile& compiled, const arch::MachineDescription& machine,
                 MergeSummary& summary) {
  const std::string where = "merge: " + tile_name(tile.tile);
  const uint64_t region_begin = tile.table.address;
  const uint64_t region_end = region_begin + tile.table.size;
  uint32_t tile_bytes = 0;  // the runtime's SRAM may split a table: its pieces add up
  for (const arch::Segment& table : compiled.table) {
    const uint64_t begin = table.address;
    const uint64_t end = begin + table.size;
    const uint64_t needed_end = end + machine.fetch_lookahead_bytes;
    if (tile.table.size == 0) {
      throw InputError(where + ": the program has no table region for the compiled exchange table of " +
                       std::to_string(table.size) + " bytes");
    }
    if (begin < region_begin || needed_end > region_end) {
      const uint64_t needed = table.size + machine.fetch_lookahead_bytes;
      const uint64_t missing = needed > tile.table.size ? needed - tile.table.size : 0;
      throw InputError(where + ": the compiled exchange table needs [" + hex(begin) + ", " + hex(needed_end) + ") (" +
                       std::to_string(table.size) + " bytes and the " + std::to_string(machine.fetch_lookahead_bytes) +
                       "-byte fetch look-ahead), outside the program's table region [" + hex(region_begin) + ", " +
                       hex(region_end) + ")" +
                       (missing ? ": " + std::to_string(missing) + " bytes missing" : std::string()));
    }
    for (const arch::Segment& segment : tile.segments) {
      if (segment.address < end && begin < uint64_t{segment.address} + segment.size) {
        throw InputError(where + ": the compiled exchange table [" + hex(begin) + ", " + hex(end) +
                         ") overlaps the program's segment at " + hex(segment.address) + " (" +
                         std::to_string(segment.size) + " bytes)");
      }
    }
    tile_bytes += table.size;
    tile.segments.push_back(table);
  }
  summary.table_bytes = std::max(summary.table_bytes, tile_bytes);
  std::sort(tile.segments.begin(), tile.segments.end(),
            [](const arch::Segment& a, const arch::Segment& b) { return a.address < b.address; });
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

arch::Package merge_exchange(arch::Package program, const arch::Capture& capture, const arch::Package& compiled,
                             const arch::MachineDescription& machine, MergeSummary* summary_out) {
  MergeSummary summary;
  for (const std::string* name :
       {&std::as_const(program.machine_name), &compiled.machine_name, &capture.machine_name}) {
    if (*name != machine.name) {
      throw InputError("merge: machine: the program, capture and compiled exchange are for '" + program.machine_name +
                       "', '" + capture.machine_name + "' and '" + compiled.machine_name + "', not all '" +
                       machine.name + "'");
    }
  }
  // The program's phases are the capture's, in the same order; the compiled package has
  // every one of them.
  std::map<uint32_t, const arch::CapturePhase*> phases;
  for (const arch::CapturePhase& phase : capture.phases) phases[phase.id] = &phase;
  if (program.phases.size() != capture.phases.size()) {
    throw InputError("merge: the program has " + std::to_string(program.phases.size()) + " phases, the capture " +
                     std::to_string(capture.phases.size()));
  }
  for (size_t i = 0; i < program.phases.size(); ++i) {
    const arch::Phase& p = program.phases[i];
    const arch::CapturePhase& c = capture.phases[i];
    if (p.id != c.id || p.label != c.label) {
      throw InputError("merge: phase " + std::to_string(i) + " of the program is " + std::to_string(p.id) + " (" +
                       p.label + "), of the capture " + std::to_string(c.id) + " (" + c.label + ")");
    }
  }
  if (compiled.phases.size() != program.phases.size()) {
    throw CompilerError("merge: the compiled package has " + std::to_string(compiled.phases.size()) +
                        " phases, the program " + std::to_string(program.phases.size()));
  }
  for (size_t i = 0; i < compiled.phases.size(); ++i) {
    if (compiled.phases[i].id != program.phases[i].id) {
      throw CompilerError("merge: compiled phase " + std::to_string(i) + " is " +
                          std::to_string(compiled.phases[i].id) + ", the program's " +
                          std::to_string(program.phases[i].id));
    }
  }

  std::map<uint32_t, CompiledTile> compiled_tiles;
  for (const arch::TileProgram& tile : compiled.tiles) compiled_tiles.emplace(tile.tile, read_compiled_tile(tile));

  // Everything but the tiles stays the program's (phases, bindings, expectations, ...).
  arch::Package merged = std::move(program);
  std::vector<arch::TileProgram> tiles = std::move(merged.tiles);
  merged.tiles.clear();
  std::set<uint32_t> program_tiles;
  for (const arch::TileProgram& tile : tiles) program_tiles.insert(tile.tile);
  const size_t program_tile_count = tiles.size();
  // A compiled tile with rows that the program does not list: it runs the program's barrier
  // structure (no kernels) with its own rows, in the program's table region.
  for (const auto& [id, compiled_tile] : compiled_tiles) {
    if (program_tiles.count(id) || !compiled_tile.has_rows) continue;
    if (program_tile_count == 0) throw InputError("merge: the program lists no tiles");
    arch::TileProgram added;
    added.tile = id;
    added.table = tiles.front().table;
    added.steps = skeleton(tiles.front().steps);
    tiles.push_back(std::move(added));
    ++summary.tiles_added;
  }
  std::sort(tiles.begin(), tiles.end(), [](const auto& a, const auto& b) { return a.tile < b.tile; });

  Merger merger(phases, summary);
  for (arch::TileProgram& tile : tiles) {
    const auto found = compiled_tiles.find(tile.tile);
    CompiledTile* compiled_tile = found == compiled_tiles.end() ? nullptr : &found->second;
    tile.steps = merger.merge(tile.steps, 1, tile.tile, compiled_tile);
    if (compiled_tile) {
      for (const auto& [phase, use] : compiled_tile->uses) {
        if (use.exchange.row_address && !use.merged) {
          throw InputError("merge: program " + tile_name(tile.tile) + " has no exchange step of " +
                           phase_name(phase, phases) + ", which the compiler gave a row");
        }
      }
      place_table(tile, *compiled_tile, machine, summary);
    }
    if (!has_row(tile.steps)) ++summary.tiles_without_rows;
    for (const arch::Segment& segment : tile.segments) summary.segment_bytes += segment.size;
  }
  merged.tiles = std::move(tiles);
  summary.phases = static_cast<uint32_t>(merged.phases.size());
  summary.tiles = static_cast<uint32_t>(merged.tiles.size());
  if (summary_out) *summary_out = summary;
  return merged;
}

namespace {
// The binding's bytes as initial segments on its slices' tiles (the default input image).
void load_input(arch::Package& program, const std::string& name, const std::vector<uint16_t>& values) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
  const uint64_t total = values.size() * sizeof(uint16_t);
  for (const arch::Binding& b : program.bindings) {
    if (b.name != name) continue;
    uint64_t at = 0;
    for (const arch::Slice& s : b.slices) {
      if (at + s.bytes > total) throw std::logic_error("input " + name + ": fewer values than its binding holds");
      arch::Segment segment{s.address, s.bytes, arch::FillKind::Bytes, {bytes + at, bytes + at + s.bytes}, 0};
      auto& segments = program.tiles.at(s.tile).segments;
      segments.insert(std::upper_bound(segments.begin(), segments.end(), segment,
                                       [](const auto& a, const auto& b) { return a.address < b.address; }),
                      segment);
      at += s.bytes;
    }
    if (at != total) throw std::logic_error("input " + name + ": more values than its binding holds");
    return;
  }
  throw std::logic_error("no input binding " + name);
}
}  // namespace

ModelPackage build_model_package(const workload::Workload& workload, const arch::MachineDescription& machine,
                                 const ModelPackageOptions& options) {
  const auto stage = [&](const std::string& text) {
    if (options.on_stage) options.on_stage(text);
  };
  ModelPackage result;
  stage("lowering " + workload.name);
  auto start = std::chrono::steady_clock::now();
  workload::Lowered lowered = workload::lower_workload(workload, machine);
  arch::validate_capture(lowered.capture, machine, workload.file);
  if (options.weights != nullptr) {
    workload::write_weight_blocks(lowered.program, lowered.weights,
                                  [&](const workload::WeightBlock& block, uint32_t layer, uint8_t* out) {
                                    workload::write_device_block(*options.weights, block, layer, out);
                                  });
  }
  if (!options.patches.empty()) load_input(lowered.program, "patches", options.patches);
  result.lower_seconds = seconds_since(start);

  const std::string compiling =
      "compiling " + std::to_string(lowered.capture.phases.size()) + " phases (" + options.config.name + ")";
  stage(compiling);
  start = std::chrono::steady_clock::now();
  compiler::CompileOptions compile;
  compile.config = options.config;
  compile.share_rows = options.share_rows;
  compile.with_proof = false;
  compile.on_progress = [&](const std::string& step, uint64_t done, uint64_t total) {
    stage(compiling + ": " + step + (total == 0 ? "" : " " + std::to_string(done) + "/" + std::to_string(total)));
  };
  compiler::CompileResult compiled = compiler::compile_capture(lowered.capture, machine, compile);
  result.compile_seconds = seconds_since(start);

  stage("merging the exchange into the program");
  start = std::chrono::steady_clock::now();
  result.package =
      merge_exchange(std::move(lowered.program), lowered.capture, compiled.package, machine, &result.summary);
  result.report = std::move(compiled.report);
  result.merge_seconds = seconds_since(start);
  return result;
}

}  // namespace lockstep::replay
