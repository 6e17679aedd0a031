#include "sim/stop_at.hpp"

namespace lockstep::sim {
namespace {

constexpr size_t kMaxRowWords = 4096;
constexpr uint32_t kReturnWord = 0x43a00000;  // br $m10

RowState row_state(const model::Tile& tile, const MemoryView& view) {
  const arch::ExchangeStep& e = tile.last_exchange();
  RowState r{tile.logical(),    e.phase,         tile.iteration(), tile.mux, tile.paired_mux,
             e.incoming_format, e.incoming_base, e.row_address,    {}};
  if (!e.row_address) return r;
  for (uint32_t a = *e.row_address; r.row.size() < kMaxRowWords && tile.memory().contains(a, 4); a += 4) {
    uint32_t word = 0;
    view.read(tile.logical(), a, 4, reinterpret_cast<uint8_t*>(&word));
    r.row.push_back(word);
    if (word == kReturnWord) break;
  }
  return r;
}

}  // namespace

void arm_stop(const RunOptions& options, model::RunMonitor& monitor) {
  if (!options.stop_at) return;
  const StopAt stop = *options.stop_at;
  monitor.synchronous_steps = true;
  if (stop.kind == StopAt::Kind::Step) monitor.stop_step = std::make_pair(stop.tile, stop.step);
  if (stop.kind != StopAt::Kind::Phase && stop.kind != StopAt::Kind::Cycle) return;
  auto before = std::move(monitor.after_phase);
  monitor.after_phase = [before, stop, &monitor](const model::PhaseRecord& r) {
    if (before) before(r);
    const bool here = stop.kind == StopAt::Kind::Phase ? r.phase == stop.phase && r.iteration == stop.iteration
                                                       : r.release_cycle >= stop.cycle;
    if (!here) return;
    monitor.request_stop("phase " + std::to_string(r.phase) + " iteration " + std::to_string(r.iteration) +
                         " (released at cycle " + std::to_string(r.release_cycle) + ", horizon " +
                         std::to_string(r.horizon) + ")");
  };
}

void collect_stop(const RunOptions& options, const model::RunMonitor& monitor, const model::Chip& chip,
                  const MemoryView& view, RunResult& result) {
  if (!options.stop_at) return;
  result.stopped_at = monitor.stopped_at();
  if (options.stop_at->kind == StopAt::Kind::Hazard && !result.hazards.empty()) {
    result.stopped_at = "the first hazard: " + describe(result.hazards.front());
  }
  if (result.stopped_at.empty()) return;
  for (const model::WatchRange& d : options.dumps) {
    std::vector<uint8_t>& bytes = result.dumps.emplace_back(d.bytes);
    view.read(d.tile, d.address, d.bytes, bytes.data());
  }
  if (options.dump_rows) {
    for (const auto& t : chip.tiles()) result.rows.push_back(row_state(*t, view));
  }
}

}  // namespace lockstep::sim
