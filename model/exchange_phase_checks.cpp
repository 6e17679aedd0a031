// PhaseExecutor's hazard checks (IPU21-EXCHANGE.md section 7) on its selections and writes.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <set>
#include <tuple>

#include "io/hex.hpp"
#include "model/exchange_phase_internal.hpp"
#include "model/memory_elements.hpp"

namespace lockstep::model::phase_executor {

using arch::hex;

// Hazards 8 and 9: one PIC and one XPIC control per event; none at a message's start.
// Tiles in parallel, their hazards appended in tile order.
void PhaseExecutor::check_controls() {
  check_tiles([&](uint32_t i, std::vector<ModelHazard>& found) {
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
          found.push_back(make_hazard(HazardClass::SimultaneousControls, i, controls[a].event, (*list)[1],
                                      std::to_string(list->size()) + (list == &xpic ? " XPIC" : " PIC") +
                                          " controls at event " + std::to_string(controls[a].event)));
        }
      }
      a = b;
    }
    for (const auto& r : schedule(i).runs) {
      if (schedule(i).instructions[r.instruction].op != arch::Opcode::Send) continue;
      auto from = std::lower_bound(controls.begin(), controls.end(), r.issue_event,
                                   [](const Control& c, int64_t e) { return c.event < e; });
      for (auto c_it = from; c_it != controls.end() && c_it->event <= r.first_event; ++c_it) {
        const Control& c = *c_it;
        found.push_back(make_hazard(HazardClass::ControlAtMessageStart, i, c.event, c.instruction,
                                    "control at event " + std::to_string(c.event) + ", the " +
                                        (c.event == r.issue_event ? "issue" : "first-word") +
                                        " event of the message sent by the instruction at row offset " +
                                        std::to_string(schedule(i).instructions[r.instruction].byte_offset)));
      }
    }
  });
}

// The two forms of a paired receive's format (spec section 6) told apart: a row's format
// control carries the route direction dir(s, member); the CSR form (INCOMING_FORMAT set
// before the row, no format control yet) names the tile's half: 1 early (its own paired
// mux selects the sender), 2 waiting (its partner's does). A value that does not fit its
// form is hazard 10.
void PhaseExecutor::check_format(uint32_t member, uint32_t early, uint32_t sender, uint32_t format, int64_t event) {
  const Timeline& line = format_[member];
  const auto after = std::upper_bound(line.changes.begin(), line.changes.end(), event,
                                      [](int64_t e, const auto& c) { return e < c.first; });
  const std::string who = "tile " + std::to_string(tile(member).logical);
  if (after == line.changes.begin()) {
    const uint32_t half = member == early ? 1 : 2;
    if (format == half) return;
    hazard(HazardClass::Paired, member, event, kNoInstruction,
           "INCOMING_FORMAT " + std::to_string(format) + " on " + who + ", which is the " +
               (half == 1 ? "early half (1): its own paired mux selects"
                          : "waiting half (2): its partner's paired mux selects") +
               " tile " + std::to_string(tile(sender).logical));
    return;
  }
  const auto direction = static_cast<uint32_t>(topology_.direction(tile(sender).physical, tile(member).physical));
  if (format == direction) return;
  const uint32_t instruction = format_instr_[member][static_cast<size_t>(after - line.changes.begin()) - 1];
  hazard(HazardClass::Paired, member, event, instruction,
         "format control " + std::to_string(format) + " on " + who + ", but a row's format carries the route " +
             "direction dir(s, d) = " + std::to_string(direction) + " from tile " +
             std::to_string(tile(sender).logical));
}

