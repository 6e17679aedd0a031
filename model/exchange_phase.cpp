#include "model/exchange_phase.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include <tbb/parallel_for.h>

#include "io/hex.hpp"
#include "model/memory_elements.hpp"

namespace lockstep::model {
namespace {

using arch::hex;

constexpr int64_t kForever = std::numeric_limits<int64_t>::max() / 4;
constexpr uint32_t kNoInstruction = UINT32_MAX;

// A register's value over the phase: initial value, then changes at events.
struct Timeline {
  uint32_t initial = 0;
  std::vector<std::pair<int64_t, uint32_t>> changes;  // sorted by event, last one wins

  uint32_t at(int64_t event) const {
    auto it = std::upper_bound(changes.begin(), changes.end(), event,
                               [](int64_t e, const auto& c) { return e < c.first; });
    return it == changes.begin() ? initial : std::prev(it)->second;
  }
  int64_t next_change_after(int64_t event) const {
    auto it = std::upper_bound(changes.begin(), changes.end(), event,
                               [](int64_t e, const auto& c) { return e < c.first; });
    return it == changes.end() ? kForever : it->first;
  }
};

// An interval in which a tile's (ordinary or paired) mux selects one sender.
struct Window {
  uint32_t receiver = 0;
  int64_t start = 0;
  int64_t end = kForever;
  uint32_t instruction = kNoInstruction;  // the control that opened it
  uint32_t id = 0;
};

// Words of one run selected by one window.
struct Selection {
  uint32_t receiver = 0;  // for paired: the early member whose paired mux selected
  uint32_t sender = 0;
  uint32_t run = 0;       // index in the sender's schedule
  uint32_t first_item = 0;
  uint32_t items = 0;
  int64_t mux_event = 0;  // event item first_item was selected
  uint32_t window = 0;
  bool paired = false;
};

// Selected items as they reach one receiver's SRAM, before the pointer gives addresses.
struct WritePiece {
  uint32_t receiver = 0;
  uint32_t sender = 0;
  uint64_t source_address = 0;
  uint32_t items = 0;
  uint32_t item_bytes = 4;
  int64_t write_event = 0;
  int64_t mux_event = 0;
  uint32_t selection = 0;
};

class PhaseExecutor {
 public:
  PhaseExecutor(const arch::MachineDescription& machine, const arch::Topology& topology,
                std::span<const PhaseTile> tiles, std::optional<uint32_t> trace)
      : machine_(machine), topology_(topology), tiles_(tiles) {
    index_of_physical_.assign(machine.chip_tiles, -1);
    for (uint32_t i = 0; i < tiles.size(); ++i) {
      index_of_physical_.at(tiles[i].physical) = static_cast<int32_t>(i);
      if (trace && tiles[i].logical == *trace) trace_index_ = i;
    }
  }

  PhaseOutcome run() {
    schedule_rows();
    build_timelines();
    check_controls();
    select_ordinary();
    select_paired();
    assign_addresses();
    writes_of_.resize(tiles_.size());
    for (size_t k = 0; k < out_.writes.size(); ++k) writes_of_[out_.writes[k].receiver].push_back(k);
    check_messages();
    check_receive_overlaps();
    check_elements();
    check_paired();
    check_double_writes();
    check_open_muxes();
    finish();
    return std::move(out_);
  }

 private:
  const arch::MachineDescription& machine_;
  const arch::Topology& topology_;
  std::span<const PhaseTile> tiles_;
  std::vector<int32_t> index_of_physical_;
  std::optional<uint32_t> trace_index_;
  PhaseOutcome out_;

  std::vector<Timeline> xpic_, paired_, pointer_, format_;
  std::vector<std::vector<uint32_t>> pointer_instr_;  // instruction of each pointer change
  std::vector<std::vector<uint32_t>> format_instr_;   // instruction of each format change
  std::set<std::pair<uint32_t, uint32_t>> format_checked_;  // (member, sender) pairs checked
  std::vector<std::vector<Window>> ordinary_by_sender_, paired_by_sender_;
  std::vector<Window> windows_;  // every window, by id
  std::vector<Selection> selections_;
  std::vector<WritePiece> pieces_;
  std::vector<uint32_t> write_selection_;
  std::vector<std::vector<size_t>> writes_of_;  // write indices per receiver

  const PhaseTile& tile(uint32_t i) const { return tiles_[i]; }
  const RowSchedule& schedule(uint32_t i) const { return out_.schedules[i]; }

