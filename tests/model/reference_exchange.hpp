#pragma once
// A reference interpreter of one exchange phase, written from the spec
// (IPU21-EXCHANGE.md sections 0-7, docs/ipu21-exchange.md here) and the paired landing rule
// (docs/timing.md "Paired 64-bit items"), for the differential test. It is deliberately
// simple and independent of model/: it uses only the codec (arch::decode) and the route
// timing (arch::Topology). Every register is a value per event and every item is found by the
// event it leaves; nothing is done with intervals. It reports no hazards.
//
// Assumed at event 0 (what a compiled phase starts from): both muxes neutral, format 0, no
// pointer. An ordinary mux sees only 32-bit items and a paired mux only 64-bit ones.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "arch/instruction.hpp"
#include "arch/topology.hpp"

namespace lockstep::reference_exchange {

inline constexpr uint32_t kNeutral = 0x640;

// One tile of the phase: its row (from the first word, ending in `br $m10`).
struct Tile {
  uint32_t logical = 0;
  std::vector<uint32_t> row;
  uint32_t incoming_base = 0;  // INCOMING_BASE
};

// One item a tile puts on the fabric (section 5: item k of a send issued at t leaves at t+1+k).
struct Item {
  int64_t leave = 0;
  uint32_t address = 0;  // item address: byte address / 4, or / 8 with sctl bit 2
  uint32_t sctl = 0;
};

// Control events of one register: event -> value (the last control of an event wins).
using Controls = std::map<int64_t, uint32_t>;

// What a row does on its tile's event clock.
struct RowTrace {
  // By leave event: a tile emits one item per event at most.
  std::vector<std::optional<Item>> items;
  Controls xpic, paired_xpic, pointer, format;
  int64_t row_end = 0;  // t at `br $m10`
};

// The value a register holds at `event`: the last control at or before it.
inline std::optional<uint32_t> value_at(const Controls& controls, int64_t event) {
  auto it = controls.upper_bound(event);
  if (it == controls.begin()) return std::nullopt;
  return std::prev(it)->second;
}

// The register's value at every event of [first, last] (`initial` before any control).
inline std::vector<uint32_t> per_event(const Controls& controls, uint32_t initial, int64_t first, int64_t last) {
  std::vector<uint32_t> values;
  uint32_t value = initial;
  auto next = controls.begin();
  for (int64_t event = first; event <= last; ++event) {
    for (; next != controls.end() && next->first <= event; ++next) value = next->second;
    values.push_back(value);
  }
  return values;
}

// Section 5: one tile's row, instruction by instruction, on its event counter t.
class RowWalker {
 public:
  RowTrace trace(std::span<const uint32_t> row) {
    for (size_t index = 0;;) {
      const arch::DecodedInstruction decoded = arch::decode(row, index);
      index += decoded.word_count;
      if (!step(decoded.instruction)) return std::move(out_);
    }
  }

 private:
  RowTrace out_;
  int64_t t_ = 0;
  uint32_t next_ = 0;  // the stream's next item address
  uint32_t sctl_ = 0;  // the stream's sctl (sendpic continues it)

  // Items of an instruction issued at t: item k leaves at t + 1 + k.
  void send(uint32_t items) {
    for (uint32_t k = 0; k < items; ++k, ++next_) {
      const int64_t leave = t_ + 1 + k;
      if ((sctl_ & 3u) == 0) continue;  // no direction: nothing goes on the fabric
      if (out_.items.size() <= size_t(leave)) out_.items.resize(leave + 1);
      out_.items[size_t(leave)] = Item{leave, next_, sctl_};
    }
    t_ += items;
  }

  // Applies one instruction; false at the row's end.
  bool step(const arch::Instruction& in) {
    switch (in.op) {
      case arch::Opcode::Delay:
        t_ += in.events;
        return true;
      case arch::Opcode::DelayPic:  // the control at the terminal event
        t_ += in.events;
        (in.selector == 0 ? out_.pointer : out_.format)[t_] = in.value;
        return true;
      case arch::Opcode::DelayXpic:
        t_ += in.events;
        (in.selector == 0 ? out_.xpic : out_.paired_xpic)[t_] = in.value;
        return true;
      case arch::Opcode::Send:
        next_ = in.address;
        sctl_ = in.sctl;
        send(in.words);
        return true;
      case arch::Opcode::SendOff:
        next_ += in.delta;
        sctl_ = in.sctl;
        send(in.words);
        return true;
      case arch::Opcode::SendPic: {  // the control at t + 1; items continue the stream
        Controls* const by_selector[] = {&out_.xpic, &out_.paired_xpic, &out_.pointer, &out_.format};
        (*by_selector[in.selector])[t_ + 1] = in.value;
        send(in.words);
        return true;
      }
      case arch::Opcode::SendPicP:
        return send_pic_p(in);
      case arch::Opcode::Sync:
      case arch::Opcode::Sans:
        return true;
      case arch::Opcode::Return:
        out_.row_end = t_;
        return false;
      default:
        throw std::runtime_error("reference: not a row instruction: " + arch::describe(in));
    }
  }