// Hazards 5 and 12: a message must be taken whole by every tile that takes any of it.
void PhaseExecutor::check_messages() {
  struct Take {
    uint32_t message, receiver, selection;
  };
  // A window belongs to one receiver, and so do the selections it makes: receivers in parallel.
  std::vector<uint32_t> first_message_of_window(windows_.size(), UINT32_MAX);
  tbb::parallel_for(size_t{0}, tiles_.size(), [&](size_t d) {
    for (const uint32_t k : selections_of_receiver_.of(d)) {
      const Selection& sel = selections_[k];
      first_message_of_window[sel.window] = std::min(first_message_of_window[sel.window], sel.message);
    }
  });
  // Per sender in parallel: each (message, receiver) must take the message's every item.
  // Hazards are appended in (sender, message, receiver) order.
  check_tiles([&](uint32_t s, std::vector<ModelHazard>& found) {
    std::vector<uint32_t> selections;  // the sender's, in index order
    for (uint32_t k = ordinary_of_sender_[s]; k < ordinary_of_sender_[s + 1]; ++k) selections.push_back(k);
    for (uint32_t k = paired_of_sender_[s]; k < paired_of_sender_[s + 1]; ++k) selections.push_back(k);
    if (selections.empty()) return;
    std::vector<uint64_t> items_of_message;
    for (const auto& r : schedule(s).runs) {
      if (r.directions() == 0) continue;
      if (r.message >= items_of_message.size()) items_of_message.resize(r.message + 1, 0);
      items_of_message[r.message] += r.items;
    }
    std::vector<Take> takes;
    takes.reserve(selections.size());
    for (uint32_t k : selections) {
      const auto& sel = selections_[k];
      takes.push_back({sel.message, sel.receiver, k});
    }
    // A row's runs come in message order, and so do the sender's selections: then only each
    // message's takes need sorting.
    const auto by_message = [](const Take& a, const Take& b) { return a.message < b.message; };
    const auto by_receiver = [](const Take& a, const Take& b) {
      return std::tie(a.receiver, a.selection) < std::tie(b.receiver, b.selection);
    };
    if (!std::is_sorted(takes.begin(), takes.end(), by_message))
      std::stable_sort(takes.begin(), takes.end(), by_message);
    for (auto a = takes.begin(); a != takes.end();) {
      const auto b = std::find_if(a, takes.end(), [&](const Take& t) { return t.message != a->message; });
      std::sort(a, b, by_receiver);
      a = b;
    }
    for (size_t a = 0; a < takes.size();) {
      const Take& head = takes[a];
      // Items taken, and the window and event of the first selection.
      const uint32_t window = selections_[head.selection].window;
      const int64_t event = selections_[head.selection].mux_event;
      uint64_t items = 0;
      size_t b = a;
      for (; b < takes.size() && takes[b].message == head.message && takes[b].receiver == head.receiver; ++b) {
        items += selections_[takes[b].selection].items;
      }
      a = b;
      const uint64_t total = head.message < items_of_message.size() ? items_of_message[head.message] : 0;
      if (items >= total) continue;
      const bool spill = first_message_of_window[window] < head.message;
      const std::string what = std::to_string(items) + " of " + std::to_string(total) + " items of message " +
                               std::to_string(head.message) + " from tile " + std::to_string(tile(s).logical);
      found.push_back(spill ? make_hazard(HazardClass::MuxLeftOpen, head.receiver, event, windows_[window].instruction,
                                          "mux window stays open past the previous message and takes " + what)
                            : make_hazard(HazardClass::StreamConflict, head.receiver, event,
                                          windows_[window].instruction, "takes only " + what + ": the rest is lost"));
    }
  });
}

