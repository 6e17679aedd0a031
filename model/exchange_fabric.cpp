#include "model/exchange_fabric.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "model/exchange_phase.hpp"
#include "model/tile.hpp"

namespace lockstep::model {

namespace {
constexpr uint32_t kReturnWord = 0x43a00000;  // br $m10

// Every tile's row end and the runs it received, write runs merged where one continues
// the last (same sender, next addresses, next event).
std::vector<TileRecord> tile_records(const PhaseOutcome& outcome, std::span<Tile* const> tiles) {
  std::vector<TileRecord> records(tiles.size());
  for (size_t i = 0; i < tiles.size(); ++i) {
    records[i].tile = tiles[i]->logical();
    records[i].row_end = outcome.tile_horizon[i];
  }
  for (const WriteRun& w : outcome.writes) {  // in first-write-event order
    auto& list = records[w.receiver].received;
    const int64_t last = w.first_write_event + w.bytes / w.item_bytes - 1;
    const uint32_t sender = tiles[w.sender]->logical();
    if (!list.empty()) {
      ReceivedRun& r = list.back();
      if (r.sender == sender && r.address + r.bytes == w.address &&
          r.source_address + r.bytes == w.source_address && r.last_write_event + 1 == w.first_write_event) {
        r.bytes += w.bytes;
        r.last_write_event = last;
        continue;
      }
    }
    list.push_back({sender, w.address, w.source_address, w.bytes, w.first_write_event, last});
  }
  std::sort(records.begin(), records.end(), [](const TileRecord& a, const TileRecord& b) { return a.tile < b.tile; });
  return records;
}
}  // namespace

ExchangeFabric::ExchangeFabric(sc_core::sc_module_name name,
                               const arch::MachineDescription& machine,
                               const arch::Topology& topology, RunMonitor& monitor)
    : sc_core::sc_module(name), machine_(machine), topology_(topology), monitor_(monitor) {}

// Reads the row from SRAM up to the first return word, growing the window as needed and
// never past the tile's table (or SRAM): a row without a return is an encoding hazard.
std::vector<uint32_t> ExchangeFabric::read_row(const Tile& tile, uint32_t address) const {
  const auto& table = tile.program().table;
  uint64_t limit = std::min<uint64_t>(uint64_t(table.address) + table.size, machine_.sram_end);
  if (address < machine_.sram_base || address >= limit) return {};
  const uint64_t available = (limit - address) / 4;
  std::vector<uint32_t> words;
  uint64_t want = std::min<uint64_t>(64, available);
  size_t scanned = 0;
  while (true) {
    const size_t old = words.size();
    words.resize(want);
    tile.memory().read(address + static_cast<uint32_t>(old * 4),
                       static_cast<uint32_t>((want - old) * 4),
                       reinterpret_cast<uint8_t*>(words.data() + old));
    for (; scanned < words.size(); ++scanned) {
      // A sendpicp payload may look like a return; one more word covers that case.
      if (words[scanned] == kReturnWord) {
        return words;
      }
    }
    if (want == available) return words;
    want = std::min<uint64_t>(want * 2, available);
  }
}

const ExchangeFabric::Executed& ExchangeFabric::executed(uint32_t phase,
                                                          std::vector<PhaseTile> inputs) {
  auto found = last_execution_.find(phase);
  if (found != last_execution_.end() && found->second.inputs == inputs) return found->second;
  Executed e;
  e.outcome = execute_phase(machine_, topology_, inputs, monitor_.trace_tile);
  e.outcome.schedules.clear();  // not needed after the phase; a cached phase stays small
  e.outcome.schedules.shrink_to_fit();
  e.inputs = std::move(inputs);
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, size_t> offset_of;
  e.write_offset.reserve(e.outcome.writes.size());
  for (const WriteRun& w : e.outcome.writes) {
    auto [it, inserted] = offset_of.try_emplace({w.sender, w.source_address, w.bytes}, e.buffer_bytes);
    if (inserted) {
      e.reads.push_back({w.sender, w.source_address, w.bytes});
      e.buffer_bytes += w.bytes;
    }
    e.write_offset.push_back(it->second);
  }
  return last_execution_[phase] = std::move(e);
}

std::vector<int64_t> ExchangeFabric::execute(uint32_t phase, std::span<Tile* const> tiles) {
  const uint64_t release = sc_core::sc_time_stamp().value();
  std::vector<PhaseTile> inputs(tiles.size());
  for (size_t i = 0; i < tiles.size(); ++i) {
    const Tile& t = *tiles[i];
    const arch::ExchangeStep& step = *t.pending_exchange();
    PhaseTile& in = inputs[i];
    in.logical = t.logical();
    in.physical = t.physical();
    in.has_row = step.row_address.has_value();
    in.row_address = step.row_address.value_or(0);
    if (in.has_row) in.row_words = read_row(t, in.row_address);
    in.incoming_base = step.incoming_base;
    in.incoming_format = step.incoming_format;
    in.incoming_mux = step.incoming_mux.value_or(t.mux);
    in.paired_mux = t.paired_mux;
    in.incoming_muxpair = step.incoming_muxpair;
  }
  const Executed& e = executed(phase, std::move(inputs));
  const PhaseOutcome& outcome = e.outcome;

  // Every send reads its source as it stood at the release; then the words land in
  // write-event order, so a word written twice keeps the later one.
  copy_buffer_.resize(e.buffer_bytes);
  size_t at = 0;
  for (const SourceRead& r : e.reads) {
    tiles[r.sender]->memory().read(r.address, r.bytes, copy_buffer_.data() + at);
    at += r.bytes;
  }
  for (size_t k = 0; k < outcome.writes.size(); ++k) {
    const WriteRun& w = outcome.writes[k];
    tiles[w.receiver]->memory().write(w.address, w.bytes, copy_buffer_.data() + e.write_offset[k]);
  }
  for (size_t i = 0; i < tiles.size(); ++i) {
    tiles[i]->mux = outcome.final_mux[i];
    tiles[i]->paired_mux = outcome.final_paired_mux[i];
  }
  const uint32_t iteration = tiles.empty() ? 0 : tiles.front()->iteration();
  if (monitor_.trace_tile && spdlog::should_log(spdlog::level::debug)) {
    for (const auto& line : outcome.trace) {
      spdlog::debug("tile {} phase {} iteration {} event {}: {}", *monitor_.trace_tile, phase,
                    iteration, line.event, line.text);
    }
  }
  PhaseRecord record{phase, iteration, release, static_cast<uint64_t>(outcome.horizon), {}, 0, {}};
  if (monitor_.record_tiles) record.tiles = tile_records(outcome, tiles);
  if (!tiles.empty() && tiles.front()->release_path()) {
    record.last_arrival = tiles.front()->release_path()->last_arrival;
    record.before = tiles.front()->release_path()->interval;
  }
  monitor_.record(record);
  for (const auto& h : outcome.hazards) {
    RecordedHazard r;
    r.cycle = release + static_cast<uint64_t>(std::max<int64_t>(0, h.event));
    r.phase = phase;
    r.iteration = iteration;
    r.hazard = h;
    monitor_.report(std::move(r));
  }
  return outcome.tile_horizon;
}

}  // namespace lockstep::model