  // Both controls at t + 1 (payload bit 31: paired XPIC; prefix bit 27: PIC selector). With a
  // direction the stream restarts at its own address; without, it only waits.
  bool send_pic_p(const arch::Instruction& in) {
    (in.xpic_paired ? out_.paired_xpic : out_.xpic)[t_ + 1] = in.xpic;
    (in.pic_selector == 0 ? out_.pointer : out_.format)[t_ + 1] = in.pic;
    if ((in.sctl & 3u) == 0) {
      t_ += in.words;
      return true;
    }
    next_ = in.address;
    sctl_ = in.sctl;
    send(in.words);
    return true;
  }
};

inline RowTrace trace_row(std::span<const uint32_t> row) { return RowWalker().trace(row); }

// One 32-bit word written in the phase. Tiles are logical ids, addresses bytes.
struct WrittenWord {
  uint32_t receiver = 0;
  uint32_t address = 0;
  uint32_t sender = 0;
  uint32_t source = 0;
  int64_t event = 0;
  // Field by field (plain comparisons: the test sorts millions of these in Debug builds).
  bool operator<(const WrittenWord& o) const {
    if (receiver != o.receiver) return receiver < o.receiver;
    if (address != o.address) return address < o.address;
    if (sender != o.sender) return sender < o.sender;
    if (source != o.source) return source < o.source;
    return event < o.event;
  }
  bool operator==(const WrittenWord&) const = default;
};

struct PhaseResult {
  std::vector<WrittenWord> words;
  std::vector<int64_t> row_end;        // per tile, in input order
  std::vector<RowTrace> traces;        // per tile
  uint64_t words_without_pointer = 0;  // selected, but written before any pointer control
};

// A selected item on its way to one receiver's SRAM (section 6), before the pointer.
struct Landing {
  int64_t event = 0;    // its write event
  uint32_t sender = 0;  // index into the phase's tiles
  uint32_t source = 0;  // byte address of its first word
  uint32_t words = 1;   // 1, or 2 for a paired item
  bool operator<(const Landing& o) const {
    if (event != o.event) return event < o.event;
    return sender != o.sender ? sender < o.sender : source < o.source;
  }
};

class Phase {
 public:
  Phase(const arch::Topology& topology, std::span<const Tile> tiles)
      : topology_(topology), tiles_(tiles), index_of_physical_(topology.physical_tiles(), -1) {
    for (uint32_t i = 0; i < tiles.size(); ++i) {
      physical_.push_back(topology.physical(tiles[i].logical));
      index_of_physical_.at(physical_[i]) = int32_t(i);
      out_.traces.push_back(trace_row(tiles[i].row));
      out_.row_end.push_back(out_.traces[i].row_end);
      last_leave_ = std::max<int64_t>(last_leave_, out_.traces[i].items.size());
    }
    landings_.resize(tiles.size());
  }

  PhaseResult run() {
    for (uint32_t d = 0; d < tiles_.size(); ++d) select_ordinary(d);
    for (uint32_t e = 0; e < tiles_.size(); ++e) select_paired(e);
    for (uint32_t d = 0; d < tiles_.size(); ++d) write(d);
    return std::move(out_);
  }

 private:
  const arch::Topology& topology_;
  std::span<const Tile> tiles_;
  std::vector<uint32_t> physical_;
  std::vector<int32_t> index_of_physical_;      // -1: not in the phase
  std::vector<std::vector<Landing>> landings_;  // per receiver
  int64_t last_leave_ = 0;
  PhaseResult out_;

  // Mux events worth looking at: every item reaches a mux within |ttm| <= 113 of leaving.
  int64_t first_mux_event() const { return -128; }
  int64_t last_mux_event() const { return last_leave_ + 128; }