// Hazard 7: receive windows (mux and write) of one tile must not overlap.
void PhaseExecutor::check_receive_overlaps() {
  struct Interval {
    int64_t start, end;  // inclusive
    uint32_t window;
    uint32_t sender, message;
  };
  // One interval per (window, sender, message): the span of its pieces, then by start.
  const auto merge = [](std::vector<Interval>& list) {
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
  };
  const auto check = [&](uint32_t d, const std::vector<Interval>& list, const char* what,
                         std::vector<ModelHazard>& found) {
    int64_t reach = std::numeric_limits<int64_t>::min();
    for (const auto& iv : list) {
      if (iv.start <= reach) {
        found.push_back(make_hazard(HazardClass::OverlappingReceives, d, iv.start, windows_[iv.window].instruction,
                                    std::string(what) + " window of message " + std::to_string(iv.message) +
                                        " from tile " + std::to_string(tile(iv.sender).logical) + " starts at " +
                                        std::to_string(iv.start) + " inside another receive (until " +
                                        std::to_string(reach) + ")"));
      }
      reach = std::max(reach, iv.end);
    }
  };
  // Receivers in parallel; their hazards are appended in receiver order (mux, then write).
  check_tiles([&](uint32_t d, std::vector<ModelHazard>& found) {
    std::vector<Interval> list;
    const auto selections = selections_of_receiver_.of(d);
    list.reserve(selections.size());
    for (uint32_t k : selections) {
      const auto& sel = selections_[k];
      list.push_back({sel.mux_event, sel.mux_event + sel.items - 1, sel.window, sel.sender, sel.message});
    }
    merge(list);
    check(d, list, "mux", found);
    list.clear();
    for (size_t k : writes_of_.of(d)) {
      const auto& w = out_.writes[k];
      const auto& sel = selections_[write_selection_[k]];
      list.push_back(
          {w.first_write_event, w.first_write_event + w.bytes / w.item_bytes - 1, sel.window, sel.sender, sel.message});
    }
    merge(list);
    check(d, list, "write", found);
  });
}

// Hazards 1 and 2: per memory element, row fetch vs data and send reads vs receive writes.
// Tiles are checked in parallel; their hazards are appended in tile order, as one thread would.
void PhaseExecutor::check_elements() {
  struct Use {
    uint32_t key;
    int64_t event;
    uint32_t instruction;  // of the first use at that event (kNoInstruction: look it up)
    uint32_t write;        // a receive's write index, for its window's control
  };
  const auto by_key = [](const Use& a, const Use& b) { return a.key < b.key; };
  check_tiles([&](uint32_t i, std::vector<ModelHazard>& found) {
    // Each element's first send (in row order) and earliest receive (the first of its
    // event): every use listed, stably sorted by element, then one kept per element.
    std::vector<Use> sent, received;
    for (const auto& r : schedule(i).runs) {
      if (r.directions() == 0) continue;
      for_each_element_key(machine_, r.byte_address(), r.bytes(), [&](uint32_t key) {
        sent.push_back({key, r.issue_event, r.instruction, 0});
      });
    }
    for (const uint32_t k : writes_of_.of(i)) {
      const auto& w = out_.writes[k];
      for_each_element_key(machine_, w.address, w.bytes, [&](uint32_t key) {
        received.push_back({key, w.first_write_event, kNoInstruction, k});
      });
    }
    std::stable_sort(sent.begin(), sent.end(), by_key);
    sent.erase(std::unique(sent.begin(), sent.end(), [](const Use& a, const Use& b) { return a.key == b.key; }),
               sent.end());
    std::stable_sort(received.begin(), received.end(), by_key);
    size_t kept = 0;
    for (size_t a = 0; a < received.size(); ++kept) {
      Use earliest = received[a];
      size_t b = a + 1;
      for (; b < received.size() && received[b].key == earliest.key; ++b) {
        if (received[b].event < earliest.event) earliest = received[b];
      }
      earliest.instruction = windows_[selections_[write_selection_[earliest.write]].window].instruction;
      received[kept] = earliest;
      a = b;
    }
    received.resize(kept);
    const auto find = [&](const std::vector<Use>& uses, uint32_t key) -> const Use* {
      const auto it = std::lower_bound(uses.begin(), uses.end(), Use{key, 0, 0, 0}, by_key);
      return it != uses.end() && it->key == key ? &*it : nullptr;
    };
    if (tile(i).has_row) {
      const uint64_t fetch_end = uint64_t(tile(i).row_address) + schedule(i).row_bytes + machine_.fetch_lookahead_bytes;
      for_each_element_key(machine_, tile(i).row_address, fetch_end - tile(i).row_address, [&](uint32_t key) {
        for (const auto* uses : {&sent, &received}) {
          const Use* use = find(*uses, key);
          if (use == nullptr) continue;
          found.push_back(make_hazard(HazardClass::RowFetchConflict, i, use->event, use->instruction,
                                      std::string(uses == &sent ? "sent" : "received") +
                                          " data shares a memory element with the executing row " +
                                          hex(tile(i).row_address) + ".." + hex(fetch_end) +
                                          " (with fetch look-ahead)"));
        }
      });
    }
    for (const Use& s : sent) {
      const Use* r = find(received, s.key);
      if (r == nullptr) continue;
      found.push_back(make_hazard(HazardClass::SendReceiveConflict, i, std::max(s.event, r->event), r->instruction,
                                  "a send's read window and a receive's write window share a memory element in "
                                  "this phase"));
    }
  });
}