  std::optional<uint32_t> participant(uint32_t physical) const {
    if (physical >= index_of_physical_.size()) return std::nullopt;
    const int32_t i = index_of_physical_[physical];
    if (i < 0) return std::nullopt;
    return static_cast<uint32_t>(i);
  }

  void hazard(HazardClass kind, uint32_t t, int64_t event, uint32_t instruction,
              std::string detail) {
    out_.hazards.push_back(make_hazard(kind, t, event, instruction, std::move(detail)));
  }

  ModelHazard make_hazard(HazardClass kind, uint32_t t, int64_t event, uint32_t instruction,
                          std::string detail) const {
    ModelHazard h;
    h.kind = kind;
    h.tile = tile(t).logical;
    h.event = event;
    if (instruction != kNoInstruction && instruction < schedule(t).instructions.size()) {
      const auto& in = schedule(t).instructions[instruction];
      h.row_offset = in.byte_offset;
      h.instruction = arch::describe(in.instruction);
    } else {
      h.instruction = "(none: CSR state before the row)";
    }
    h.detail = std::move(detail);
    return h;
  }

  void trace(uint32_t t, int64_t event, std::string text) {
    if (trace_index_ && *trace_index_ == t) out_.trace.push_back({event, std::move(text)});
  }

  void schedule_rows() {
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
                            : arch::describe(s.instructions[issue.instruction].instruction);
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
                "send " + std::to_string(r.items) + " items from " + hex(r.byte_address()) +
                    " sctl " + std::to_string(r.sctl) + " (issued at " +
                    std::to_string(r.issue_event) + ", message " + std::to_string(r.message) +
                    ")");
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
  uint32_t paired_mux_of_muxpair(uint32_t muxpair, uint32_t physical) const {
    if (muxpair >= machine_.chip_tiles) return muxpair;  // neutral, host endpoint
    return muxpair ^ 2u ^ (physical & 2u);
  }

  void build_timelines() {
    const size_t n = tiles_.size();
    xpic_.resize(n);
    paired_.resize(n);
    pointer_.resize(n);
    format_.resize(n);
    pointer_instr_.resize(n);
    format_instr_.resize(n);
    ordinary_by_sender_.resize(n);
    paired_by_sender_.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
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
      add_windows(i, xpic_[i], xpic_instr, false);
      add_windows(i, paired_[i], paired_instr, true);
    }
  }

  // Turns a mux timeline into windows on participating senders.
  void add_windows(uint32_t receiver, const Timeline& line, const std::vector<uint32_t>& instr,
                   bool paired) {
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
      Window w{receiver, start, end, opened_by, static_cast<uint32_t>(windows_.size())};
      windows_.push_back(w);
      (paired ? paired_by_sender_ : ordinary_by_sender_)[*sender].push_back(w);
    };
    for (size_t k = 0; k < line.changes.size(); ++k) {
      close(line.changes[k].first);
      start = line.changes[k].first;
      value = line.changes[k].second;
      opened_by = instr[k];
    }
    close(kForever);
  }

  // Hazards 8 and 9: one PIC and one XPIC control per event; none at a message's start.
  void check_controls() {
    for (uint32_t i = 0; i < tiles_.size(); ++i) {
      const auto& controls = schedule(i).controls;
      // Controls are sorted by event: per event, PIC controls then XPIC ones, in row order.
      std::vector<uint32_t> pic, xpic;
      for (size_t a = 0; a < controls.size();) {
        size_t b = a;
        pic.clear();
        xpic.clear();
        for (; b < controls.size() && controls[b].event == controls[a].event; ++b) {
          (is_xpic(controls[b].kind) ? xpic : pic).push_back(controls[b].instruction);
        }
        for (const auto* list : {&pic, &xpic}) {
          if (list->size() > 1) {
            hazard(HazardClass::SimultaneousControls, i, controls[a].event, (*list)[1],
                   std::to_string(list->size()) + (list == &xpic ? " XPIC" : " PIC") +
                       " controls at event " + std::to_string(controls[a].event));
          }
        }
        a = b;
      }
      for (const auto& r : schedule(i).runs) {
        const auto& in = schedule(i).instructions[r.instruction].instruction;
        if (in.op != arch::Opcode::Send) continue;
        auto from = std::lower_bound(controls.begin(), controls.end(), r.issue_event,
                                     [](const Control& c, int64_t e) { return c.event < e; });
        for (auto c_it = from; c_it != controls.end() && c_it->event <= r.first_event; ++c_it) {
          const Control& c = *c_it;
          {
            hazard(HazardClass::ControlAtMessageStart, i, c.event, c.instruction,
                   "control at event " + std::to_string(c.event) + ", the " +
                       (c.event == r.issue_event ? "issue" : "first-word") +
                       " event of the message sent by the instruction at row offset " +
                       std::to_string(schedule(i).instructions[r.instruction].byte_offset));
          }
        }
      }
    }
  }

