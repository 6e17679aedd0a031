// relocate_phase (exchange_phase.hpp): a later iteration of a phase whose Repeat patch list
// moved only send addresses reuses the earlier execution's selections and write addresses.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <span>

#include "arch/instruction.hpp"
#include "io/parallel.hpp"
#include "model/exchange_phase.hpp"
#include "model/memory_elements.hpp"

namespace lockstep::model {
namespace {

bool same_except_row(const PhaseTile& a, const PhaseTile& b) {
  return a.same_but_row(b) && a.row_words.size() == b.row_words.size();
}

// Word `index` starts a send or sendpicp of `schedule` (the schedule of the row `words`)
// whose only difference from the same word in `earlier` is its address field.
bool only_address_moved(const RowSchedule& schedule, std::span<const uint32_t> words, std::span<const uint32_t> earlier,
                        size_t index) {
  const auto& list = schedule.instructions;
  const auto it = std::lower_bound(list.begin(), list.end(), index * 4,
                                   [](const ScheduledInstruction& s, size_t at) { return s.byte_offset < at; });
  if (it == list.end() || it->byte_offset != index * 4) return false;
  if (it->op != arch::Opcode::Send && it->op != arch::Opcode::SendPicP) return false;
  arch::Instruction now, before;
  try {
    now = instruction_at(words, *it);
    before = arch::decode(earlier, index).instruction;
  } catch (const std::exception&) {
    return false;
  }
  before.address = now.address;
  return before == now;
}

// The words of `now`'s row that differ from `earlier`'s, or nullopt when anything else differs.
std::optional<std::vector<size_t>> changed_words(const PhaseTile& earlier, const PhaseTile& now) {
  if (!same_except_row(earlier, now)) return std::nullopt;
  // Most rows and most of a changed row are as before: blocks are compared whole first.
  constexpr size_t kBlock = 16;
  std::vector<size_t> changed;
  const size_t words = now.row_words.size();
  for (size_t b = 0; b < words; b += kBlock) {
    const size_t end = std::min(words, b + kBlock);
    if (std::memcmp(&now.row_words[b], &earlier.row_words[b], (end - b) * 4) == 0) continue;
    for (size_t k = b; k < end; ++k) {
      if (now.row_words[k] != earlier.row_words[k]) changed.push_back(k);
    }
  }
  return changed;
}

// The tile's sends when its row moved only send addresses (runs then hold the new addresses),
// scheduling the row again; nullopt otherwise (`moved` false when nothing executed changed).
std::optional<MovedSends> scheduled_sends(const PhaseTile& earlier, const PhaseTile& now,
                                          const std::vector<size_t>& changed, bool& moved) {
  moved = false;
  RowSchedule schedule = schedule_row(now.row_words);
  if (!schedule.issues.empty()) return std::nullopt;
  const size_t executed_words = schedule.row_bytes / 4;
  for (size_t k : changed) {
    if (k >= executed_words) break;  // past the return: never executed
    if (!only_address_moved(schedule, now.row_words, earlier.row_words, k)) return std::nullopt;
    moved = true;
  }
  MovedSends sends;
  sends.row_bytes = schedule.row_bytes;
  sends.every_run_moved = true;
  for (const SendRun& r : schedule.runs) {
    // A message's first run is its opener's (a send or sendpicp adds its run at once).
    if (r.message == sends.opener_word.size())
      sends.opener_word.push_back(schedule.instructions[r.instruction].byte_offset / 4);
  }
  sends.runs = std::move(schedule.runs);
  return sends;
}

// The same from the tile's sends at its last relocation: each changed word must open a message
// and differ from the last row's only in its address; that message's runs move by as much.
// nullopt when that does not hold (the caller then schedules the row).
std::optional<MovedSends> moved_again(const MovedSends& last, const PhaseTile& earlier, const PhaseTile& now,
                                      const std::vector<size_t>& changed, bool& moved) {
  moved = false;
  MovedSends sends = last;
  sends.moved_runs.clear();
  sends.every_run_moved = false;
  for (size_t k : changed) {
    if (k >= last.row_bytes / 4) break;  // past the return: never executed
    const auto opener = std::find(last.opener_word.begin(), last.opener_word.end(), k);
    if (opener == last.opener_word.end()) return std::nullopt;
    arch::Instruction before, after;
    try {
      before = arch::decode(earlier.row_words, k).instruction;
      after = arch::decode(now.row_words, k).instruction;
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (after.op != arch::Opcode::Send && after.op != arch::Opcode::SendPicP) return std::nullopt;
    const uint32_t delta = after.address - before.address;
    before.address = after.address;
    if (!(before == after)) return std::nullopt;
    const auto message = static_cast<uint32_t>(opener - last.opener_word.begin());
    for (uint32_t r = 0; r < sends.runs.size(); ++r) {
      if (sends.runs[r].message != message) continue;
      sends.runs[r].item_address += delta;
      sends.moved_runs.push_back(r);
    }
    moved = true;
  }
  return sends;
}

// The elements that a tile's receives write and its row fetch reads, sorted (a tile touches a
// few dozen).
std::vector<uint32_t> fixed_elements(const arch::MachineDescription& machine, const PhaseTile& tile, uint32_t row_bytes,
                                     std::span<const WriteRun> received) {
  std::vector<uint32_t> taken;
  const auto take = [&](uint32_t key) { taken.push_back(key); };
  for (const WriteRun& w : received) for_each_element_key(machine, w.address, w.bytes, take);
  if (tile.has_row) {
    const uint64_t fetch_bytes = uint64_t(row_bytes) + machine.fetch_lookahead_bytes;
    for_each_element_key(machine, tile.row_address, fetch_bytes, take);
  }
  std::sort(taken.begin(), taken.end());
  taken.erase(std::unique(taken.begin(), taken.end()), taken.end());
  return taken;
}

// Hazards 1 and 2 for a tile whose sends moved: the elements its sends read against those
// its receives write and its row is fetched from (receives and row did not move).
bool sends_meet_receives(const arch::MachineDescription& machine, const MovedSends& sends) {
  const std::vector<uint32_t>& taken = sends.fixed_elements;
  bool meet = false;
  for (const SendRun& r : sends.runs) {
    if (r.directions() == 0) continue;
    for_each_element_key(machine, r.byte_address(), r.bytes(),
                         [&](uint32_t key) { meet = meet || std::binary_search(taken.begin(), taken.end(), key); });
    if (meet) return true;
  }
  return false;
}

// The write's source from its sender's moved runs; `stuck` when it cannot move.
void move_source(const arch::MachineDescription& machine, const std::vector<SendRun>& runs, WriteRun& w,
                 std::atomic<bool>& stuck) {
  if (w.last_run >= runs.size() || w.run > w.last_run) {
    stuck = true;
    return;
  }
  // A write over several runs stays one only while the moved runs still follow each other.
  for (uint32_t r = w.run; r < w.last_run; ++r) {
    if (runs[r + 1].byte_address() != runs[r].byte_address() + runs[r].bytes()) stuck = true;
  }
  const uint64_t source = runs[w.run].byte_address() + w.source_offset;
  if (source < machine.sram_base || source + w.bytes > machine.sram_end) stuck = true;
  w.source_address = static_cast<uint32_t>(source);
}

// The writes' indices grouped by sender, each sender's by first run, so that a relocation
// touches only the moved runs' writes (a few in a hundred: a Repeat patch list moves one
// message of a row, not the row).
arch::Groups writes_by_sender(std::span<const WriteRun> writes, size_t tiles) {
  arch::Groups groups = arch::group_by(writes.size(), tiles, [&](size_t k) { return writes[k].sender; });
  tbb::parallel_for(size_t{0}, tiles, [&](size_t i) {
    const auto sender = groups.of(i);
    const auto by_run = [&](uint32_t a, uint32_t b) { return writes[a].run < writes[b].run; };
    std::stable_sort(sender.begin(), sender.end(), by_run);
  });
  return groups;
}

// The new sources of `sender`'s writes over its moved runs (a write's runs are one message's,
// which moves whole, so its first run says whether it moved), appended to `changed`.
void move_sender_writes(const arch::MachineDescription& machine, PhaseOutcome& outcome, uint32_t sender,
                        const MovedSends& sends, std::vector<uint32_t>& changed, std::atomic<bool>& stuck) {
  auto& writes = outcome.writes;
  const auto mine = outcome.writes_by_sender.of(sender);
  const auto first = mine.begin(), last = mine.end();
  const auto move = [&](uint32_t k) {
    move_source(machine, sends.runs, writes[k], stuck);
    changed.push_back(k);
  };
  if (sends.every_run_moved) {
    std::for_each(first, last, move);
    return;
  }
  for (const uint32_t run : sends.moved_runs) {
    auto j = std::lower_bound(first, last, run, [&](uint32_t k, uint32_t r) { return writes[k].run < r; });
    for (; j != last && writes[*j].run == run; ++j) move(*j);
  }
}

}  // namespace

bool relocate_phase(const arch::MachineDescription& machine, std::span<const PhaseTile> earlier_tiles,
                    PhaseOutcome& outcome, std::span<const PhaseTile> tiles) {
  const PhaseOutcome& earlier = outcome;
  if (!earlier.hazards.empty() || !earlier.trace.empty() || earlier_tiles.size() != tiles.size()) {
    return false;
  }
  // Tiles in parallel, each its own slot: the same result as in tile order. A tile that
  // moved at the last relocation moves its runs again; any other is scheduled again.
  std::vector<std::optional<MovedSends>> moved(tiles.size());
  std::vector<char> unchanged(tiles.size(), 0);
  tbb::parallel_for(size_t{0}, tiles.size(), [&](size_t i) {
    const auto changed = changed_words(earlier_tiles[i], tiles[i]);
    if (!changed) return;
    if (changed->empty()) {
      unchanged[i] = 1;
      return;
    }
    bool any = false;
    if (i < earlier.moved.size() && earlier.moved[i]) {
      moved[i] = moved_again(*earlier.moved[i], earlier_tiles[i], tiles[i], *changed, any);
    }
    if (!moved[i]) moved[i] = scheduled_sends(earlier_tiles[i], tiles[i], *changed, any);
    if (moved[i] && !any) {
      moved[i].reset();
      unchanged[i] = 1;
    }
  });
  bool any_moved = false;
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (!moved[i] && !unchanged[i]) return false;
    any_moved = any_moved || moved[i].has_value();
  }
  // From here on the outcome changes, and a failure leaves it unspecified.
  outcome.schedules.clear();
  outcome.moved_writes.clear();
  if (!any_moved) {
    outcome.moved.clear();
    return true;
  }
  // Each moved sender's writes get their new sources, senders in parallel (each write has
  // one sender); any write that cannot move fails all.
  if (outcome.writes_by_sender.begin.empty()) outcome.writes_by_sender = writes_by_sender(outcome.writes, tiles.size());
  std::atomic<bool> stuck{false};
  std::vector<std::vector<uint32_t>> changed(tiles.size());
  tbb::parallel_for(size_t{0}, tiles.size(), [&](size_t sender) {
    if (!moved[sender]) return;
    move_sender_writes(machine, outcome, static_cast<uint32_t>(sender), *moved[sender], changed[sender], stuck);
  });
  if (stuck) return false;
  arch::flatten(changed, outcome.moved_writes);
  // Writes go by receiver, so each tile's receives are one range.
  const auto by_receiver = [](const WriteRun& w, uint32_t receiver) { return w.receiver < receiver; };
  std::atomic<bool> hazard{false};
  tbb::parallel_for(size_t{0}, tiles.size(), [&](size_t i) {
    if (!moved[i]) return;
    if (moved[i]->fixed_elements.empty()) {
      const auto& writes = outcome.writes;
      const auto first = std::lower_bound(writes.begin(), writes.end(), static_cast<uint32_t>(i), by_receiver);
      const auto last = std::lower_bound(first, writes.end(), static_cast<uint32_t>(i + 1), by_receiver);
      moved[i]->fixed_elements =
          fixed_elements(machine, tiles[i], moved[i]->row_bytes, std::span<const WriteRun>(first, last));
    }
    if (sends_meet_receives(machine, *moved[i])) hazard = true;
  });
  if (hazard) return false;
  outcome.moved = std::move(moved);
  return true;
}

}  // namespace lockstep::model