// Hazard 10: format changes vs paired mux controls; the sender's partner is busy.
void PhaseExecutor::check_paired() {
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
                 "sends while its partner tile " + std::to_string(tile(i).logical) + " sends 64-bit items (busy " +
                     std::to_string(busy_from) + ".." + std::to_string(busy_to) + ")");
          break;
        }
      }
      for (size_t k : writes_of_.of(*partner)) {
        const auto& w = out_.writes[k];
        const int64_t last = w.first_write_event + w.bytes / w.item_bytes - 1;
        if (w.first_write_event <= busy_to && last >= busy_from) {
          hazard(HazardClass::Paired, *partner, std::max(w.first_write_event, busy_from),
                 windows_[selections_[write_selection_[k]].window].instruction,
                 "receives while its partner tile " + std::to_string(tile(i).logical) + " sends 64-bit items");
          break;
        }
      }
      break;  // one report per sender row
    }
  }
}

// A word written twice in one phase. Receivers in parallel, their hazards appended in order.
void PhaseExecutor::check_double_writes() {
  check_tiles([&](uint32_t d, std::vector<ModelHazard>& found) {
    const auto writes = writes_of_.of(d);
    std::vector<uint32_t> list(writes.begin(), writes.end());
    std::sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      const auto& x = out_.writes[a];
      const auto& y = out_.writes[b];
      return std::tie(x.address, x.first_write_event) < std::tie(y.address, y.first_write_event);
    });
    uint64_t reach = 0;
    size_t reach_write = SIZE_MAX;
    for (const uint32_t k : list) {
      const auto& w = out_.writes[k];
      if (reach_write != SIZE_MAX && w.address < reach) {
        const auto& other = out_.writes[reach_write];
        const int64_t event = std::max(w.first_write_event, other.first_write_event);
        found.push_back(make_hazard(
            HazardClass::DoubleWrite, d, event, windows_[selections_[write_selection_[k]].window].instruction,
            "word " + hex(w.address) + " written twice in the phase (from tiles " +
                std::to_string(tile(other.sender).logical) + " and " + std::to_string(tile(w.sender).logical) + ")"));
      }
      if (reach_write == SIZE_MAX || uint64_t(w.address) + w.bytes > reach) {
        reach = uint64_t(w.address) + w.bytes;
        reach_write = k;
      }
    }
  });
}

// Hazard 5: every row must leave its muxes neutral.
void PhaseExecutor::check_open_muxes() {
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
             "INCOMING_MUX is " + hex(out_.final_mux[i]) + ", not neutral " + hex(machine_.neutral_mux) +
                 ", at the end of the row");
    }
    if (out_.final_paired_mux[i] != machine_.neutral_mux) {
      hazard(HazardClass::MuxLeftOpen, i, out_.tile_horizon[i], last_instr(ControlKind::PairedXpic),
             "paired mux is " + hex(out_.final_paired_mux[i]) + ", not neutral, at the end of the row");
    }
  }
}

}  // namespace lockstep::model::phase_executor
