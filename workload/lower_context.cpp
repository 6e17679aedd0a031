#include "workload/lower_context.hpp"

#include <algorithm>

namespace lockstep::workload {
namespace {

// Above the exchange-table range, the program keeps this much free of data for its
// supervisor code area [decision]: the tables with the runtime's SRAM beside them
// (arch/runtime_sram.hpp) can fill the range, and the code must not go where exchanges
// land, which its placement cannot see (docs/supervisor-code.md). The whole model's largest
// area is under 3 KiB (docs/lowering.md).
constexpr uint32_t kCodeAreaBytes = 0x800;

// SRAM the lowering may use: above the exchange-table range and the code area, below the
// loader limit (every weight segment must be loadable).
uint32_t data_begin(const arch::MachineDescription& m) {
  return std::max(m.sram_base, arch::kTableReservedEnd + kCodeAreaBytes);
}
uint32_t data_end(const arch::MachineDescription& m) { return std::min(m.sram_end, m.loader_limit) & ~7u; }

}  // namespace

LowerContext::LowerContext(const Workload& w, const arch::MachineDescription& m)
    : workload(w),
      machine(m),
      tiles(m.tiles),
      memory(m.tiles, data_begin(m), data_end(m), w.file, &m),
      top_(m.tiles),
      body_(m.tiles),
      pointers_(m.tiles),
      segments_(m.tiles) {
  capture.machine_name = m.name;
  owners = std::min(tiles, w.rows());
  // Scratch in interleaved memory: the GEMMs' block buffers and the attention's keys and
  // values then take the AMP's interleaved-weights cost (K 11.1).
  memory.prefer_interleaved_scratch(true);
}

uint32_t LowerContext::owner_tile(uint32_t owner) const {
  // Spread evenly so owners do not all sit on the low tiles.
  return static_cast<uint32_t>(uint64_t{owner} * tiles / owners);
}

void LowerContext::begin_layers() { in_layers_ = true; }

void LowerContext::end_layers() {
  in_layers_ = false;
  for (uint32_t t = 0; t < tiles; ++t) {
    arch::RepeatStep repeat;
    repeat.count = workload.layers;
    repeat.body = std::move(body_[t]);
    repeat.pointers = std::move(pointers_[t]);
    top_[t].push_back(arch::Step{std::move(repeat)});
    body_[t].clear();
    pointers_[t].clear();
  }
}

size_t LowerContext::phase(const std::string& label, const std::string& operation) {
  arch::CapturePhase p;
  p.id = static_cast<uint32_t>(capture.phases.size());
  p.label = label;
  p.operation = operation;
  p.execution_count = iterations();
  p.iterations = iterations();
  capture.phases.push_back(std::move(p));
  for (uint32_t t = 0; t < tiles; ++t) {
    arch::ExchangeStep step;
    step.phase = capture.phases.back().id;
    steps(t).push_back(arch::Step{step});
  }
  return capture.phases.size() - 1;
}

void LowerContext::transfer(size_t index, uint32_t source_tile, uint32_t source_address,
                            std::vector<arch::Destination> destinations, uint32_t words) {
  arch::Transfer t;
  t.source_tile = source_tile;
  // Activations stay where they are from layer to layer, so the 27 addresses of a
  // transfer inside the Repeat are equal; only kernel weight pointers advance.
  t.source_addresses.assign(capture.phases[index].iterations, source_address);
  t.destinations = std::move(destinations);
  t.words = words;
  t.allow_paired = true;
  capture.phases[index].transfers.push_back(std::move(t));
}

void LowerContext::transfer(size_t index, uint32_t source_tile, const LayerTensor& source,
                            std::vector<arch::Destination> destinations, uint32_t words) {
  transfer(index, source_tile, source.base, std::move(destinations), words);
  std::vector<uint32_t>& addresses = capture.phases[index].transfers.back().source_addresses;
  for (size_t l = 0; l < addresses.size(); ++l) addresses[l] = source.base + static_cast<uint32_t>(l) * source.stride;
}

void LowerContext::kernel(uint32_t tile, std::string name, std::vector<arch::Operand> operands,
                          std::vector<int64_t> scalars) {
  arch::KernelStep k;
  k.name = std::move(name);
  k.operands = std::move(operands);
  k.scalars = std::move(scalars);
  steps(tile).push_back(arch::Step{std::move(k)});
}

LayerTensor LowerContext::place_weights(uint32_t tile, const std::string& name, Span rows, Span columns,
                                        WeightFormat format, bool per_layer, bool exchanged) {
  const WeightBlock block{name, tile, 0, 0, 1, rows, columns, format};
  const uint32_t bytes = block.bytes();
  LayerTensor tensor;
  const uint32_t stride = (bytes + 7) & ~7u;
  const uint32_t copies = per_layer ? workload.layers : 1;
  tensor.base = memory.place(tile, name, uint64_t{stride} * copies, exchanged);
  tensor.stride = per_layer ? stride : 0;
  arch::Segment weights;
  weights.address = tensor.base;
  weights.size = stride * copies;
  weights.fill = arch::FillKind::Tokens;
  weights.token_seed = arch::fnv1a64(reinterpret_cast<const uint8_t*>(name.data()), name.size());
  segments_[tile].push_back(weights);
  WeightBlock placed = block;
  placed.base = tensor.base;
  placed.stride = tensor.stride;
  placed.copies = copies;
  this->weights.push_back(placed);
  if (per_layer && workload.layers > 1) {
    tensor.slot = memory.place(tile, name + ".pointer", 4);
    arch::Segment slot;
    slot.address = tensor.slot;
    slot.size = 4;
    slot.fill = arch::FillKind::Bytes;
    for (int i = 0; i < 4; ++i) slot.bytes.push_back(static_cast<uint8_t>(tensor.base >> (8 * i)));
    segments_[tile].push_back(slot);
    pointers_[tile].push_back(arch::IteratedPointer{tensor.slot, static_cast<int32_t>(stride)});
  }
  return tensor;
}

arch::Package LowerContext::finish(std::vector<arch::Binding> bindings) {
  arch::Package package;
  package.machine_name = machine.name;
  package.machine_digest = machine.digest;
  for (const auto& p : capture.phases) {
    package.phases.push_back(arch::Phase{p.id, p.label, p.execution_count, p.operation});
  }
  for (uint32_t t = 0; t < tiles; ++t) {
    arch::TileProgram program;
    program.tile = t;
    program.segments = std::move(segments_[t]);
    std::sort(program.segments.begin(), program.segments.end(),
              [](const arch::Segment& a, const arch::Segment& b) { return a.address < b.address; });
    // Rows go below kTableReservedEnd (transfers keep out of it); the code takes the rest.
    program.table = arch::TableRegion{arch::kTableReservedBegin,
                                      arch::kTableReservedEnd + kCodeAreaBytes - arch::kTableReservedBegin};
    program.steps = std::move(top_[t]);
    package.tiles.push_back(std::move(program));
  }
  package.bindings = std::move(bindings);
  return package;
}

Activation place_activation(LowerContext& context, const std::string& name, uint32_t columns,
                            uint32_t bytes_per_value) {
  Activation a;
  a.name = name;
  a.columns = columns;
  for (uint32_t o = 0; o < context.owners; ++o) {
    a.address.push_back(context.memory.place(context.owner_tile(o), name,
                                             uint64_t{context.owner_rows(o).size()} * columns * bytes_per_value,
                                             /*exchanged=*/true));
  }
  return a;
}

}  // namespace lockstep::workload
