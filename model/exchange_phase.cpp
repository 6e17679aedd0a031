#include "model/exchange_phase.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <tuple>

#include "io/hex.hpp"
#include "io/mapped_file.hpp"
#include "model/exchange_phase_internal.hpp"

namespace lockstep::model {
namespace phase_executor {

using arch::hex;

PhaseExecutor::PhaseExecutor(const arch::MachineDescription& machine, const arch::Topology& topology,
                             std::span<const PhaseTile> tiles, std::optional<uint32_t> trace)
    : machine_(machine), topology_(topology), tiles_(tiles) {
  index_of_physical_.assign(machine.chip_tiles, -1);
  for (uint32_t i = 0; i < tiles.size(); ++i) {
    index_of_physical_.at(tiles[i].physical) = static_cast<int32_t>(i);
    if (trace && tiles[i].logical == *trace) trace_index_ = i;
  }
}

PhaseOutcome PhaseExecutor::run() {
  schedule_rows();
  build_timelines();
  check_controls();
  select_ordinary();
  select_paired();
  selections_of_receiver_ =
      group_by(selections_.size(), tiles_.size(), [&](size_t k) { return selections_[k].receiver; });
  assign_addresses();
  writes_of_ = group_by(out_.writes.size(), tiles_.size(), [&](size_t k) { return out_.writes[k].receiver; });
  check_messages();
  check_receive_overlaps();
  check_elements();
  check_paired();
  check_double_writes();
  check_open_muxes();
  finish();
  return std::move(out_);
}

void PhaseExecutor::schedule_rows() {
  const size_t n = tiles_.size();
  out_.schedules.resize(n);
  out_.tile_horizon.assign(n, 0);
  tbb::parallel_for(size_t{0}, n, [&](size_t i) {
    if (tile(i).has_row) out_.schedules[i] = schedule_row(tile(i).row_words);
  });
  for (uint32_t i = 0; i < n; ++i) {
    if (!tile(i).has_row) continue;
    const RowSchedule& s = out_.schedules[i];
    out_.tile_horizon[i] = s.horizon;
    for (const auto& issue : s.issues) {
      ModelHazard h;
      h.kind = HazardClass::Encoding;
      h.tile = tile(i).logical;
      h.event = issue.event;
      h.row_offset = issue.byte_offset;
      h.instruction = issue.instruction == kNoInstruction
                          ? "(undecodable word)"
                          : arch::describe(instruction_at(tile(i).row_words, s.instructions[issue.instruction]));
      h.detail = issue.detail;
      out_.hazards.push_back(std::move(h));
    }
    const uint64_t row_end = uint64_t(tile(i).row_address) + s.row_bytes;
    if (row_end > machine_.row_region_end) {
      hazard(HazardClass::Encoding, i, 0, kNoInstruction,
             "row " + hex(tile(i).row_address) + ".." + hex(row_end) + " reaches above " +
                 hex(machine_.row_region_end) + " (no instruction fetch there)");
    }
    if (trace_index_ && *trace_index_ == i) {
      for (const auto& r : s.runs) {
        trace(i, r.first_event,
              "send " + std::to_string(r.items) + " items from " + hex(r.byte_address()) + " sctl " +
                  std::to_string(r.sctl) + " (issued at " + std::to_string(r.issue_event) + ", message " +
                  std::to_string(r.message) + ")");
      }
      static const char* names[] = {"XPIC", "paired XPIC", "PIC pointer", "PIC format"};
      for (const auto& c : s.controls) {
        trace(i, c.event, std::string(names[static_cast<int>(c.kind)]) + " <- " + hex(c.value));
      }
      trace(i, s.horizon, "row ends");
    }
  }
}

// The paired mux as a row's paired XPIC control writes it (value v on tile e selects
// v XOR (e AND 2)); INCOMING_MUXPAIR holds the sender XOR 2 (spec section 6, CSR form).
uint32_t PhaseExecutor::paired_mux_of_muxpair(uint32_t muxpair, uint32_t physical) const {
  if (muxpair >= machine_.chip_tiles) return muxpair;  // neutral, host endpoint
  return muxpair ^ 2u ^ (physical & 2u);
}

// Tiles in parallel: each its own timelines and windows; window ids then follow tile order.
void PhaseExecutor::build_timelines() {
  const size_t n = tiles_.size();
  xpic_.resize(n);
  paired_.resize(n);
  pointer_.resize(n);
  format_.resize(n);
  pointer_instr_.resize(n);
  format_instr_.resize(n);
  std::vector<std::vector<OpenWindow>> found(n);
  tbb::parallel_for(uint32_t{0}, static_cast<uint32_t>(n), [&](uint32_t i) {
    xpic_[i].initial = tile(i).incoming_mux;
    paired_[i].initial = tile(i).incoming_muxpair ? paired_mux_of_muxpair(*tile(i).incoming_muxpair, tile(i).physical)
                                                  : tile(i).paired_mux;
    format_[i].initial = tile(i).incoming_format;
    pointer_[i].initial = 0;  // undefined until a control: tracked by pointer_[i].changes
    std::vector<uint32_t> xpic_instr, paired_instr;
    for (const auto& c : schedule(i).controls) {
      switch (c.kind) {
        case ControlKind::Xpic:
          xpic_[i].changes.emplace_back(c.event, c.value);
          xpic_instr.push_back(c.instruction);
          break;
        case ControlKind::PairedXpic:
          paired_[i].changes.emplace_back(c.event, c.value);
          paired_instr.push_back(c.instruction);
          break;
        case ControlKind::PicPointer:
          pointer_[i].changes.emplace_back(c.event, c.value);
          pointer_instr_[i].push_back(c.instruction);
          break;
        case ControlKind::PicFormat:
          format_[i].changes.emplace_back(c.event, c.value);
          format_instr_[i].push_back(c.instruction);
          break;
      }
    }
    add_windows(i, xpic_[i], xpic_instr, false, found[i]);
    add_windows(i, paired_[i], paired_instr, true, found[i]);
  });
  std::vector<size_t> first_id(n + 1, 0);
  for (size_t i = 0; i < n; ++i) first_id[i + 1] = first_id[i] + found[i].size();
  windows_.resize(first_id[n]);
  std::vector<uint32_t> key(first_id[n]);  // sender, or n + sender for a paired mux's window
  tbb::parallel_for(size_t{0}, n, [&](size_t i) {
    for (size_t k = 0; k < found[i].size(); ++k) {
      const auto id = static_cast<uint32_t>(first_id[i] + k);
      windows_[id] = found[i][k].window;
      windows_[id].id = id;
      key[id] = found[i][k].sender + (found[i][k].paired ? static_cast<uint32_t>(n) : 0u);
    }
  });
  // Window ids per sender, in id order, ordinary and paired apart.
  Groups both = group_by(key.size(), 2 * n, [&](size_t id) { return key[id]; });
  const uint32_t ordinary = both.begin[n];
  paired_by_sender_.begin.assign(both.begin.begin() + static_cast<std::ptrdiff_t>(n), both.begin.end());
  for (uint32_t& b : paired_by_sender_.begin) b -= ordinary;
  paired_by_sender_.order.assign(both.order.begin() + ordinary, both.order.end());
  both.begin.resize(n + 1);
  both.order.resize(ordinary);
  ordinary_by_sender_ = std::move(both);
}

// Turns a mux timeline into windows on participating senders.
void PhaseExecutor::add_windows(uint32_t receiver, const Timeline& line, const std::vector<uint32_t>& instr,
                                bool paired, std::vector<OpenWindow>& into) const {
  uint32_t value = line.initial;
  int64_t start = 0;
  uint32_t opened_by = kNoInstruction;
  auto close = [&](int64_t end) {
    if (end <= start) return;
    uint32_t physical = value;
    // The early member of a pair selects s XOR (e AND 2) on its paired mux.
    if (paired) physical = value ^ (tile(receiver).physical & 2u);
    if (value >= machine_.chip_tiles) return;  // neutral, host endpoints: no tile
    const auto sender = participant(physical);
    if (!sender) return;
    into.push_back({{receiver, start, end, opened_by, 0}, *sender, paired});
  };
  for (size_t k = 0; k < line.changes.size(); ++k) {
    close(line.changes[k].first);
    start = line.changes[k].first;
    value = line.changes[k].second;
    opened_by = instr[k];
  }
  close(kForever);
}

// Intersects [first, first + items) shifted by `latency` with a window.
bool PhaseExecutor::intersect(const SendRun& r, int64_t latency, const Window& w, uint32_t& k0, uint32_t& count,
                              int64_t& mux) {
  const int64_t a0 = r.first_event + latency;
  const int64_t a1 = a0 + r.items;
  const int64_t s = std::max(a0, w.start);
  const int64_t e = std::min(a1, w.end);
  if (s >= e) return false;
  k0 = static_cast<uint32_t>(s - a0);
  count = static_cast<uint32_t>(e - s);
  mux = s;
  return true;
}

// Senders are worked out in parallel, counted first and then made in place in sender order,
// as one thread would: a list per sender copied into one held a phase's selections twice,
// 123 MB of fresh pages for the largest phase.
void PhaseExecutor::select_ordinary() {
  const size_t n = tiles_.size();
  ordinary_of_sender_.assign(n + 1, 0);
  tbb::parallel_for(uint32_t{0}, static_cast<uint32_t>(n),
                    [&](uint32_t s) { ordinary_of_sender_[s + 1] = select_ordinary_from(s, nullptr); });
  for (size_t s = 0; s < n; ++s) ordinary_of_sender_[s + 1] += ordinary_of_sender_[s];
  const size_t total = ordinary_of_sender_[n];
  arch::resize_populated(selections_, total);  // not written: UninitializedAllocator
  tbb::parallel_for(uint32_t{0}, static_cast<uint32_t>(n),
                    [&](uint32_t s) { select_ordinary_from(s, selections_.data() + ordinary_of_sender_[s]); });
  first_paired_ = selections_.size();
}

// Items item .. item + items of selection k (sel), written at `receiver` from `write_event`.
WritePiece PhaseExecutor::piece(const Selection& sel, uint32_t k, uint32_t receiver, uint32_t item, uint32_t items,
                                int64_t write_event) const {
  WritePiece p;
  p.item_bytes = sel.paired ? 8 : 4;
  p.receiver = receiver;
  p.sender = sel.sender;
  p.source_address = sel.source_address + uint64_t{item} * p.item_bytes;
  p.write_event = write_event;
  p.mux_event = sel.mux_event + item;
  p.items = items;
  p.selection = k;
  p.window = sel.window;
  p.message = sel.message;
  p.run = sel.run;
  p.run_offset = (sel.first_item + item) * p.item_bytes;
  p.instruction = windows_[sel.window].instruction;
  return p;
}

// Sender s's windows moved into its frame (start and end minus the route latency) and
// sorted, so each run meets only the windows it can intersect; candidates are then taken in
// the windows' original order, so selections keep a fixed order. Returns how many there are,
// and writes them at `into` unless it is null.
uint32_t PhaseExecutor::select_ordinary_from(uint32_t s, Selection* into) const {
  struct Framed {
    int64_t start, end;
    uint32_t index;  // in ordinary_by_sender_.of(s)
  };
  std::vector<Framed> framed;
  std::vector<uint32_t> candidates;
  const auto windows = ordinary_by_sender_.of(s);
  if (windows.empty()) return 0;
  uint32_t found = 0;
  const uint32_t ps = tile(s).physical;
  int64_t longest = 0;
  for (uint32_t k = 0; k < windows.size(); ++k) {
    const Window& w = windows_[windows[k]];
    const uint32_t pd = tile(w.receiver).physical;
    if (ps == pd) continue;
    const int64_t latency = topology_.time_to_mux(ps, pd);
    const int64_t end = w.end >= kForever ? kForever : w.end - latency;
    framed.push_back({w.start - latency, end, k});
    longest = std::max(longest, end >= kForever ? kForever : end - (w.start - latency));
  }
  std::sort(framed.begin(), framed.end(), [](const Framed& a, const Framed& b) { return a.start < b.start; });
  const auto& runs = schedule(s).runs;
  for (uint32_t r = 0; r < runs.size(); ++r) {
    if (runs[r].directions() == 0 || runs[r].wide()) continue;
    const int64_t first = runs[r].first_event, last = first + runs[r].items;
    // A window can meet [first, last) only if it starts before `last` and, being at
    // most `longest` long, after `first - longest`.
    const int64_t from = longest >= kForever ? std::numeric_limits<int64_t>::min() : first - longest;
    auto lo =
        std::upper_bound(framed.begin(), framed.end(), from, [](int64_t v, const Framed& f) { return v < f.start; });
    auto hi =
        std::lower_bound(framed.begin(), framed.end(), last, [](const Framed& f, int64_t v) { return f.start < v; });
    candidates.clear();
    for (auto it = lo; it != hi; ++it) {
      if (it->end > first) candidates.push_back(it->index);
    }
    std::sort(candidates.begin(), candidates.end());
    for (uint32_t k : candidates) {
      const Window& w = windows_[windows[k]];
      const uint32_t pd = tile(w.receiver).physical;
      if ((uint32_t(topology_.direction(ps, pd)) & runs[r].directions()) == 0) continue;
      uint32_t k0, count;
      int64_t mux;
      if (!intersect(runs[r], topology_.time_to_mux(ps, pd), w, k0, count, mux)) continue;
      if (into != nullptr) {
        into[found] = {
            w.receiver, s, r, k0, count, w.id, runs[r].message, false, mux, runs[r].byte_address() + uint64_t(k0) * 4};
      }
      ++found;
    }
  }
  return found;
}

// Paired 64-bit items (section 6 and the project decision in docs/timing.md): item k of a
// send issued at `issue` reaches the early member's paired mux at issue + pttm + k; an
// item selected there at m is written at both members at m + 53 + 2r, by each member
// whose format is non-zero two events before the write.
void PhaseExecutor::select_paired() {
  const size_t first_paired = selections_.size();
  paired_of_sender_.assign(tiles_.size() + 1, static_cast<uint32_t>(first_paired));
  for (uint32_t s = 0; s < tiles_.size(); ++s) {
    paired_of_sender_[s] = static_cast<uint32_t>(selections_.size());
    const auto windows = paired_by_sender_.of(s);
    if (windows.empty()) continue;
    const auto& runs = schedule(s).runs;
    for (uint32_t r = 0; r < runs.size(); ++r) {
      if (runs[r].directions() == 0 || !runs[r].wide()) continue;
      for (const uint32_t id : windows) {
        const Window& w = windows_[id];
        const uint32_t ps = tile(s).physical, pe = tile(w.receiver).physical;
        if ((uint32_t(topology_.direction(ps, pe)) & runs[r].directions()) == 0) continue;
        uint32_t k0, count;
        int64_t mux;
        if (!intersect(runs[r], topology_.paired_leave_to_mux(ps, pe), w, k0, count, mux)) continue;
        selections_.push_back(
            {w.receiver, s, r, k0, count, w.id, runs[r].message, true, mux, runs[r].byte_address() + uint64_t(k0) * 8});
      }
    }
  }
  paired_of_sender_[tiles_.size()] = static_cast<uint32_t>(selections_.size());
  for (uint32_t k = static_cast<uint32_t>(first_paired); k < selections_.size(); ++k) {
    const auto sel = selections_[k];
    const uint32_t early = sel.receiver;
    std::vector<uint32_t> members{early};
    if (auto partner = participant(arch::Topology::partner(tile(early).physical))) {
      members.push_back(*partner);
    }
    std::vector<uint32_t> taken(members.size(), 0);
    for (size_t mi = 0; mi < members.size(); ++mi) {
      const uint32_t m = members[mi];
      const int64_t delay = topology_.paired_write_delay(tile(m).physical);
      // Split the items where this member's format changes (checked at write - 2).
      uint32_t item = 0;
      while (item < sel.items) {
        const int64_t write = sel.mux_event + item + delay;
        const uint32_t fmt = format_[m].at(write - 2);
        const int64_t change = format_[m].next_change_after(write - 2);
        const uint64_t span = change >= kForever ? sel.items - item : static_cast<uint64_t>(change - (write - 2));
        const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(span, sel.items - item));
        if (fmt != 0 && format_checked_.insert({m, sel.sender}).second) {
          check_format(m, early, sel.sender, fmt, write - 2);
        }
        if (fmt != 0) {
          paired_pieces_.push_back(piece(sel, k, m, item, n, write));
          taken[mi] += n;
        }
        item += n;
      }
    }
    for (size_t mi = 0; mi < members.size(); ++mi) {
      if (taken[mi] != sel.items) {
        hazard(HazardClass::Paired, members[mi], sel.mux_event, windows_[sel.window].instruction,
               "half pair: tile " + std::to_string(tile(members[mi]).logical) + " takes " + std::to_string(taken[mi]) +
                   " of " + std::to_string(sel.items) + " paired items from tile " +
                   std::to_string(tile(sel.sender).logical) + " (format zero, or not taking part)");
      }
    }
    if (members.size() == 1) {
      hazard(HazardClass::Paired, early, sel.mux_event, windows_[sel.window].instruction,
             "half pair: partner of tile " + std::to_string(tile(early).logical) + " does not take part in the phase");
    }
  }
}

// Pointer in effect at each write event; auto-increment per word (2 per paired item).
void PhaseExecutor::assign_addresses() {
  const size_t n = tiles_.size();
  const Groups paired_of_receiver =
      group_by(paired_pieces_.size(), n, [&](size_t p) { return paired_pieces_[p].receiver; });
  // (Only the traced receiver's task appends to the trace.)
  std::vector<ReceiverWrites> found(n);
  tbb::parallel_for(uint32_t{0}, static_cast<uint32_t>(n),
                    [&](uint32_t d) { assign_receiver(d, paired_of_receiver.of(d), found[d]); });
  // Laid end to end in receiver order, each receiver's block copied in parallel: the lists are
  // resized unwritten, so each block's pages are first touched by the task that copies it.
  std::vector<size_t> at(n + 1, 0);
  for (size_t d = 0; d < n; ++d) at[d + 1] = at[d] + found[d].writes.size();
  arch::resize_populated(out_.writes, at[n]);  // the phase's first writes
  arch::resize_populated(write_selection_, at[n]);
  tbb::parallel_for(size_t{0}, n, [&](size_t d) {
    std::copy(found[d].writes.begin(), found[d].writes.end(), out_.writes.begin() + at[d]);
    std::copy(found[d].selections.begin(), found[d].selections.end(), write_selection_.begin() + at[d]);
  });
  for (ReceiverWrites& f : found) std::move(f.hazards.begin(), f.hazards.end(), std::back_inserter(out_.hazards));
}

// Receiver d's pieces in write order, cut where its PIC pointer changes. They are copied out
// and sorted as values: a receiver's few thousand pieces then stay in cache.
void PhaseExecutor::assign_receiver(uint32_t d, std::span<const uint32_t> paired, ReceiverWrites& into) {
  thread_local std::vector<WritePiece> mine;
  mine.clear();
  for (const uint32_t k : selections_of_receiver_.of(d)) {
    if (k >= first_paired_) continue;
    const Selection& sel = selections_[k];
    mine.push_back(
        piece(sel, k, sel.receiver, 0, sel.items, sel.mux_event + topology_.write_delay(tile(sel.receiver).physical)));
  }
  for (const uint32_t p : paired) mine.push_back(paired_pieces_[p]);
  std::sort(mine.begin(), mine.end(), [](const WritePiece& x, const WritePiece& y) {
    return std::tie(x.write_event, x.sender, x.source_address, x.selection) <
           std::tie(y.write_event, y.sender, y.source_address, y.selection);
  });
  const auto& changes = pointer_[d].changes;
  size_t next_change = 0;
  std::optional<uint64_t> pointer;
  for (const WritePiece& piece : mine) {
    int64_t event = piece.write_event;
    uint32_t done = 0;
    while (done < piece.items) {
      while (next_change < changes.size() && changes[next_change].first <= event) {
        pointer = changes[next_change].second;
        ++next_change;
      }
      const int64_t limit = next_change < changes.size() ? changes[next_change].first : kForever;
      const uint32_t n = static_cast<uint32_t>(std::min<int64_t>(piece.items - done, limit - event));
      emit_write(d, piece, done, n, event, pointer, into);
      if (pointer) *pointer += uint64_t(n) * (piece.item_bytes / 4);
      done += n;
      event += n;
    }
  }
}

// Whether this piece continues the receiver's last write: the same sender, mux window and
// message, item width, and both addresses and the write events running on without a gap
// (a message cut into runs by its sender's own controls). The checks see the same windows,
// messages and words either way; only the number of writes changes.
bool PhaseExecutor::continues_last_write(const WritePiece& piece, uint64_t source, uint64_t address, int64_t event,
                                         const ReceiverWrites& into) const {
  if (into.writes.empty()) return false;
  const WriteRun& last = into.writes.back();
  return last.sender == piece.sender && last.item_bytes == piece.item_bytes && into.last_window == piece.window &&
         into.last_message == piece.message && uint64_t(last.address) + last.bytes == address &&
         uint64_t(last.source_address) + last.bytes == source &&
         last.first_write_event + last.bytes / last.item_bytes == event;
}

void PhaseExecutor::emit_write(uint32_t d, const WritePiece& piece, uint32_t offset, uint32_t items, int64_t event,
                               const std::optional<uint64_t>& pointer, ReceiverWrites& into) {
  const uint32_t instr = piece.instruction;
  const uint64_t source = piece.source_address + uint64_t(offset) * piece.item_bytes;
  const uint64_t bytes = uint64_t(items) * piece.item_bytes;
  if (!pointer) {
    into.hazards.push_back(make_hazard(HazardClass::NoPointer, d, event, instr,
                                       std::to_string(items) + " item(s) from tile " +
                                           std::to_string(tile(piece.sender).logical) + " written at event " +
                                           std::to_string(event) + " before any PIC pointer control in this phase"));
    return;
  }
  const uint64_t address = uint64_t(tile(d).incoming_base) + 4 * *pointer;
  if (address < machine_.sram_base || address + bytes > machine_.sram_end || source < machine_.sram_base ||
      source + bytes > machine_.sram_end) {
    const bool write_bad = address < machine_.sram_base || address + bytes > machine_.sram_end;
    into.hazards.push_back(
        make_hazard(HazardClass::WriteOutOfRange, write_bad ? d : piece.sender, event,
                    write_bad ? instr : schedule(piece.sender).runs[piece.run].instruction,
                    write_bad ? "write " + hex(address) + ".." + hex(address + bytes) + " outside SRAM " +
                                    hex(machine_.sram_base) + ".." + hex(machine_.sram_end)
                              : "send reads " + hex(source) + ".." + hex(source + bytes) + " outside SRAM"));
    return;
  }
  const int64_t last_event = event + items - 1;
  if (last_event > out_.tile_horizon[d]) {
    const int64_t late = std::max(event, out_.tile_horizon[d] + 1);
    into.hazards.push_back(make_hazard(HazardClass::InstructionAccess, d, late, instr,
                                       "write at event " + std::to_string(late) + " after the row ended at " +
                                           std::to_string(out_.tile_horizon[d]) +
                                           ": races the supervisor's and workers' own loads and stores"));
  }
  const int64_t mux_event = piece.mux_event + (event - piece.write_event);
  if (continues_last_write(piece, source, address, event, into)) {
    into.writes.back().bytes += static_cast<uint32_t>(bytes);
    into.writes.back().last_run = piece.run;
  } else {
    WriteRun w;
    w.receiver = d;
    w.sender = piece.sender;
    w.address = static_cast<uint32_t>(address);
    w.source_address = static_cast<uint32_t>(source);
    w.bytes = static_cast<uint32_t>(bytes);
    w.item_bytes = piece.item_bytes;
    w.first_write_event = event;
    w.first_mux_event = mux_event;
    w.run = piece.run;
    w.last_run = piece.run;
    w.source_offset = piece.run_offset + offset * piece.item_bytes;
    into.writes.push_back(w);
    into.selections.push_back(piece.selection);
    into.last_window = piece.window;
    into.last_message = piece.message;
  }
  if (trace_index_ && *trace_index_ == d) {
    trace(d, event,
          "write " + std::to_string(bytes) + " bytes at " + hex(address) + " from tile " +
              std::to_string(tile(piece.sender).logical) + " " + hex(source) + " (selected at mux event " +
              std::to_string(mux_event) + ")");
  }
}

void PhaseExecutor::finish() {
  for (auto h : out_.tile_horizon) out_.horizon = std::max(out_.horizon, h);
  // Apply order: by receiver, then write event, so a later write to the same word wins.
  // assign_addresses emits writes in nearly that order already.
  const auto before = [&](const WriteRun& x, const WriteRun& y) {
    return std::tie(x.receiver, x.first_write_event, x.address) < std::tie(y.receiver, y.first_write_event, y.address);
  };
  if (!std::is_sorted(out_.writes.begin(), out_.writes.end(), before)) {
    std::stable_sort(out_.writes.begin(), out_.writes.end(), before);
  }
  std::stable_sort(out_.hazards.begin(), out_.hazards.end(), [](const ModelHazard& a, const ModelHazard& b) {
    return std::make_tuple(a.event, a.tile, static_cast<int>(a.kind), a.row_offset, a.detail) <
           std::make_tuple(b.event, b.tile, static_cast<int>(b.kind), b.row_offset, b.detail);
  });
  std::stable_sort(out_.trace.begin(), out_.trace.end(),
                   [](const TraceLine& a, const TraceLine& b) { return a.event < b.event; });
}

}  // namespace phase_executor

PhaseOutcome execute_phase(const arch::MachineDescription& machine, const arch::Topology& topology,
                           std::span<const PhaseTile> tiles, std::optional<uint32_t> trace_logical) {
  return phase_executor::PhaseExecutor(machine, topology, tiles, trace_logical).run();
}

}  // namespace lockstep::model