  // Intersects [first, first + items) shifted by `latency` with a window.
  static bool intersect(const SendRun& r, int64_t latency, const Window& w, uint32_t& k0,
                        uint32_t& count, int64_t& mux) {
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

  // Per sender, its windows moved into the sender's frame (start and end minus the route
  // latency) and sorted, so each run meets only the windows it can intersect; candidates
  // are then taken in the windows' original order, so selections keep a fixed order.
  void select_ordinary() {
    struct Framed {
      int64_t start, end;
      uint32_t index;  // in ordinary_by_sender_[s]
    };
    std::vector<Framed> framed;
    std::vector<uint32_t> candidates;
    for (uint32_t s = 0; s < tiles_.size(); ++s) {
      const auto& windows = ordinary_by_sender_[s];
      if (windows.empty()) continue;
      const uint32_t ps = tile(s).physical;
      framed.clear();
      int64_t longest = 0;
      for (uint32_t k = 0; k < windows.size(); ++k) {
        const Window& w = windows[k];
        const uint32_t pd = tile(w.receiver).physical;
        if (ps == pd) continue;
        const int64_t latency = topology_.time_to_mux(ps, pd);
        const int64_t end = w.end >= kForever ? kForever : w.end - latency;
        framed.push_back({w.start - latency, end, k});
        longest = std::max(longest, end >= kForever ? kForever : end - (w.start - latency));
      }
      std::sort(framed.begin(), framed.end(),
                [](const Framed& a, const Framed& b) { return a.start < b.start; });
      const auto& runs = schedule(s).runs;
      for (uint32_t r = 0; r < runs.size(); ++r) {
        if (runs[r].directions() == 0 || runs[r].wide()) continue;
        const int64_t first = runs[r].first_event, last = first + runs[r].items;
        // A window can meet [first, last) only if it starts before `last` and, being at
        // most `longest` long, after `first - longest`.
        const int64_t from = longest >= kForever ? std::numeric_limits<int64_t>::min() : first - longest;
        auto lo = std::upper_bound(framed.begin(), framed.end(), from,
                                   [](int64_t v, const Framed& f) { return v < f.start; });
        auto hi = std::lower_bound(framed.begin(), framed.end(), last,
                                   [](const Framed& f, int64_t v) { return f.start < v; });
        candidates.clear();
        for (auto it = lo; it != hi; ++it) {
          if (it->end > first) candidates.push_back(it->index);
        }
        std::sort(candidates.begin(), candidates.end());
        for (uint32_t k : candidates) {
          const Window& w = windows[k];
          const uint32_t pd = tile(w.receiver).physical;
          if ((uint32_t(topology_.direction(ps, pd)) & runs[r].directions()) == 0) continue;
          uint32_t k0, count;
          int64_t mux;
          if (!intersect(runs[r], topology_.time_to_mux(ps, pd), w, k0, count, mux)) continue;
          selections_.push_back({w.receiver, s, r, k0, count, mux, w.id, false});
        }
      }
    }
    for (uint32_t k = 0; k < selections_.size(); ++k) {
      const auto& sel = selections_[k];
      const auto& run = schedule(sel.sender).runs[sel.run];
      pieces_.push_back({sel.receiver, sel.sender, run.byte_address() + uint64_t(sel.first_item) * 4,
                         sel.items, 4, sel.mux_event + topology_.write_delay(tile(sel.receiver).physical),
                         sel.mux_event, k});
    }
  }

  // Paired 64-bit items (section 6 and the project decision in docs/timing.md): item k of a
  // send issued at `issue` reaches the early member's paired mux at issue + pttm + k; an
  // item selected there at m is written at both members at m + 53 + 2r, by each member
  // whose format is non-zero two events before the write.
  void select_paired() {
    const size_t first_paired = selections_.size();
    for (uint32_t s = 0; s < tiles_.size(); ++s) {
      const auto& windows = paired_by_sender_[s];
      if (windows.empty()) continue;
      const auto& runs = schedule(s).runs;
      for (uint32_t r = 0; r < runs.size(); ++r) {
        if (runs[r].directions() == 0 || !runs[r].wide()) continue;
        for (const auto& w : windows) {
          const uint32_t ps = tile(s).physical, pe = tile(w.receiver).physical;
          if ((uint32_t(topology_.direction(ps, pe)) & runs[r].directions()) == 0) continue;
          uint32_t k0, count;
          int64_t mux;
          if (!intersect(runs[r], topology_.paired_leave_to_mux(ps, pe), w, k0, count, mux)) continue;
          selections_.push_back({w.receiver, s, r, k0, count, mux, w.id, true});
        }
      }
    }
    for (uint32_t k = static_cast<uint32_t>(first_paired); k < selections_.size(); ++k) {
      const auto sel = selections_[k];
      const auto& run = schedule(sel.sender).runs[sel.run];
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
          const uint64_t span = change >= kForever ? sel.items - item
                                                   : static_cast<uint64_t>(change - (write - 2));
          const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(span, sel.items - item));
          if (fmt != 0 && format_checked_.insert({m, sel.sender}).second) {
            check_format(m, early, sel.sender, fmt, write - 2);
          }
          if (fmt != 0) {
            pieces_.push_back({m, sel.sender, run.byte_address() + uint64_t(sel.first_item + item) * 8,
                               n, 8, write, sel.mux_event + item, k});
            taken[mi] += n;
          }
          item += n;
        }
      }
      for (size_t mi = 0; mi < members.size(); ++mi) {
        if (taken[mi] != sel.items) {
          hazard(HazardClass::Paired, members[mi], sel.mux_event, windows_[sel.window].instruction,
                 "half pair: tile " + std::to_string(tile(members[mi]).logical) + " takes " +
                     std::to_string(taken[mi]) + " of " + std::to_string(sel.items) +
                     " paired items from tile " + std::to_string(tile(sel.sender).logical) +
                     " (format zero, or not taking part)");
        }
      }
      if (members.size() == 1) {
        hazard(HazardClass::Paired, early, sel.mux_event, windows_[sel.window].instruction,
               "half pair: partner of tile " + std::to_string(tile(early).logical) +
                   " does not take part in the phase");
      }
    }
  }

  // The two forms of a paired receive's format (spec section 6) told apart: a row's format
  // control carries the route direction dir(s, member); the CSR form (INCOMING_FORMAT set
  // before the row, no format control yet) names the tile's half: 1 early (its own paired
  // mux selects the sender), 2 waiting (its partner's does). A value that does not fit its
  // form is hazard 10.
  void check_format(uint32_t member, uint32_t early, uint32_t sender, uint32_t format, int64_t event) {
    const Timeline& line = format_[member];
    const auto after = std::upper_bound(line.changes.begin(), line.changes.end(), event,
                                        [](int64_t e, const auto& c) { return e < c.first; });
    const std::string who = "tile " + std::to_string(tile(member).logical);
    if (after == line.changes.begin()) {
      const uint32_t half = member == early ? 1 : 2;
      if (format == half) return;
      hazard(HazardClass::Paired, member, event, kNoInstruction,
             "INCOMING_FORMAT " + std::to_string(format) + " on " + who + ", which is the " +
                 (half == 1 ? "early half (1): its own paired mux selects" : "waiting half (2): its partner's paired mux selects") +
                 " tile " + std::to_string(tile(sender).logical));
      return;
    }
    const auto direction = static_cast<uint32_t>(topology_.direction(tile(sender).physical, tile(member).physical));
    if (format == direction) return;
    const uint32_t instruction = format_instr_[member][static_cast<size_t>(after - line.changes.begin()) - 1];
    hazard(HazardClass::Paired, member, event, instruction,
           "format control " + std::to_string(format) + " on " + who + ", but a row's format carries the route " +
               "direction dir(s, d) = " + std::to_string(direction) + " from tile " + std::to_string(tile(sender).logical));
  }

  // Pointer in effect at each write event; auto-increment per word (2 per paired item).
  void assign_addresses() {
    std::vector<std::vector<uint32_t>> by_receiver(tiles_.size());
    for (uint32_t p = 0; p < pieces_.size(); ++p) by_receiver[pieces_[p].receiver].push_back(p);
    for (uint32_t d = 0; d < tiles_.size(); ++d) {
      auto& list = by_receiver[d];
      std::sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
        const auto& x = pieces_[a];
        const auto& y = pieces_[b];
        return std::tie(x.write_event, x.sender, x.source_address) <
               std::tie(y.write_event, y.sender, y.source_address);
      });
      const auto& changes = pointer_[d].changes;
      size_t next_change = 0;
      std::optional<uint64_t> pointer;
      for (uint32_t p : list) {
        const WritePiece piece = pieces_[p];
        int64_t event = piece.write_event;
        uint32_t done = 0;
        while (done < piece.items) {
          while (next_change < changes.size() && changes[next_change].first <= event) {
            pointer = changes[next_change].second;
            ++next_change;
          }
          const int64_t limit = next_change < changes.size() ? changes[next_change].first : kForever;
          const uint32_t n = static_cast<uint32_t>(
              std::min<int64_t>(piece.items - done, limit - event));
          emit_write(d, piece, done, n, event, pointer);
          if (pointer) *pointer += uint64_t(n) * (piece.item_bytes / 4);
          done += n;
          event += n;
        }
      }
    }
  }

  void emit_write(uint32_t d, const WritePiece& piece, uint32_t offset, uint32_t items,
                  int64_t event, const std::optional<uint64_t>& pointer) {
    const auto& sel = selections_[piece.selection];
    const uint32_t instr = windows_[sel.window].instruction;
    const uint64_t source = piece.source_address + uint64_t(offset) * piece.item_bytes;
    const uint64_t bytes = uint64_t(items) * piece.item_bytes;
    if (!pointer) {
      hazard(HazardClass::NoPointer, d, event, instr,
             std::to_string(items) + " item(s) from tile " + std::to_string(tile(piece.sender).logical) +
                 " written at event " + std::to_string(event) +
                 " before any PIC pointer control in this phase");
      return;
    }
    const uint64_t address = uint64_t(tile(d).incoming_base) + 4 * *pointer;
    if (address < machine_.sram_base || address + bytes > machine_.sram_end ||
        source < machine_.sram_base || source + bytes > machine_.sram_end) {
      const bool write_bad = address < machine_.sram_base || address + bytes > machine_.sram_end;
      hazard(HazardClass::WriteOutOfRange, write_bad ? d : piece.sender, event,
             write_bad ? instr : schedule(piece.sender).runs[sel.run].instruction,
             write_bad ? "write " + hex(address) + ".." + hex(address + bytes) +
                             " outside SRAM " + hex(machine_.sram_base) + ".." + hex(machine_.sram_end)
                       : "send reads " + hex(source) + ".." + hex(source + bytes) + " outside SRAM");
      return;
    }
    const int64_t last_event = event + items - 1;
    if (last_event > out_.tile_horizon[d]) {
      const int64_t late = std::max(event, out_.tile_horizon[d] + 1);
      hazard(HazardClass::InstructionAccess, d, late, instr,
             "write at event " + std::to_string(late) + " after the row ended at " +
                 std::to_string(out_.tile_horizon[d]) +
                 ": races the supervisor's and workers' own loads and stores");
    }
    WriteRun w;
    w.receiver = d;
    w.sender = piece.sender;
    w.address = static_cast<uint32_t>(address);
    w.source_address = static_cast<uint32_t>(source);
    w.bytes = static_cast<uint32_t>(bytes);
    w.item_bytes = piece.item_bytes;
    w.first_write_event = event;
    w.first_mux_event = piece.mux_event + (event - piece.write_event);
    w.run = sel.run;
    w.source_offset = static_cast<uint32_t>(source - schedule(piece.sender).runs[sel.run].byte_address());
    out_.writes.push_back(w);
    write_selection_.push_back(piece.selection);
    if (trace_index_ && *trace_index_ == d) {
      trace(d, event,
            "write " + std::to_string(bytes) + " bytes at " + hex(address) + " from tile " +
              std::to_string(tile(piece.sender).logical) + " " + hex(source) +
              " (selected at mux event " + std::to_string(w.first_mux_event) + ")");
    }
  }

  // Hazards 5 and 12: a message must be taken whole by every tile that takes any of it.
  void check_messages() {
    struct Taken {
      uint64_t items = 0;
      uint32_t window = 0;
      int64_t event = 0;
    };
    struct Take {
      uint32_t sender, message, receiver, selection;
    };
    std::vector<Take> takes;
    takes.reserve(selections_.size());
    std::vector<uint32_t> first_message_of_window(windows_.size(), UINT32_MAX);
    for (uint32_t k = 0; k < selections_.size(); ++k) {
      const auto& sel = selections_[k];
      const uint32_t message = schedule(sel.sender).runs[sel.run].message;
      takes.push_back({sel.sender, message, sel.receiver, k});
      first_message_of_window[sel.window] = std::min(first_message_of_window[sel.window], message);
    }
    std::sort(takes.begin(), takes.end(), [](const Take& a, const Take& b) {
      return std::tie(a.sender, a.message, a.receiver, a.selection) <
             std::tie(b.sender, b.message, b.receiver, b.selection);
    });
    // (sender, message, receiver) -> items taken, window and event of its first selection.
    std::vector<std::pair<std::tuple<uint32_t, uint32_t, uint32_t>, Taken>> taken;
    for (size_t a = 0; a < takes.size();) {
      const Take& head = takes[a];
      Taken t;
      t.window = selections_[head.selection].window;
      t.event = selections_[head.selection].mux_event;
      size_t b = a;
      for (; b < takes.size() && takes[b].sender == head.sender && takes[b].message == head.message &&
             takes[b].receiver == head.receiver;
           ++b) {
        t.items += selections_[takes[b].selection].items;
      }
      taken.push_back({{head.sender, head.message, head.receiver}, t});
      a = b;
    }
    std::vector<std::vector<uint64_t>> items_of_message(tiles_.size());
    for (uint32_t s = 0; s < tiles_.size(); ++s) {
      auto& items = items_of_message[s];
      for (const auto& r : schedule(s).runs) {
        if (r.directions() == 0) continue;
        if (r.message >= items.size()) items.resize(r.message + 1, 0);
        items[r.message] += r.items;
      }
    }
    auto message_items = [&](uint32_t s, uint32_t message) -> uint64_t {
      return message < items_of_message[s].size() ? items_of_message[s][message] : 0;
    };
    for (const auto& [key, t] : taken) {
      const auto [s, message, d] = key;
      const uint64_t total = message_items(s, message);
      if (t.items >= total) continue;
      const bool spill = first_message_of_window[t.window] < message;
      const std::string what = std::to_string(t.items) + " of " + std::to_string(total) +
                               " items of message " + std::to_string(message) + " from tile " +
                               std::to_string(tile(s).logical);
      if (spill) {
        hazard(HazardClass::MuxLeftOpen, d, t.event, windows_[t.window].instruction,
               "mux window stays open past the previous message and takes " + what);
      } else {
        hazard(HazardClass::StreamConflict, d, t.event, windows_[t.window].instruction,
               "takes only " + what + ": the rest is lost");
      }
    }
  }

  // Hazard 7: receive windows (mux and write) of one tile must not overlap.
  void check_receive_overlaps() {
    struct Interval {
      int64_t start, end;  // inclusive
      uint32_t window;
      uint32_t sender, message;
    };
    // Per receiver, one interval per (window, sender, message): the span of its pieces.
    struct Piece {
      uint32_t receiver;
      Interval interval;
    };
    auto merge = [&](const std::vector<Piece>& pieces) {
      std::vector<std::vector<Interval>> by_receiver(tiles_.size());
      for (const Piece& p : pieces) by_receiver[p.receiver].push_back(p.interval);
      tbb::parallel_for(size_t{0}, by_receiver.size(), [&](size_t d) {
        auto& list = by_receiver[d];
        const auto same = [](const Interval& a, const Interval& b) {
          return a.window == b.window && a.sender == b.sender && a.message == b.message;
        };
        std::stable_sort(list.begin(), list.end(), [](const Interval& a, const Interval& b) {
          return std::tie(a.window, a.sender, a.message) < std::tie(b.window, b.sender, b.message);
        });
        size_t kept = 0;
        for (size_t a = 0; a < list.size(); ++kept) {
          Interval merged = list[a];
          size_t b = a + 1;
          for (; b < list.size() && same(list[b], merged); ++b) {
            merged.start = std::min(merged.start, list[b].start);
            merged.end = std::max(merged.end, list[b].end);
          }
          list[kept] = merged;
          a = b;
        }
        list.resize(kept);
        std::sort(list.begin(), list.end(), [](const Interval& a, const Interval& b) {
          return std::tie(a.start, a.end, a.window, a.sender, a.message) <
                 std::tie(b.start, b.end, b.window, b.sender, b.message);
        });
      });
      return by_receiver;
    };
    std::vector<Piece> pieces;
    pieces.reserve(selections_.size());
    for (const auto& sel : selections_) {
      pieces.push_back({sel.receiver, Interval{sel.mux_event, sel.mux_event + sel.items - 1, sel.window, sel.sender,
                                               schedule(sel.sender).runs[sel.run].message}});
    }
    const auto mux = merge(pieces);
    pieces.clear();
    for (size_t k = 0; k < out_.writes.size(); ++k) {
      const auto& w = out_.writes[k];
      const auto& sel = selections_[write_selection_[k]];
      pieces.push_back({w.receiver, Interval{w.first_write_event, w.first_write_event + w.bytes / w.item_bytes - 1,
                                             sel.window, sel.sender, schedule(sel.sender).runs[sel.run].message}});
    }
    const auto write = merge(pieces);
    auto check = [&](uint32_t d, const std::vector<Interval>& list, const char* what) {
      int64_t reach = std::numeric_limits<int64_t>::min();
      for (const auto& iv : list) {
        if (iv.start <= reach) {
          hazard(HazardClass::OverlappingReceives, d, iv.start, windows_[iv.window].instruction,
                 std::string(what) + " window of message " + std::to_string(iv.message) +
                     " from tile " + std::to_string(tile(iv.sender).logical) + " starts at " +
                     std::to_string(iv.start) + " inside another receive (until " +
                     std::to_string(reach) + ")");
        }
        reach = std::max(reach, iv.end);
      }
    };
    for (uint32_t d = 0; d < tiles_.size(); ++d) {
      check(d, mux[d], "mux");
      check(d, write[d], "write");
    }
  }

  // Hazards 1 and 2: per memory element, row fetch vs data and send reads vs receive writes.
  // Tiles are checked in parallel; their hazards are appended in tile order, as one thread would.
  void check_elements() {
    std::vector<std::vector<ModelHazard>> found(tiles_.size());
    tbb::parallel_for(uint32_t{0}, static_cast<uint32_t>(tiles_.size()), [&](uint32_t i) {
      std::map<uint32_t, std::pair<int64_t, uint32_t>> sent, received;  // element -> (event, instr)
      for (const auto& r : schedule(i).runs) {
        if (r.directions() == 0) continue;
        for (uint32_t key : element_keys(machine_, r.byte_address(), r.bytes())) {
          sent.try_emplace(key, r.issue_event, r.instruction);
        }
      }
      for (size_t k : writes_of_[i]) {
        const auto& w = out_.writes[k];
        const auto& sel = selections_[write_selection_[k]];
        for (uint32_t key : element_keys(machine_, w.address, w.bytes)) {
          auto [it, inserted] = received.try_emplace(key, w.first_write_event, windows_[sel.window].instruction);
          if (!inserted && w.first_write_event < it->second.first) {
            it->second = {w.first_write_event, windows_[sel.window].instruction};
          }
        }
      }
      if (tile(i).has_row) {
        const uint64_t fetch_end = uint64_t(tile(i).row_address) + schedule(i).row_bytes +
                                   machine_.fetch_lookahead_bytes;
        for (uint32_t key : element_keys(machine_, tile(i).row_address, fetch_end - tile(i).row_address)) {
          for (const auto* m : {&sent, &received}) {
            auto it = m->find(key);
            if (it == m->end()) continue;
            found[i].push_back(make_hazard(HazardClass::RowFetchConflict, i, it->second.first, it->second.second,
                   std::string(m == &sent ? "sent" : "received") +
                       " data shares a memory element with the executing row " +
                       hex(tile(i).row_address) + ".." + hex(fetch_end) + " (with fetch look-ahead)"));
          }
        }
      }
      for (const auto& [key, s] : sent) {
        auto it = received.find(key);
        if (it == received.end()) continue;
        found[i].push_back(make_hazard(HazardClass::SendReceiveConflict, i, std::max(s.first, it->second.first), it->second.second,
               "a send's read window and a receive's write window share a memory element in "
               "this phase"));
      }
    });
    for (auto& list : found) {
      for (auto& h : list) out_.hazards.push_back(std::move(h));
    }
  }

  // Hazard 10: format changes vs paired mux controls; the sender's partner is busy.
  void check_paired() {
    for (uint32_t i = 0; i < tiles_.size(); ++i) {
      std::set<int64_t> paired_events;
      auto collect = [&](uint32_t t) {
        for (const auto& c : schedule(t).controls) {
          if (c.kind == ControlKind::PairedXpic) paired_events.insert(c.event);
        }
      };
      collect(i);
      if (auto p = participant(arch::Topology::partner(tile(i).physical))) collect(*p);
      for (const auto& c : schedule(i).controls) {
        if (c.kind == ControlKind::PicFormat && paired_events.count(c.event)) {
          hazard(HazardClass::Paired, i, c.event, c.instruction,
                 "format change on the event of a paired XPIC source or teardown");
        }
      }
      // A wide send makes the partner busy from its issue to this row's horizon.
      const auto partner = participant(arch::Topology::partner(tile(i).physical));
      if (!partner) continue;
      for (const auto& r : schedule(i).runs) {
        if (!r.wide() || r.directions() == 0) continue;
        const int64_t busy_from = r.issue_event, busy_to = out_.tile_horizon[i];
        for (const auto& pr : schedule(*partner).runs) {
          if (pr.directions() != 0 && pr.first_event <= busy_to && pr.first_event + pr.items > busy_from) {
            hazard(HazardClass::Paired, *partner, std::max(pr.first_event, busy_from), pr.instruction,
                   "sends while its partner tile " + std::to_string(tile(i).logical) +
                       " sends 64-bit items (busy " + std::to_string(busy_from) + ".." +
                       std::to_string(busy_to) + ")");
            break;
          }
        }
        for (size_t k : writes_of_[*partner]) {
          const auto& w = out_.writes[k];
          const int64_t last = w.first_write_event + w.bytes / w.item_bytes - 1;
          if (w.first_write_event <= busy_to && last >= busy_from) {
            hazard(HazardClass::Paired, *partner, std::max(w.first_write_event, busy_from),
                   windows_[selections_[write_selection_[k]].window].instruction,
                   "receives while its partner tile " + std::to_string(tile(i).logical) +
                       " sends 64-bit items");
            break;
          }
        }
        break;  // one report per sender row
      }
    }
  }

  // A word written twice in one phase.
  void check_double_writes() {
    for (uint32_t d = 0; d < tiles_.size(); ++d) {
      auto list = writes_of_[d];
      std::sort(list.begin(), list.end(), [&](size_t a, size_t b) {
        const auto& x = out_.writes[a];
        const auto& y = out_.writes[b];
        return std::tie(x.address, x.first_write_event) < std::tie(y.address, y.first_write_event);
      });
      uint64_t reach = 0;
      size_t reach_write = SIZE_MAX;
      for (size_t k : list) {
        const auto& w = out_.writes[k];
        if (reach_write != SIZE_MAX && w.address < reach) {
          const auto& other = out_.writes[reach_write];
          const int64_t event = std::max(w.first_write_event, other.first_write_event);
          hazard(HazardClass::DoubleWrite, d, event,
                 windows_[selections_[write_selection_[k]].window].instruction,
                 "word " + hex(w.address) + " written twice in the phase (from tiles " +
                     std::to_string(tile(other.sender).logical) + " and " +
                     std::to_string(tile(w.sender).logical) + ")");
        }
        if (reach_write == SIZE_MAX || uint64_t(w.address) + w.bytes > reach) {
          reach = uint64_t(w.address) + w.bytes;
          reach_write = k;
        }
      }
    }
  }

  // Hazard 5: every row must leave its muxes neutral.
  void check_open_muxes() {
    out_.final_mux.resize(tiles_.size());
    out_.final_paired_mux.resize(tiles_.size());
    for (uint32_t i = 0; i < tiles_.size(); ++i) {
      out_.final_mux[i] = xpic_[i].at(kForever);
      out_.final_paired_mux[i] = paired_[i].at(kForever);
      auto last_instr = [&](ControlKind kind) {
        uint32_t id = kNoInstruction;
        for (const auto& c : schedule(i).controls) {
          if (c.kind == kind) id = c.instruction;
        }
        return id;
      };
      if (out_.final_mux[i] != machine_.neutral_mux) {
        hazard(HazardClass::MuxLeftOpen, i, out_.tile_horizon[i], last_instr(ControlKind::Xpic),
               "INCOMING_MUX is " + hex(out_.final_mux[i]) + ", not neutral " +
                   hex(machine_.neutral_mux) + ", at the end of the row");
      }
      if (out_.final_paired_mux[i] != machine_.neutral_mux) {
        hazard(HazardClass::MuxLeftOpen, i, out_.tile_horizon[i], last_instr(ControlKind::PairedXpic),
               "paired mux is " + hex(out_.final_paired_mux[i]) + ", not neutral, at the end of the row");
      }
    }
  }

  void finish() {
    for (auto h : out_.tile_horizon) out_.horizon = std::max(out_.horizon, h);
    // Apply order: by receiver, then write event, so a later write to the same word wins.
    // assign_addresses emits writes in nearly that order already.
    const auto before = [&](const WriteRun& x, const WriteRun& y) {
      return std::tie(x.receiver, x.first_write_event, x.address) <
             std::tie(y.receiver, y.first_write_event, y.address);
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
};

}  // namespace

PhaseOutcome execute_phase(const arch::MachineDescription& machine,
                           const arch::Topology& topology, std::span<const PhaseTile> tiles,
                           std::optional<uint32_t> trace_logical) {
  return PhaseExecutor(machine, topology, tiles, trace_logical).run();
}

}  // namespace lockstep::model
