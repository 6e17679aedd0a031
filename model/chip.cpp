#include "model/chip.hpp"

#include <tbb/parallel_for.h>

#include <exception>
#include <set>
#include <string>
#include <utility>

#include "io/parallel.hpp"

namespace lockstep::model {

namespace {

// Which phases a tile's program takes part in (at any depth of Repeat).
void collect_phases(const std::vector<arch::Step>& steps, std::set<uint32_t>& phases, bool& syncs) {
  for (const auto& step : steps) {
    if (const auto* e = std::get_if<arch::ExchangeStep>(&step.kind)) phases.insert(e->phase);
    if (std::holds_alternative<arch::SyncStep>(step.kind)) syncs = true;
    if (const auto* r = std::get_if<arch::RepeatStep>(&step.kind)) collect_phases(r->body, phases, syncs);
  }
}

}  // namespace

Chip::Chip(sc_core::sc_module_name name, const arch::MachineDescription& machine, const arch::Topology& topology,
           const arch::Package& package, RunMonitor& monitor, uint32_t invocations, const MemoryLoader& load_memory)
    : sc_core::sc_module(name), sram_(machine, package.tiles.size()), monitor_(monitor) {
  sram_.lay_small_writes(monitor.lay_small_writes);
  std::map<BarrierKey, uint32_t> participants;
  for (const auto& program : package.tiles) {
    std::set<uint32_t> phases;
    bool syncs = false;
    collect_phases(program.steps, phases, syncs);
    for (uint32_t p : phases) ++participants[BarrierKey{true, p}];
  }
  // Every tile takes part in every plain sync and every host phase.
  participants[BarrierKey{false, 0}] = static_cast<uint32_t>(package.tiles.size());
  if (!package.tiles.empty()) {
    for (const auto& step : package.tiles.front().steps)
      host_phases_ += std::holds_alternative<arch::HostStep>(step.kind);
  }
  for (uint32_t k = 0; k < host_phases_; ++k) {
    participants[BarrierKey{false, k, true}] = static_cast<uint32_t>(package.tiles.size());
  }
  fabric_ = std::make_unique<ExchangeFabric>("fabric", machine, topology, monitor, sram_);
  barrier_ = std::make_unique<Barrier>("barrier", machine, std::move(participants));
  barrier_->fabric(*fabric_);
  barrier_->before_release = [this]() { run_pending_kernels(); };
  barrier_->on_wait = [this](Tile& t) {
    if (t.has_pending_kernels()) kernels_in_flight_->run([&t] { t.run_pending_kernels(); });
  };
  barrier_->host_phase = [this](uint32_t ordinal, std::span<Tile* const> tiles) {
    return host_->execute(ordinal, tiles);
  };
  // Every tile's steps lowered to the code it executes; tiles are independent.
  std::vector<arch::TileCode> code(package.tiles.size());
  const arch::LoweringOptions lowering = arch::package_lowering(package, machine, invocations);
  tbb::parallel_for(size_t{0}, package.tiles.size(),
                    [&](size_t i) { code[i] = arch::lower_tile_code(package.tiles[i], machine, lowering); });
  build_tiles(package, machine, topology, std::move(code), load_memory);
}

void Chip::build_tiles(const arch::Package& package, const arch::MachineDescription& machine,
                       const arch::Topology& topology, std::vector<arch::TileCode> code,
                       const MemoryLoader& load_memory) {
  tbb::task_group loading;
  if (load_memory) loading.run([&] { load_memory(sram_); });
  tiles_.reserve(package.tiles.size());
  std::exception_ptr building_failed, loader_failed;
  try {
    for (size_t i = 0; i < package.tiles.size(); ++i) {
      const arch::TileProgram& program = package.tiles[i];
      auto t = std::make_unique<Tile>(("tile_" + std::to_string(program.tile)).c_str(), program, std::move(code[i]),
                                      machine, topology.physical(program.tile), monitor_, Sram(machine, sram_, i));
      t->barrier(*barrier_);
      if (program.tile >= by_logical_.size()) by_logical_.resize(program.tile + 1, nullptr);
      by_logical_[program.tile] = t.get();
      tiles_.push_back(std::move(t));
    }
  } catch (...) {
    building_failed = std::current_exception();
  }
  // Whatever happened, the loader ends first: it writes the arena, which goes with this chip.
  try {
    loading.wait();
  } catch (...) {
    loader_failed = std::current_exception();
  }
  if (building_failed) std::rethrow_exception(building_failed);  // a building error reads first
  // The lowest failing tile's error, as building them one at a time met it.
  arch::parallel_for_each(size_t{0}, tiles_.size(), [&](size_t i) { tiles_[i]->decode_code(); });
  if (loader_failed) std::rethrow_exception(loader_failed);
}

void Chip::attach_host(const arch::HostSession& session, std::vector<HostCallRun> calls) {
  host_ = std::make_unique<HostLink>(session, std::move(calls), host_phases_);
  host_->watcher = monitor_.watcher;
}

Tile* Chip::tile(uint32_t logical) { return logical < by_logical_.size() ? by_logical_[logical] : nullptr; }

const Tile* Chip::tile(uint32_t logical) const { return logical < by_logical_.size() ? by_logical_[logical] : nullptr; }

Chip::~Chip() {
  try {
    kernels_in_flight_->wait();  // a run that stopped with tiles waiting: their kernels end first
  } catch (...) {                // what a kernel threw matters only to a run that goes on
  }
}

void Chip::run_pending_kernels() {
  kernels_in_flight_->wait();
  std::vector<Tile*> busy;
  for (const auto& t : tiles_)
    if (t->has_pending_kernels()) busy.push_back(t.get());
  tbb::parallel_for(size_t{0}, busy.size(), [&](size_t i) { busy[i]->run_pending_kernels(); });
  for (const auto& t : tiles_) t->report_kernel_hazards();
}

}  // namespace lockstep::model
