#include "model/exchange_fabric.hpp"

#include <spdlog/spdlog.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>

#include "io/hex.hpp"
#include "io/mapped_file.hpp"
#include "io/parallel.hpp"
#include "model/exchange_phase.hpp"
#include "model/sram.hpp"
#include "model/tile.hpp"

namespace lockstep::model {

namespace {
constexpr uint32_t kReturnWord = 0x43a00000;  // br $m10
// Copies of this many bytes (twice one core's L2 here) leave none of the tiles' state in cache.
constexpr uint64_t kColdBytes = 2u << 20;

// Every tile's row end and the runs it received, write runs merged where one continues
// the last (same sender, next addresses, next event).
std::vector<TileRecord> tile_records(const PhaseOutcome& outcome, std::span<Tile* const> tiles) {
  std::vector<TileRecord> records(tiles.size());
  for (size_t i = 0; i < tiles.size(); ++i) {
    records[i].tile = tiles[i]->logical();
    records[i].row_end = outcome.tile_horizon[i];
  }
  for (const WriteRun& w : outcome.writes) {  // each receiver's in write-event order
    auto& list = records[w.receiver].received;
    const int64_t last = w.first_write_event + w.bytes / w.item_bytes - 1;
    const uint32_t sender = tiles[w.sender]->logical();
    if (!list.empty()) {
      ReceivedRun& r = list.back();
      if (r.sender == sender && r.address + r.bytes == w.address && r.source_address + r.bytes == w.source_address &&
          r.last_write_event + 1 == w.first_write_event) {
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
// Each received word of a watched tile, at its own write event, named by sender and source.
void report_watched(Watcher& watcher, const PhaseOutcome& outcome, std::span<Tile* const> tiles, uint64_t release,
                    uint32_t phase) {
  for (const WriteRun& w : outcome.writes) {
    Tile& receiver = *tiles[w.receiver];
    if (!watcher.watches(receiver.logical())) continue;
    const uint32_t sender = tiles[w.sender]->logical();
    for (uint32_t offset = 0; offset < w.bytes; offset += 4) {
      const uint64_t cycle =
          release + static_cast<uint64_t>(std::max<int64_t>(0, w.first_write_event + offset / w.item_bytes));
      watcher.written(
          receiver.logical(), w.address + offset, 4, receiver.memory(),
          "exchange from tile " + std::to_string(sender) + " address " + arch::hex(w.source_address + offset),
          {cycle, phase, receiver.iteration()});
    }
  }
}

}  // namespace

ExchangeFabric::ExchangeFabric(sc_core::sc_module_name name, const arch::MachineDescription& machine,
                               const arch::Topology& topology, RunMonitor& monitor, SramArena& sram)
    : sc_core::sc_module(name), machine_(machine), topology_(topology), monitor_(monitor), sram_(sram) {}

// Reads the row from SRAM up to the first return word, growing the window as needed and
// never past the tile's table (or SRAM): a row without a return is an encoding hazard.
std::vector<uint32_t> ExchangeFabric::read_row(const Tile& tile, uint32_t address) const {
  const auto& table = tile.program().table;
  uint64_t limit = std::min<uint64_t>(uint64_t(table.address) + table.size, machine_.sram_end);
  if (address < machine_.sram_base || address >= limit) return {};
  const uint64_t available = (limit - address) / 4;
  // The window doubles from 64 words until it holds a return word: the row is the window. Read
  // a window at a time (Sram::read), so that rows laid as bytes stay where they are.
  std::vector<uint32_t> words(std::min<uint64_t>(64, available));
  tile.memory().read(address, static_cast<uint32_t>(words.size() * 4), reinterpret_cast<uint8_t*>(words.data()));
  for (uint64_t scanned = 0; scanned < available; ++scanned) {
    if (scanned == words.size()) {
      const size_t had = words.size();
      words.resize(std::min<uint64_t>(had * 2, available));
      tile.memory().read(static_cast<uint32_t>(address + 4 * had), static_cast<uint32_t>((words.size() - had) * 4),
                         reinterpret_cast<uint8_t*>(words.data() + had));
    }
    // A sendpicp payload may look like a return; one more word covers that case.
    if (words[scanned] == kReturnWord) break;
  }
  return words;
}

// A write in epoch `read` itself may have come after the read (the copies'), so only older ones pass.
bool ExchangeFabric::unwritten_since(const Tile& tile, uint32_t address, uint32_t bytes,
                                     WriteEpochs::Epoch read) const {
  if (read == 0) return false;
  const uint8_t* at = tile.memory().place(address, bytes);
  const WriteEpochs& epochs = sram_.epochs();
  for (size_t p = sram_.page_of(at), end = sram_.page_of(at + bytes - 1); p <= end; ++p) {
    if (epochs.last_write(p) >= read) return false;
  }
  return true;
}

ExchangeFabric::Executed& ExchangeFabric::executed(uint32_t phase, std::vector<PhaseTile> inputs, bool unchanged,
                                                   std::span<Tile* const> tiles) {
  auto found = last_execution_.find(phase);
  if (found != last_execution_.end()) {
    Executed& e = found->second;
    if (unchanged) {
      spdlog::debug("phase {}: as its last execution", phase);
      return e;
    }
    // A relocation keeps the timing (so the activities), the receivers and their addresses
    // (so the code writes), and moves the copies with their sources where it can.
    if (!monitor_.trace_tile && relocate_phase(machine_, e.inputs, e.outcome, inputs)) {
      spdlog::debug("phase {}: relocated from its last execution", phase);
      e.inputs = std::move(inputs);
      if (!move_copies(e, tiles)) plan_copies(e, tiles);
      spdlog::debug("phase {}: {} writes in {} copies", phase, e.outcome.writes.size(), e.copies.size());
      return e;
    }
  }
  spdlog::debug("phase {}: executed", phase);
  const auto t0 = std::chrono::steady_clock::now();
  PhaseOutcome outcome = execute_phase(machine_, topology_, inputs, monitor_.trace_tile);
  spdlog::debug("phase {}: executed in {:.3f} s, {} writes", phase,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), outcome.writes.size());
  std::shared_ptr<const PhaseActivities> activities;
  if (monitor_.profile) {
    const auto a0 = std::chrono::steady_clock::now();
    activities = exchange_activities(outcome, inputs);
    spdlog::debug("phase {}: profile activities in {:.3f} s", phase,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - a0).count());
  }
  outcome.schedules.clear();  // not needed after the phase; a cached phase stays small
  outcome.schedules.shrink_to_fit();
  Executed& e = last_execution_[phase];
  e.outcome = std::move(outcome);
  e.inputs = std::move(inputs);
  e.activities = std::move(activities);
  plan_copies(e, tiles);
  e.code_writes.clear();
  e.write_bytes = 0;
  for (uint32_t i = 0; i < e.outcome.writes.size(); ++i) {
    const WriteRun& w = e.outcome.writes[i];
    e.write_bytes += w.bytes;
    const arch::TileCode& code = tiles[w.receiver]->code();
    if (uint64_t(w.address) + w.bytes > code.base && w.address < code.end()) e.code_writes.push_back(i);
  }
  spdlog::debug("phase {}: {} writes in {} copies", phase, e.outcome.writes.size(), e.copies.size());
  return e;
}

// Writes are ordered by receiver: each receiver's group starts at receiver_begin. A phase
// without hazards writes every word at most once and never a word any send reads (hazards
// 1, 2 and the double-write check), so its writes commute: per receiver they are sorted by
// source and runs that continue each other in both memories become one copy.
void ExchangeFabric::plan_copies(Executed& e, std::span<Tile* const> tiles) {
  const bool lay_tokens = monitor_.lay_copied_tokens && sram_.token_pages().any();
  const auto& writes = e.outcome.writes;
  e.receiver_begin.clear();
  for (uint32_t k = 0; k < writes.size(); ++k) {
    if (k == 0 || writes[k].receiver != writes[k - 1].receiver) e.receiver_begin.push_back(k);
  }
  e.receiver_begin.push_back(static_cast<uint32_t>(writes.size()));
  e.pages.clear();
  e.read_pages.clear();
  e.copies.clear();
  e.copy_begin.clear();
  e.copy_writes.clear();
  e.copy_first.clear();
  e.copy_of_write.clear();
  e.direct = e.outcome.hazards.empty();
  if (!e.direct) return;
  // Receivers in parallel, each into its own lists; the lists then go in receiver order. A
  // receiver's writes keep their places in copy_writes, sorted among themselves.
  const size_t groups = e.receiver_begin.size() - 1;
  std::vector<std::vector<Copy>> found(groups);
  std::vector<std::vector<uint32_t>> firsts(groups);
  arch::resize_populated(e.copy_writes, writes.size());  // each receiver's task writes its block
  tbb::parallel_for(size_t{0}, groups, [&](size_t g) {
    const uint32_t begin = e.receiver_begin[g], end = e.receiver_begin[g + 1];
    const auto group = std::span(e.copy_writes).subspan(begin, end - begin);
    std::iota(group.begin(), group.end(), begin);
    std::sort(group.begin(), group.end(), [&](uint32_t a, uint32_t b) {
      const WriteRun &x = writes[a], &y = writes[b];
      return std::tie(x.sender, x.source_address, x.address) < std::tie(y.sender, y.source_address, y.address);
    });
    std::vector<Copy>& copies = found[g];
    const WriteRun* last = nullptr;  // the write that the last copy ends with
    for (size_t j = 0; j < group.size(); ++j) {
      const WriteRun* w = &writes[group[j]];
      // Each write's two ranges are checked against SRAM here, once for every execution.
      // Places only: a source's deferred tokens (model/token_pages.hpp) are made by the copy.
      const uint8_t* from = tiles[w->sender]->memory().place(w->source_address, w->bytes);
      uint8_t* to = tiles[w->receiver]->memory().mutable_place(w->address, w->bytes);
      if (last != nullptr && last->sender == w->sender && last->source_address + last->bytes == w->source_address &&
          last->address + last->bytes == w->address) {
        copies.back().bytes += w->bytes;  // continues the last copy in both memories
      } else {
        copies.push_back({from, to, w->bytes});
        firsts[g].push_back(static_cast<uint32_t>(begin + j));
      }
      last = w;
    }
    // The receiver's pages mapped ahead of its first copies: a first write to a fresh page costs
    // about 10 us on the virtual machines measured here, a page mapped in bulk half of that
    // (docs/performance.md, round eighteen). They read as zero either way, as untouched SRAM does.
    // Not where the copies lay runs of deferred tokens over their destinations' pages, which
    // then stay unmapped (round thirty-two).
    if (lay_tokens) return;
    std::vector<std::pair<uintptr_t, uintptr_t>> destinations;
    destinations.reserve(copies.size());
    for (const Copy& c : copies) {
      destinations.emplace_back(reinterpret_cast<uintptr_t>(c.to), reinterpret_cast<uintptr_t>(c.to) + c.bytes);
    }
    arch::populate_for_write(std::move(destinations));
  });
  e.copy_begin = arch::flatten(found, e.copies);
  arch::flatten(firsts, e.copy_first);
  e.copy_first.push_back(static_cast<uint32_t>(writes.size()));
  arch::resize_populated(e.copy_of_write, writes.size());  // every write is in one copy, which writes it
  tbb::parallel_for(size_t{0}, e.copies.size(), [&](size_t c) {
    for (uint32_t j = e.copy_first[c]; j < e.copy_first[c + 1]; ++j) {
      e.copy_of_write[e.copy_writes[j]] = static_cast<uint32_t>(c);
    }
  });
}

bool ExchangeFabric::move_copies(Executed& e, std::span<Tile* const> tiles) {
  if (!e.direct) return true;  // nothing planned: the writes are applied one by one
  e.pages.clear();
  e.read_pages.clear();
  const auto& writes = e.outcome.writes;
  // The copies that hold a write whose source changed, each once: marked, then listed in copy
  // order (linear; sorting the writes' copies was 67 ms of the exchange-only run's main thread).
  std::vector<uint8_t> holds_moved(e.copies.size(), 0);
  for (const uint32_t k : e.outcome.moved_writes) holds_moved[e.copy_of_write[k]] = 1;
  std::vector<uint32_t> moved;
  for (uint32_t c = 0; c < holds_moved.size(); ++c) {
    if (holds_moved[c] != 0) moved.push_back(c);
  }
  std::atomic<bool> apart{false};
  tbb::parallel_for(size_t{0}, moved.size(), [&](size_t m) {
    const uint32_t c = moved[m];
    const WriteRun& first = writes[e.copy_writes[e.copy_first[c]]];
    uint64_t next = uint64_t{first.source_address} + first.bytes;
    for (uint32_t j = e.copy_first[c] + 1; j < e.copy_first[c + 1]; ++j) {
      const WriteRun& w = writes[e.copy_writes[j]];
      if (w.source_address != next) apart = true;
      next += w.bytes;
    }
    if (!apart) e.copies[c].from = tiles[first.sender]->memory().place(first.source_address, e.copies[c].bytes);
  });
  return !apart;
}

// Every send reads its source as it stood at the release; each receiver's words land in
// write-event order, so a word written twice keeps the later one. Receivers copy in
// parallel, with the same bytes as one thread. Without hazards (plan_copies) each word goes
// straight from SRAM to SRAM; each chunk then lies in one element, so no two threads touch
// one chunk. Otherwise every source is read into a buffer first, writes then apply in order.
void ExchangeFabric::copy_words(Executed& e, std::span<Tile* const> tiles, uint32_t phase, uint32_t iteration) {
  if (e.direct) {
    const auto& landing = monitor_.after_landing;
    // The copies are short and scattered over 1,472 SRAMs, so each one waits on memory: the
    // lines of the copy kPrefetchAhead further on are asked for first.
    constexpr uint32_t kPrefetchAhead = 8;
    const bool deferred_tokens = sram_.token_pages().any();                 // then each copy makes what it moves
    const bool lay_tokens = deferred_tokens && monitor_.lay_copied_tokens;  // or moves runs of them
    if (lay_tokens && e.read_pages.empty()) mark_read_pages(e);
    const auto ask_for_lines = [](const Copy& c, bool source) {
      for (uint32_t b = 0; b < c.bytes; b += 64) {
        if (source) __builtin_prefetch(c.from + b, 0);
        __builtin_prefetch(c.to + b, 1);
      }
    };
    tbb::parallel_for(size_t{0}, e.copy_begin.size() - 1, [&](size_t g) {
      const uint32_t end = e.copy_begin[g + 1];
      for (uint32_t k = e.copy_begin[g]; k < end; ++k) {
        if (lay_tokens) {
          // Copies then move runs of tokens between the pages' records (model/token_pages.hpp),
          // not memory: those are asked for ahead, entries twice as far as the records. Memory
          // is not: a page that only holds runs is unmapped, and asking for it costs a walk.
          // A receiver has about ten copies, so the next receivers' are asked for too.
          if (k + 2 * kPrefetchAhead < e.copies.size()) {
            const Copy& next = e.copies[k + 2 * kPrefetchAhead];
            sram_.prefetch_token_entries(next.from, next.to);
          }
          if (k + kPrefetchAhead < e.copies.size()) {
            const Copy& next = e.copies[k + kPrefetchAhead];
            // A source in memory (a page that could not defer its tokens) is copied memory to
            // memory: its lines are asked for as below.
            if (!sram_.prefetch_token_records(next.from, next.to)) ask_for_lines(next, true);
          }
          const Copy& c = e.copies[k];
          if (c.bytes != 0) sram_.lay_out(c.from, c.to, c.bytes, e.read_pages);
          sram_.mark_written(c.to, c.bytes);
          continue;
        }
        // A source whose tokens wait is not read, and its page is unmapped: asking for it cost a
        // replay of phase 6 0.3 s (docs/performance.md, round twenty-four).
        if (k + kPrefetchAhead < end) ask_for_lines(e.copies[k + kPrefetchAhead], !deferred_tokens);
        const Copy& c = e.copies[k];
        if (deferred_tokens && c.bytes != 0 &&
            (sram_.waits_for_tokens(c.from, c.bytes) || sram_.waits_for_tokens(c.to, c.bytes))) {
          sram_.copy_out(c.from, c.to, c.bytes);
        } else {
          std::memcpy(c.to, c.from, c.bytes);
        }
        // The copies hold their places across executions, so their writes are marked here.
        sram_.mark_written(c.to, c.bytes);
      }
      // Each group is one receiver's copies, in receiver order (plan_copies).
      if (landing) landing(phase, iteration, tiles[e.outcome.writes[e.receiver_begin[g]].receiver]->logical());
    });
    return;
  }
  const auto& writes = e.outcome.writes;
  std::vector<size_t> offset(writes.size() + 1, 0);
  for (size_t k = 0; k < writes.size(); ++k) offset[k + 1] = offset[k] + writes[k].bytes;
  copy_buffer_.resize(offset.back());
  tbb::parallel_for(size_t{0}, writes.size(), [&](size_t k) {
    const WriteRun& w = writes[k];
    tiles[w.sender]->memory().read(w.source_address, w.bytes, copy_buffer_.data() + offset[k]);
  });
  tbb::parallel_for(size_t{0}, e.receiver_begin.size() - 1, [&](size_t g) {
    for (uint32_t k = e.receiver_begin[g]; k < e.receiver_begin[g + 1]; ++k) {
      const WriteRun& w = writes[k];
      tiles[w.receiver]->memory().write(w.address, w.bytes, copy_buffer_.data() + offset[k]);
    }
  });
}

void ExchangeFabric::mark_pages(std::vector<uint64_t>& bits, const uint8_t* bytes, uint32_t count) const {
  if (count == 0) return;
  for (size_t p = sram_.page_of(bytes), last = sram_.page_of(bytes + count - 1); p <= last; ++p) {
    bits[p / 64] |= uint64_t{1} << (p % 64);
  }
}

void ExchangeFabric::mark_read_pages(Executed& e) const {
  e.read_pages.assign((sram_.epochs().pages() + 63) / 64, 0);
  for (const Copy& c : e.copies) mark_pages(e.read_pages, c.from, c.bytes);
}

bool ExchangeFabric::landed_already(Executed& e) {
  if (!e.direct || e.epoch == 0) return false;
  const WriteEpochs& epochs = sram_.epochs();
  if (e.pages.empty() && !e.copies.empty()) {
    // A bit a page, then the pages in order: each page is checked once however many copies share it.
    std::vector<uint64_t> touched((epochs.pages() + 63) / 64, 0);
    for (const Copy& c : e.copies) {
      mark_pages(touched, c.from, c.bytes);
      mark_pages(touched, c.to, c.bytes);
    }
    for (size_t word = 0; word < touched.size(); ++word) {
      for (uint64_t bits = touched[word]; bits != 0; bits &= bits - 1) {
        e.pages.push_back(static_cast<uint32_t>(word * 64 + static_cast<size_t>(std::countr_zero(bits))));
      }
    }
  }
  return std::all_of(e.pages.begin(), e.pages.end(), [&](uint32_t p) { return epochs.last_write(p) <= e.epoch; });
}

// A receive that lands on a tile's supervisor code area (instructions, tables, stack) would
// change what the tile runs; the lowering keeps the area out of every known operand, but
// receive destinations are known only here.
void ExchangeFabric::report_code_writes(const Executed& e, std::span<Tile* const> tiles, uint64_t release) {
  for (const uint32_t i : e.code_writes) {
    const WriteRun& w = e.outcome.writes[i];
    const arch::TileCode& code = tiles[w.receiver]->code();
    RecordedHazard r;
    r.cycle = release + static_cast<uint64_t>(std::max<int64_t>(0, w.first_write_event));
    r.phase = tiles[w.receiver]->current_phase();
    r.iteration = tiles[w.receiver]->iteration();
    r.hazard.kind = HazardClass::InstructionAccess;
    r.hazard.tile = tiles[w.receiver]->logical();
    r.hazard.instruction = "receive";
    r.hazard.detail = std::to_string(w.bytes) + " bytes at " + arch::hex(w.address) +
                      " land in the tile's supervisor code area " + arch::hex(code.base) + ".." + arch::hex(code.end());
    monitor_.report(std::move(r));
  }
}

std::vector<int64_t> ExchangeFabric::execute(uint32_t phase, std::span<Tile* const> tiles) {
  const uint64_t release = sc_core::sc_time_stamp().value();
  const auto found = last_execution_.find(phase);
  const std::vector<PhaseTile>* last =
      found != last_execution_.end() && found->second.inputs.size() == tiles.size() ? &found->second.inputs : nullptr;
  std::vector<PhaseTile> inputs(tiles.size());
  // A row that SRAM still holds word for word as in the last execution is not read: the same
  // words give the same window up to the first return. Its pages' write epochs say so when
  // nothing wrote them since that execution read them (every further iteration of a Repeat);
  // otherwise it is compared in place.
  const WriteEpochs::Epoch read_at = sram_.epochs().now();
  const WriteEpochs::Epoch last_read = last != nullptr ? found->second.rows_read : 0;
  std::vector<uint8_t> row_as_last(tiles.size(), 0);
  tbb::parallel_for(size_t{0}, tiles.size(), [&](size_t i) {  // reads only the tile's own state
    const Tile& t = *tiles[i];
    const arch::ExchangeStep& step = *t.pending_exchange();
    PhaseTile& in = inputs[i];
    in.logical = t.logical();
    in.physical = t.physical();
    in.has_row = step.row_address.has_value();
    in.row_address = step.row_address.value_or(0);
    in.incoming_base = step.incoming_base;
    in.incoming_format = step.incoming_format;
    in.incoming_mux = step.incoming_mux.value_or(t.mux);
    in.paired_mux = t.paired_mux;
    in.incoming_muxpair = step.incoming_muxpair;
    if (!in.has_row) return;
    const PhaseTile* before = last != nullptr ? &(*last)[i] : nullptr;
    const auto row_bytes = before != nullptr ? static_cast<uint32_t>(before->row_words.size() * 4) : 0;
    if (before != nullptr && before->has_row && before->row_address == in.row_address && row_bytes != 0 &&
        (unwritten_since(t, in.row_address, row_bytes, last_read) ||
         t.memory().equal(in.row_address, row_bytes, reinterpret_cast<const uint8_t*>(before->row_words.data())))) {
      row_as_last[i] = 1;
    } else {
      in.row_words = read_row(t, in.row_address);
    }
  });
  bool unchanged = last != nullptr;
  for (size_t i = 0; i < tiles.size() && unchanged; ++i) {
    unchanged = row_as_last[i] ? inputs[i].same_but_row((*last)[i]) : inputs[i] == (*last)[i];
  }
  for (size_t i = 0; i < tiles.size() && !unchanged; ++i) {
    if (row_as_last[i]) inputs[i].row_words = (*last)[i].row_words;
  }
  Executed& e = executed(phase, std::move(inputs), unchanged, tiles);
  e.rows_read = read_at;
  const PhaseOutcome& outcome = e.outcome;
  const uint32_t iteration = tiles.empty() ? 0 : tiles.front()->iteration();

  // A repeat whose sources and destinations nothing wrote since would copy the same bytes onto
  // themselves (an exchange-only program's Repeats, whose kernels are gone): it is not copied.
  const bool in_place = unchanged && landed_already(e);
  if (in_place) {
    monitor_.count_landed(e.write_bytes);
  } else {
    copy_words(e, tiles, phase, iteration);
    monitor_.count_copies(e.direct ? e.copies.size() : outcome.writes.size(), e.write_bytes);
  }
  // Every write after this point (the tiles', a replay's refill) is a later epoch's.
  e.epoch = sram_.epochs().now();
  sram_.epochs().advance();
  if (monitor_.watcher != nullptr) report_watched(*monitor_.watcher, outcome, tiles, release, phase);
  report_code_writes(e, tiles, release);
  for (size_t i = 0; i < tiles.size(); ++i) {
    tiles[i]->mux = outcome.final_mux[i];
    tiles[i]->paired_mux = outcome.final_paired_mux[i];
    if (monitor_.profile) tiles[i]->exchanged(e.activities, static_cast<uint32_t>(i));
  }
  if (monitor_.trace_tile && spdlog::should_log(spdlog::level::debug)) {
    for (const auto& line : outcome.trace) {
      spdlog::debug("tile {} phase {} iteration {} event {}: {}", *monitor_.trace_tile, phase, iteration, line.event,
                    line.text);
    }
  }
  PhaseRecord record{phase, iteration, release, static_cast<uint64_t>(outcome.horizon), {}, 0, {}};
  if (monitor_.record_tiles) record.tiles = tile_records(outcome, tiles);
  if (!tiles.empty() && tiles.front()->release_path()) {
    record.last_arrival = tiles.front()->release_path()->last_arrival;
    record.before = tiles.front()->release_path()->interval;
  }
  monitor_.record(record);
  // After copies larger than the caches (and the replay's check of them, in record()), the
  // tiles' own state is gone from them: asked for all at once, its misses overlap, where SystemC
  // would otherwise wait on them one tile at a time (docs/performance.md, round twenty-five).
  if (!in_place && e.write_bytes >= kColdBytes) {
    for (const Tile* t : tiles) t->prefetch_state();
  }
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
