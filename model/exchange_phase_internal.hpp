#pragma once
// PhaseExecutor and its types, shared by exchange_phase.cpp and exchange_phase_checks.cpp.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "io/parallel.hpp"
#include "model/exchange_phase.hpp"

// Not in an anonymous namespace: the class's members are defined in two files.
namespace lockstep::model::phase_executor {

inline constexpr int64_t kForever = std::numeric_limits<int64_t>::max() / 4;
inline constexpr uint32_t kNoInstruction = UINT32_MAX;

// A register's value over the phase: initial value, then changes at events.
struct Timeline {
  uint32_t initial = 0;
  std::vector<std::pair<int64_t, uint32_t>> changes;  // sorted by event, last one wins

  uint32_t at(int64_t event) const {
    auto it =
        std::upper_bound(changes.begin(), changes.end(), event, [](int64_t e, const auto& c) { return e < c.first; });
    return it == changes.begin() ? initial : std::prev(it)->second;
  }
  int64_t next_change_after(int64_t event) const {
    auto it =
        std::upper_bound(changes.begin(), changes.end(), event, [](int64_t e, const auto& c) { return e < c.first; });
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

// Words of one run selected by one window. Made only whole (every field given), so it needs
// no initialisers, and a phase's millions of them are not zeroed before they are written.
struct Selection {
  uint32_t receiver;  // for paired: the early member whose paired mux selected
  uint32_t sender;
  uint32_t run;  // index in the sender's schedule
  uint32_t first_item;
  uint32_t items;
  uint32_t window;
  uint32_t message;  // the run's, kept here so the checks need not look the run up
  bool paired;
  int64_t mux_event;        // event item first_item was selected
  uint64_t source_address;  // of item first_item
};

using arch::group_by;  // selections, pieces and writes by tile (io/parallel.hpp)
using arch::Groups;
using arch::UninitializedVector;  // io/parallel.hpp

// Selected items as they reach one receiver's SRAM, before the pointer gives addresses. It
// carries what its writes need of its selection, window and run: a receiver's pieces are
// made in its own cache-sized list, not looked up one by one. An ordinary selection is one
// piece (made from it there); a paired one gives a piece per member and format.
struct WritePiece {
  uint32_t receiver = 0;
  uint32_t sender = 0;
  uint64_t source_address = 0;
  int64_t write_event = 0;
  int64_t mux_event = 0;
  uint32_t items = 0;
  uint32_t item_bytes = 4;
  uint32_t selection = 0;
  uint32_t window = 0;
  uint32_t message = 0;
  uint32_t run = 0;
  uint32_t run_offset = 0;   // source_address less the run's first byte
  uint32_t instruction = 0;  // the control that opened the window
};

class PhaseExecutor {
 public:
  PhaseExecutor(const arch::MachineDescription& machine, const arch::Topology& topology,
                std::span<const PhaseTile> tiles, std::optional<uint32_t> trace);

  PhaseOutcome run();

 private:
  const arch::MachineDescription& machine_;
  const arch::Topology& topology_;
  std::span<const PhaseTile> tiles_;
  std::vector<int32_t> index_of_physical_;
  std::optional<uint32_t> trace_index_;
  PhaseOutcome out_;

  std::vector<Timeline> xpic_, paired_, pointer_, format_;
  std::vector<std::vector<uint32_t>> pointer_instr_;        // instruction of each pointer change
  std::vector<std::vector<uint32_t>> format_instr_;         // instruction of each format change
  std::set<std::pair<uint32_t, uint32_t>> format_checked_;  // (member, sender) pairs checked
  std::vector<Window> windows_;                             // every window, by id
  Groups ordinary_by_sender_, paired_by_sender_;            // window ids per sender, in id order
  UninitializedVector<Selection> selections_;               // ordinary ones in sender order, then paired ones
  // Sender s's ordinary selections start at ordinary_of_sender_[s], its paired ones at
  // paired_of_sender_[s]; first_paired_ is the first paired selection.
  std::vector<uint32_t> ordinary_of_sender_, paired_of_sender_;
  size_t first_paired_ = 0;
  Groups selections_of_receiver_;
  std::vector<WritePiece> paired_pieces_;
  UninitializedVector<uint32_t> write_selection_;  // by write: its selection
  Groups writes_of_;                               // write indices per receiver

  const PhaseTile& tile(uint32_t i) const { return tiles_[i]; }
  const RowSchedule& schedule(uint32_t i) const { return out_.schedules[i]; }

  std::optional<uint32_t> participant(uint32_t physical) const {
    if (physical >= index_of_physical_.size()) return std::nullopt;
    const int32_t i = index_of_physical_[physical];
    if (i < 0) return std::nullopt;
    return static_cast<uint32_t>(i);
  }

  void hazard(HazardClass kind, uint32_t t, int64_t event, uint32_t instruction, std::string detail) {
    out_.hazards.push_back(make_hazard(kind, t, event, instruction, std::move(detail)));
  }

  // Runs check(i, found) for every tile i in parallel, each into its own list, and appends
  // the lists' hazards in tile order, as one thread would.
  template <class Check>
  void check_tiles(Check&& check) {
    std::vector<std::vector<ModelHazard>> found(tiles_.size());
    tbb::parallel_for(uint32_t{0}, static_cast<uint32_t>(tiles_.size()), [&](uint32_t i) { check(i, found[i]); });
    for (auto& f : found) std::move(f.begin(), f.end(), std::back_inserter(out_.hazards));
  }
  ModelHazard make_hazard(HazardClass kind, uint32_t t, int64_t event, uint32_t instruction, std::string detail) const {
    ModelHazard h;
    h.kind = kind;
    h.tile = tile(t).logical;
    h.event = event;
    if (instruction != kNoInstruction && instruction < schedule(t).instructions.size()) {
      const auto& in = schedule(t).instructions[instruction];
      h.row_offset = in.byte_offset;
      h.instruction = arch::describe(instruction_at(tile(t).row_words, in));
    } else {
      h.instruction = "(none: CSR state before the row)";
    }
    h.detail = std::move(detail);
    return h;
  }

  void trace(uint32_t t, int64_t event, std::string text) {
    if (trace_index_ && *trace_index_ == t) out_.trace.push_back({event, std::move(text)});
  }

  // exchange_phase.cpp: row schedules, mux windows, selections and writes.
  void schedule_rows();
  uint32_t paired_mux_of_muxpair(uint32_t muxpair, uint32_t physical) const;
  void build_timelines();
  struct OpenWindow {  // a window before it has its id
    Window window;
    uint32_t sender;
    bool paired;
  };
  void add_windows(uint32_t receiver, const Timeline& line, const std::vector<uint32_t>& instr, bool paired,
                   std::vector<OpenWindow>& into) const;
  static bool intersect(const SendRun& r, int64_t latency, const Window& w, uint32_t& k0, uint32_t& count,
                        int64_t& mux);
  void select_ordinary();
  uint32_t select_ordinary_from(uint32_t sender, Selection* into) const;
  void select_paired();
  // One receiver's writes, the selection of each, and its hazards: receivers are worked out
  // in parallel and appended in receiver order, as one thread would.
  struct ReceiverWrites {
    std::vector<WriteRun> writes;
    std::vector<uint32_t> selections;
    std::vector<ModelHazard> hazards;
    uint32_t last_window = 0, last_message = 0;  // of the last write's first piece
  };
  void assign_addresses();
  void assign_receiver(uint32_t d, std::span<const uint32_t> paired_pieces, ReceiverWrites& into);
  WritePiece piece(const Selection& sel, uint32_t k, uint32_t receiver, uint32_t item, uint32_t items,
                   int64_t write_event) const;
  bool continues_last_write(const WritePiece& piece, uint64_t source, uint64_t address, int64_t event,
                            const ReceiverWrites& into) const;
  void emit_write(uint32_t d, const WritePiece& piece, uint32_t offset, uint32_t items, int64_t event,
                  const std::optional<uint64_t>& pointer, ReceiverWrites& into);
  void finish();

  // exchange_phase_checks.cpp: the hazard checks.
  void check_controls();
  void check_format(uint32_t member, uint32_t early, uint32_t sender, uint32_t format, int64_t event);
  void check_messages();
  void check_receive_overlaps();
  void check_elements();
  void check_paired();
  void check_double_writes();
  void check_open_muxes();
};

}  // namespace lockstep::model::phase_executor
