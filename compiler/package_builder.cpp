#include "compiler/package_builder.hpp"

#include <algorithm>
#include <string>

#include "compiler/patch_lists.hpp"
#include "compiler/payload_proof.hpp"
#include "compiler/proof_plan.hpp"
#include "compiler/shared_rows.hpp"
#include "compiler/table_layout.hpp"
#include "io/errors.hpp"
#include "io/parallel.hpp"

namespace lockstep::compiler {
namespace {

uint32_t align8(uint32_t value) { return (value + 7u) & ~7u; }

std::vector<uint8_t> little_endian(uint64_t value, int bytes) {
  std::vector<uint8_t> out(bytes);
  for (int k = 0; k < bytes; ++k) out[k] = static_cast<uint8_t>(value >> (8 * k));
  return out;
}

// One digest slot array: one 8-byte digest per iteration of the tile's destination ranges
// in a phase. One range is hashed straight into the slot; several are hashed into a scratch
// array first, which is then hashed into the slot, so only destination bytes are read.
struct Checksum {
  std::vector<Span> ranges;
  uint32_t slot_address = 0;
  std::optional<uint32_t> pointer_address;  // iterated: the pointer advancing through the slots
};

struct TileState {
  uint32_t tile = 0;
  std::vector<const TileRow*> rows;  // per phase position
  TileTable table;
  ElementUse data;
  std::vector<Span> sources;
  std::vector<std::vector<Span>> destinations;   // per phase position, merged
  std::vector<std::vector<Checksum>> checksums;  // per phase position
  uint32_t pointer_count = 0;
  uint32_t scratch_count = 0;  // 8-byte digests of the longest multi-range checksum
  uint32_t slot_count = 0;
  AreaLayout area;  // where its rows and its tail (pointers, scratch, slots) went
  std::vector<arch::Step> steps;
  explicit TileState(const arch::MachineDescription& machine) : data(machine) {}
};

void check_rows(const PackagingPhase& phase, const arch::MachineDescription& machine) {
  const std::string where = "packaging: phase " + std::to_string(phase.capture->id);
  if (phase.scheduled->phase != phase.capture->id) {
    throw CompilerError(where + ": schedule is for phase " + std::to_string(phase.scheduled->phase));
  }
  uint32_t previous = 0;
  for (size_t i = 0; i < phase.scheduled->rows.size(); ++i) {
    const TileRow& row = phase.scheduled->rows[i];
    const std::string tile = where + ": tile " + std::to_string(row.tile);
    if (row.tile >= machine.tiles) throw CompilerError(tile + ": not a tile of machine " + machine.name);
    if (i > 0 && row.tile <= previous) throw CompilerError(tile + ": rows not sorted by tile");
    if (row.words.empty()) throw CompilerError(tile + ": empty row");
    for (const AddressField& field : row.address_fields) {
      if (field.word_index >= row.words.size()) {
        throw CompilerError(tile + ": address field at word " + std::to_string(field.word_index) + " past the row");
      }
    }
    previous = row.tile;
  }
}

// Tiles that take part in any phase: they run every phase's barrier.
// Marked in a flag per tile id (a set costs a tree insert per destination).
std::vector<uint32_t> participating_tiles(const std::vector<PackagingPhase>& phases,
                                          const arch::MachineDescription& machine) {
  std::vector<char> taking_part(machine.tiles, 0);
  auto mark = [&](uint32_t tile) {
    if (tile >= taking_part.size()) taking_part.resize(size_t{tile} + 1, 0);
    taking_part[tile] = 1;
  };
  for (const PackagingPhase& phase : phases) {
    for (const TileRow& row : phase.scheduled->rows) mark(row.tile);
    for (const arch::Transfer& transfer : phase.capture->transfers) {
      mark(transfer.source_tile);
      for (const arch::Destination& d : transfer.destinations) mark(d.tile);
    }
  }
  std::vector<uint32_t> tiles;
  for (uint32_t tile = 0; tile < taking_part.size(); ++tile) {
    if (taking_part[tile]) tiles.push_back(tile);
  }
  if (!tiles.empty() && tiles.back() >= machine.tiles) {
    throw CompilerError("packaging: tile " + std::to_string(tiles.back()) + " is not a tile of machine " +
                        machine.name);
  }
  return tiles;
}

// One state per taking-part tile, in tile order, holding its rows and transfer data per phase.
std::vector<TileState> gather_tile_states(const std::vector<PackagingPhase>& phases, const std::vector<uint32_t>& tiles,
                                          const arch::MachineDescription& machine) {
  const size_t phase_count = phases.size();
  std::vector<size_t> position_of(machine.tiles, 0);
  for (size_t i = 0; i < tiles.size(); ++i) position_of[tiles[i]] = i;
  std::vector<TileState> states;
  states.reserve(tiles.size());
  for (uint32_t tile : tiles) {
    states.emplace_back(machine);
    states.back().tile = tile;
    states.back().rows.assign(phase_count, nullptr);
    states.back().destinations.resize(phase_count);
    states.back().checksums.resize(phase_count);
  }

  // Rows and transfer data per tile.
  for (size_t p = 0; p < phase_count; ++p) {
    for (const TileRow& row : phases[p].scheduled->rows) states[position_of[row.tile]].rows[p] = &row;
    const arch::CapturePhase& capture = *phases[p].capture;
    for (const arch::Transfer& transfer : capture.transfers) {
      const uint32_t bytes = transfer.words * 4;
      TileState& source = states[position_of[transfer.source_tile]];
      for (uint32_t address : transfer.source_addresses) {
        source.data.add_range(address, bytes);
        source.sources.push_back(Span{address, bytes});
      }
      for (const arch::Destination& d : transfer.destinations) {
        TileState& destination = states[position_of[d.tile]];
        destination.data.add_range(d.address, bytes);
        destination.destinations[p].push_back(Span{d.address, bytes});
      }
    }
  }
  return states;
}

struct TableFigures {
  uint32_t unshared = 0;
  uint32_t shared = 0;
  uint32_t sharing_patch_calls = 0;
  uint32_t sharing_patch_words = 0;
};

// Tables: the one laid out, and the figures with and without sharing (added to the report).
void lay_out_tables(std::vector<TileState>& states, const std::vector<PackagingPhase>& phases,
                    const CompileOptions& options, CompileReport& report) {
  const size_t phase_count = phases.size();
  std::vector<TableFigures> table_figures(states.size());
  arch::parallel_for_each(size_t{0}, states.size(), [&](size_t t) {
    TileState& state = states[t];
    TableFigures& figures = table_figures[t];
    state.table = build_tile_table(state.tile, state.rows, options.share_rows);
    const TileTable shared = options.share_rows ? state.table : build_tile_table(state.tile, state.rows, true);
    figures.unshared = state.table.unshared_bytes;
    figures.shared = shared.bytes;
    for (size_t p = 0; p < phase_count; ++p) {
      const int32_t index = shared.row_of_phase[p];
      if (index < 0) continue;
      const StoredRow& stored = shared.rows[index];
      const UsePatches patches =
          patches_for_use(*state.rows[p], stored, 0, phases[p].capture->iterations, phases[p].capture->id);
      if (!patches.setup.empty()) {
        figures.sharing_patch_calls += 1;
        figures.sharing_patch_words += static_cast<uint32_t>(patches.setup.size());
      }
    }
  });
  for (size_t t = 0; t < states.size(); ++t) {
    report.table_bytes_unshared = std::max(report.table_bytes_unshared, table_figures[t].unshared);
    report.table_bytes_shared = std::max(report.table_bytes_shared, table_figures[t].shared);
    report.sharing_patch_calls += table_figures[t].sharing_patch_calls;
    report.sharing_patch_words += table_figures[t].sharing_patch_words;
  }
}

// Proof plan: which destination spans are checksummed, and how many slots that takes.
// Merges each tile's destinations in place; returns what each tile's area holds.
std::vector<AreaRequest> plan_checksums(std::vector<TileState>& states, const std::vector<PackagingPhase>& phases,
                                        const std::vector<const arch::CapturePhase*>& capture_phases,
                                        const CompileOptions& options, const arch::MachineDescription& machine) {
  const size_t phase_count = phases.size();
  arch::parallel_for_each(size_t{0}, states.size(), [&](size_t t) {
    for (auto& ranges : states[t].destinations) ranges = merge_spans(std::move(ranges));
  });
  std::vector<std::vector<std::vector<Span>>> destinations(phase_count, std::vector<std::vector<Span>>(states.size()));
  for (size_t t = 0; t < states.size(); ++t) {
    for (size_t p = 0; p < phase_count; ++p) destinations[p][t] = states[t].destinations[p];
  }
  const auto needed = options.with_proof
                          ? checksum_needed(capture_phases, destinations)
                          : std::vector<std::vector<bool>>(phase_count, std::vector<bool>(states.size()));
  std::vector<AreaRequest> requests(states.size());
  for (size_t t = 0; t < states.size(); ++t) {
    TileState& state = states[t];
    for (size_t p = 0; p < phase_count; ++p) {
      if (!needed[p][t]) continue;
      const uint32_t iterations = std::max<uint32_t>(phases[p].capture->iterations, 1);
      Checksum checksum;
      checksum.ranges = state.destinations[p];
      checksum.slot_address = state.slot_count;  // slot index for now, an address below
      if (iterations > 1) checksum.pointer_address = state.pointer_count++;
      state.slot_count += iterations;
      if (checksum.ranges.size() > 1) {
        state.scratch_count = std::max(state.scratch_count, static_cast<uint32_t>(checksum.ranges.size()));
      }
      state.checksums[p].push_back(checksum);
    }
    const uint32_t proof_bytes = align8(state.pointer_count * 4) + (state.scratch_count + state.slot_count) * 8;
    for (const StoredRow& row : state.table.rows) requests[t].row_bytes.push_back(row_bytes_aligned(row.words.size()));
    requests[t].tail_bytes = std::max(machine.fetch_lookahead_bytes, proof_bytes);
  }
  return requests;
}

// Places every tile's reserved area, then turns slot and pointer indices into addresses.
void place_areas(std::vector<TileState>& states, const std::vector<uint32_t>& tiles,
                 const std::vector<AreaRequest>& requests, const arch::MachineDescription& machine) {
  std::vector<ElementUse> data;
  for (const TileState& state : states) data.push_back(state.data);
  std::vector<AreaLayout> areas = place_reserved_areas(tiles, data, requests, machine);

  // Slots sit right after the table: pointers first, then the 8-byte digest slots.
  for (size_t t = 0; t < states.size(); ++t) {
    TileState& state = states[t];
    state.area = std::move(areas[t]);
    const uint32_t pointers = state.area.tail_address;
    const uint32_t slots = pointers + align8(state.pointer_count * 4) + state.scratch_count * 8;
    for (auto& list : state.checksums) {
      for (Checksum& checksum : list) {
        checksum.slot_address = slots + 8 * checksum.slot_address;
        if (checksum.pointer_address) checksum.pointer_address = pointers + 4 * *checksum.pointer_address;
      }
    }
  }
}

// The per-phase report figures that come straight from the capture and the schedule.
void report_phases(const std::vector<PackagingPhase>& phases, const CompileOptions& options, CompileReport& report) {
  const size_t phase_count = phases.size();
  report.phases.resize(phase_count);
  for (size_t p = 0; p < phase_count; ++p) {
    const arch::CapturePhase& capture = *phases[p].capture;
    const ScheduledPhase& scheduled = *phases[p].scheduled;
    PhaseReport& phase_report = report.phases[p];
    phase_report.phase = capture.id;
    phase_report.label = capture.label;
    phase_report.execution_count = capture.execution_count;
    phase_report.config = options.config_for(capture.id).name;
    phase_report.width = scheduled.width;
    phase_report.horizon = scheduled.horizon;
    phase_report.lower_bound = scheduled.lower_bound;
    report.orders_considered += scheduled.orders_considered;
    report.orders_deduplicated += scheduled.orders_deduplicated;
    for (const TileRow& row : scheduled.rows) {
      const uint32_t bytes = static_cast<uint32_t>(row.words.size() * 4);
      phase_report.max_row_bytes = std::max(phase_report.max_row_bytes, bytes);
      phase_report.total_row_bytes += bytes;
    }
  }
}

struct PatchFigures {
  uint32_t calls = 0;
  uint32_t words = 0;
};

// Destinations zeroed before every iteration's exchange: when the iterations read the
// same source addresses (the same tokens), a word an iteration fails to deliver then
// shows as zero instead of passing on what the previous iteration left.
void append_fill_steps(const std::vector<Span>& destinations, std::vector<arch::Step>& body) {
  for (const Span& span : destinations) {
    arch::KernelStep fill;
    fill.name = "fill";
    fill.operands = {arch::Operand{span.address, false}};
    fill.scalars = {span.bytes, 0};
    body.push_back(arch::Step{fill});
  }
}

// Hashes one checksum's ranges into its slot, or through its iterated pointer when it has one
// (checksum_xxh3: XXH3 runs near memory speed on the host, FNV-1a's `checksum` does not).
void append_checksum_steps(const Checksum& checksum, uint32_t scratch, std::vector<arch::Step>& body,
                           std::vector<arch::IteratedPointer>& pointers) {
  Span hashed = checksum.ranges.front();
  if (checksum.ranges.size() > 1) {
    for (size_t r = 0; r < checksum.ranges.size(); ++r) {
      arch::KernelStep kernel;
      kernel.name = "checksum_xxh3";
      kernel.operands = {arch::Operand{checksum.ranges[r].address, false},
                         arch::Operand{scratch + 8 * static_cast<uint32_t>(r), false}};
      kernel.scalars = {checksum.ranges[r].bytes};
      body.push_back(arch::Step{kernel});
    }
    hashed = Span{scratch, 8 * static_cast<uint32_t>(checksum.ranges.size())};
  }
  arch::KernelStep kernel;
  kernel.name = "checksum_xxh3";
  kernel.operands.push_back(arch::Operand{hashed.address, false});
  if (checksum.pointer_address) {
    kernel.operands.push_back(arch::Operand{*checksum.pointer_address, true});
    pointers.push_back(arch::IteratedPointer{*checksum.pointer_address, 8});
  } else {
    kernel.operands.push_back(arch::Operand{checksum.slot_address, false});
  }
  kernel.scalars.push_back(hashed.bytes);
  body.push_back(arch::Step{kernel});
}

// One tile's steps for phase p: patches, the exchange and its checksums, repeated per iteration.
// The Repeat patch figures go to `figures`.
void append_phase_steps(TileState& state, size_t p, const arch::CapturePhase& capture,
                        const arch::MachineDescription& machine, const CompileOptions& options, PatchFigures& figures) {
  const uint32_t iterations = std::max<uint32_t>(capture.iterations, 1);
  arch::ExchangeStep exchange;
  exchange.phase = capture.id;
  UsePatches patches;
  if (const TileRow* row = state.rows[p]) {
    const int32_t index = state.table.row_of_phase[p];
    const StoredRow& stored = state.table.rows[index];
    const uint32_t row_address = state.area.row_addresses[index];
    exchange.row_address = row_address;
    exchange.incoming_base = row->incoming_base;
    patches = patches_for_use(*row, stored, row_address, iterations, capture.id);
  }
  if (!patches.setup.empty()) {
    state.steps.push_back(arch::Step{arch::PatchStep{arch::PatchMethod::Setup, patches.setup}});
  }
  std::vector<arch::Step> body;
  if (!patches.repeat.empty()) {
    const arch::PatchMethod method = repeat_patch_method(patches.repeat.size(), machine);
    const auto words = static_cast<uint32_t>(patches.repeat.size());
    figures.calls = repeat_patch_calls(method, words);
    figures.words = words;
    body.push_back(arch::Step{arch::PatchStep{method, patches.repeat}});
  }
  if (options.with_proof && iterations > 1) append_fill_steps(state.destinations[p], body);
  body.push_back(arch::Step{exchange});
  std::vector<arch::IteratedPointer> pointers;
  const uint32_t scratch = state.area.tail_address + align8(state.pointer_count * 4);
  for (const Checksum& checksum : state.checksums[p]) append_checksum_steps(checksum, scratch, body, pointers);
  if (iterations > 1) {
    state.steps.push_back(arch::Step{arch::RepeatStep{iterations, std::move(body), std::move(pointers)}});
  } else {
    for (arch::Step& step : body) state.steps.push_back(std::move(step));
  }
}

// Steps: every tile runs every phase's barrier, in phase order.
// Each tile's steps in parallel, its Repeat patch figures kept per tile and summed in order.
void build_steps(std::vector<TileState>& states, const std::vector<PackagingPhase>& phases,
                 const arch::MachineDescription& machine, const CompileOptions& options, CompileReport& report) {
  const size_t phase_count = phases.size();
  std::vector<std::vector<PatchFigures>> patch_figures(states.size(), std::vector<PatchFigures>(phase_count));
  arch::parallel_for_each(size_t{0}, states.size(), [&](size_t t) {
    for (size_t p = 0; p < phase_count; ++p) {
      append_phase_steps(states[t], p, *phases[p].capture, machine, options, patch_figures[t][p]);
    }
  });
  for (size_t t = 0; t < states.size(); ++t) {
    for (size_t p = 0; p < phase_count; ++p) {
      PhaseReport& phase_report = report.phases[p];
      const PatchFigures& figures = patch_figures[t][p];
      phase_report.patch_calls += figures.calls;
      phase_report.patch_words += figures.words;
      phase_report.max_patch_words_per_tile = std::max(phase_report.max_patch_words_per_tile, figures.words);
    }
  }
}

// The proof: follow the data through every phase and iteration.
std::vector<arch::Expectation> prove(const std::vector<TileState>& states,
                                     const std::vector<const arch::CapturePhase*>& capture_phases,
                                     const CompileOptions& options) {
  const size_t phase_count = capture_phases.size();
  std::vector<ProofTile> proof_tiles(states.size());
  for (size_t t = 0; t < states.size(); ++t) {
    const TileState& state = states[t];
    ProofTile& tile = proof_tiles[t];
    tile.tile = state.tile;
    tile.sources = merge_spans(state.sources);
    tile.destinations = state.destinations;
    tile.checksums.resize(phase_count);
    for (size_t p = 0; p < phase_count; ++p) {
      for (const Checksum& checksum : state.checksums[p]) {
        tile.checksums[p].push_back(ProofChecksum{checksum.ranges, checksum.slot_address});
      }
    }
  }
  return prove_payload(capture_phases, proof_tiles, options.token_seed, [&](uint64_t done, uint64_t total) {
    if (options.on_progress) options.on_progress("proving", done, total);
  });
}

// The table's bytes: every stored row's words, little-endian, at the row's address; one
// segment per run of adjacent rows (the runtime's SRAM splits a table).
std::vector<arch::Segment> table_segments(const TileState& state) {
  std::vector<size_t> by_address(state.table.rows.size());
  for (size_t r = 0; r < by_address.size(); ++r) by_address[r] = r;
  std::sort(by_address.begin(), by_address.end(),
            [&](size_t a, size_t b) { return state.area.row_addresses[a] < state.area.row_addresses[b]; });
  std::vector<arch::Segment> segments;
  for (const size_t r : by_address) {
    const StoredRow& row = state.table.rows[r];
    const uint32_t address = state.area.row_addresses[r];
    if (segments.empty() || segments.back().address + segments.back().size != address) {
      segments.push_back(arch::Segment{address, 0, arch::FillKind::Bytes, {}, 0});
    }
    arch::Segment& segment = segments.back();
    const size_t at = segment.bytes.size();
    segment.bytes.resize(at + row_bytes_aligned(row.words.size()), 0);
    segment.size = static_cast<uint32_t>(segment.bytes.size());
    for (size_t w = 0; w < row.words.size(); ++w) {
      for (int k = 0; k < 4; ++k) segment.bytes[at + 4 * w + k] = static_cast<uint8_t>(row.words[w] >> (8 * k));
    }
  }
  return segments;
}

// The iterated pointers' start values: each points at its checksum's first slot.
arch::Segment pointer_segment(const TileState& state, uint32_t pointers) {
  arch::Segment segment{pointers, state.pointer_count * 4, arch::FillKind::Bytes, {}, 0};
  for (const auto& list : state.checksums) {
    for (const Checksum& checksum : list) {
      if (!checksum.pointer_address) continue;
      const std::vector<uint8_t> value = little_endian(checksum.slot_address, 4);
      const uint32_t at = *checksum.pointer_address - pointers;
      if (segment.bytes.size() < at + 4) segment.bytes.resize(at + 4, 0);
      std::copy(value.begin(), value.end(), &segment.bytes[at]);
    }
  }
  return segment;
}

// One tile's program: its area's segments and its source tokens, by address, then its steps.
void fill_tile_program(TileState& state, const CompileOptions& options, arch::TileProgram& program) {
  program.tile = state.tile;
  program.table = arch::TableRegion{state.area.start, state.area.tail_address - state.area.start};
  for (arch::Segment& segment : table_segments(state)) program.segments.push_back(std::move(segment));
  const uint32_t pointers = state.area.tail_address;
  const uint32_t scratch = pointers + align8(state.pointer_count * 4);
  const uint32_t slots = scratch + state.scratch_count * 8;
  if (state.scratch_count > 0) {
    program.segments.push_back(arch::Segment{scratch, state.scratch_count * 8, arch::FillKind::Zero, {}, 0});
  }
  if (state.pointer_count > 0) program.segments.push_back(pointer_segment(state, pointers));
  if (state.slot_count > 0) {
    program.segments.push_back(arch::Segment{slots, state.slot_count * 8, arch::FillKind::Zero, {}, 0});
  }
  for (const Span& span : merge_spans(state.sources)) {
    program.segments.push_back(arch::Segment{span.address, span.bytes, arch::FillKind::Tokens, {}, options.token_seed});
  }
  std::sort(program.segments.begin(), program.segments.end(),
            [](const arch::Segment& a, const arch::Segment& b) { return a.address < b.address; });
  program.steps = std::move(state.steps);
}

// The package itself: the machine, the phases, and one program per tile.
// Destination spans, every tile's merged over the phases and cut into pieces of at most
// kSampledPieceBytes, in (tile, address) order; a piece is taken whenever the running share
// of `words` it is owed reaches its size, so the pieces spread over tiles and addresses.
constexpr uint32_t kSampledPieceBytes = 256;

arch::Binding sampled_proof(const std::vector<TileState>& states, uint64_t words) {
  std::vector<std::pair<uint32_t, Span>> pieces;
  uint64_t total = 0;
  for (const TileState& state : states) {
    std::vector<Span> all;
    for (const auto& phase : state.destinations) all.insert(all.end(), phase.begin(), phase.end());
    for (const Span& span : merge_spans(std::move(all))) {
      for (uint32_t done = 0; done < span.bytes; done += kSampledPieceBytes) {
        pieces.emplace_back(state.tile, Span{span.address + done, std::min(kSampledPieceBytes, span.bytes - done)});
        total += pieces.back().second.bytes;
      }
    }
  }
  arch::Binding binding;
  binding.name = "proof.sampled";
  binding.kind = arch::BindingKind::Output;
  const uint64_t budget = 4 * words;
  uint64_t owed = 0;
  for (const auto& [tile, span] : pieces) {
    owed += total <= budget ? span.bytes : span.bytes * budget / total;
    if (owed < span.bytes) continue;
    owed -= span.bytes;
    binding.slices.push_back({tile, span.address, span.bytes});
  }
  return binding;
}

void assemble_package(arch::Package& package, std::vector<TileState>& states, const std::vector<PackagingPhase>& phases,
                      const arch::MachineDescription& machine, const CompileOptions& options) {
  package.machine_name = machine.name;
  package.machine_digest = machine.digest;
  for (const PackagingPhase& phase : phases) {
    package.phases.push_back(
        arch::Phase{phase.capture->id, phase.capture->label, phase.capture->execution_count, phase.capture->operation});
  }
  package.tiles.resize(states.size());
  arch::parallel_for_each(size_t{0}, states.size(),
                          [&](size_t t) { fill_tile_program(states[t], options, package.tiles[t]); });
}

}  // namespace

CompileResult build_package(const std::vector<PackagingPhase>& phases, const arch::MachineDescription& machine,
                            const CompileOptions& options) {
  if (options.on_progress) options.on_progress("packaging", 0, 0);
  for (const PackagingPhase& phase : phases) check_rows(phase, machine);

  const std::vector<uint32_t> tiles = participating_tiles(phases, machine);
  std::vector<TileState> states = gather_tile_states(phases, tiles, machine);

  CompileResult result;
  CompileReport& report = result.report;
  lay_out_tables(states, phases, options, report);

  std::vector<const arch::CapturePhase*> capture_phases;
  for (const PackagingPhase& phase : phases) capture_phases.push_back(phase.capture);
  const std::vector<AreaRequest> requests = plan_checksums(states, phases, capture_phases, options, machine);
  place_areas(states, tiles, requests, machine);

  report_phases(phases, options, report);
  build_steps(states, phases, machine, options, report);
  if (options.with_proof) result.package.expectations = prove(states, capture_phases, options);
  assemble_package(result.package, states, phases, machine, options);
  if (!options.with_proof && options.sampled_proof_words > 0) {
    result.package.bindings.push_back(sampled_proof(states, options.sampled_proof_words));
  }
  return result;
}

}  // namespace lockstep::compiler