  // The phase tile a mux value selects, if any (neutral and host values select none).
  std::optional<uint32_t> tile_of(uint32_t physical) const {
    if (physical >= index_of_physical_.size() || index_of_physical_[physical] < 0) return std::nullopt;
    return uint32_t(index_of_physical_[physical]);
  }

  // The item sender `s` puts on the fabric at `leave`, if it goes towards `d` at this width.
  std::optional<Item> item_towards(uint32_t s, int64_t leave, uint32_t d, bool wide) const {
    const auto& items = out_.traces[s].items;
    if (leave < 0 || size_t(leave) >= items.size() || !items[size_t(leave)]) return std::nullopt;
    const Item& item = *items[size_t(leave)];
    if (((item.sctl & 4u) != 0) != wide) return std::nullopt;
    if ((item.sctl & uint32_t(topology_.direction(physical_[s], physical_[d]))) == 0) return std::nullopt;
    return item;
  }

  // Word32: at mux event m, d takes the item of the tile its XPIC names that arrives then
  // (left at m - ttm); it is written at m + W(d), W = 52 + 2 row(d).
  void select_ordinary(uint32_t d) {
    const std::vector<uint32_t> xpic = per_event(out_.traces[d].xpic, kNeutral, first_mux_event(), last_mux_event());
    for (int64_t m = first_mux_event(); m <= last_mux_event(); ++m) {
      const auto s = tile_of(xpic[m - first_mux_event()]);
      if (!s || *s == d) continue;
      const int64_t leave = m - topology_.time_to_mux(physical_[*s], physical_[d]);
      const auto item = item_towards(*s, leave, d, false);
      if (!item) continue;
      const int64_t write = m + 52 + 2 * int64_t(arch::Topology::row(physical_[d]));
      landings_[d].push_back({write, *s, item->address * 4, 1});
    }
  }

  // Paired64: the early member e's paired XPIC value v selects s = v XOR (e AND 2); item k
  // of a send issued at `issue` reaches it at issue + pttm(s,e) + k = leave + pttm - 1. Both
  // members p write it at m + 53 + 2 row(p) if their format is non-zero two events earlier.
  void select_paired(uint32_t e) {
    const std::vector<uint32_t> paired =
        per_event(out_.traces[e].paired_xpic, kNeutral, first_mux_event(), last_mux_event());
    const uint32_t pe = physical_[e];
    for (int64_t m = first_mux_event(); m <= last_mux_event(); ++m) {
      const auto s = tile_of(paired[m - first_mux_event()] ^ (pe & 2u));
      if (!s || *s == e) continue;
      const int64_t leave = m - topology_.paired_time_to_mux(physical_[*s], pe) + 1;
      const auto item = item_towards(*s, leave, e, true);
      if (!item) continue;
      for (const uint32_t member : {pe, arch::Topology::partner(pe)}) {
        const auto p = tile_of(member);
        if (!p) continue;
        const int64_t write = m + 53 + 2 * int64_t(arch::Topology::row(member));
        if (value_at(out_.traces[*p].format, write - 2).value_or(0) == 0) continue;
        landings_[*p].push_back({write, *s, item->address * 8, 2});
      }
    }
  }

  // Writes in event order through the pointer in effect at each write event (a pointer
  // control at an event governs writes at that event); the pointer advances one per word.
  void write(uint32_t d) {
    std::vector<Landing>& landings = landings_[d];
    std::sort(landings.begin(), landings.end());
    const Controls& pointer_controls = out_.traces[d].pointer;
    auto control = pointer_controls.begin();
    std::optional<uint64_t> pointer;
    for (const Landing& l : landings) {
      for (; control != pointer_controls.end() && control->first <= l.event; ++control) pointer = control->second;
      if (!pointer) {
        out_.words_without_pointer += l.words;
        continue;
      }
      for (uint32_t w = 0; w < l.words; ++w, ++*pointer) {
        const uint64_t address = tiles_[d].incoming_base + 4 * *pointer;
        out_.words.push_back(
            {tiles_[d].logical, static_cast<uint32_t>(address), tiles_[l.sender].logical, l.source + 4 * w, l.event});
      }
    }
  }
};

inline PhaseResult run_phase(const arch::Topology& topology, std::span<const Tile> tiles) {
  return Phase(topology, tiles).run();
}

}  // namespace lockstep::reference_exchange
