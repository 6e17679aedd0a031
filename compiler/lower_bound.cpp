// phase_lower_bound: a horizon no schedule obeying docs/ipu21-exchange.md can beat.
//
// Proof (Word32; every item is one 32-bit word):
//  * Sender s with L_s items. A tile emits at most one item per event and item k of a send
//    issued at t leaves at t+1+k with t >= 0, so s's last item leaves at event
//    e >= first + L_s - 1, where first >= 1 is the event of its first item. A message to d
//    issued at t has its first word at d's mux at t+1+ttm(s,d), and the XPIC control that
//    selects it must take effect at an event >= 1 (every control is carried by an
//    instruction that ends on, or issues before, its event), so t >= -ttm(s,d) for every
//    receiver d of that message: first >= 1 + min over s's transfers of
//    max(0, max_d -ttm(s,d)).
//    The last item is selected by some receiver d of its transfer at e + ttm(s,d), written
//    at + W(d), and d's row ends at least 6 events after its last write (section 6's receive
//    row shape). The sender's own row ends at e. Hence
//      horizon >= e + max(0, min over receivers d of s of (ttm(s,d) + W(d) + 6)).
//  * Receiver d with R_d items: its mux selects at most one word per event (windows do not
//    overlap, hazard 7), each at an event >= max(1, 1 + ttm(s,d)) for its sender s (the
//    word left at >= 1 and the XPIC acts at >= 1). The last of R_d distinct events is
//    >= min_s max(1, 1 + ttm(s,d)) + R_d - 1; its write is W(d) later and the row ends 6
//    after that.
// The phase bound is the maximum over all tiles of both.
//
// Paired64: a transfer that may pair (paired_eligible) costs words / 2 items at its sender
// and at each receiver (both members of a pair write one item per event). Its item k
// reaches the early member's paired mux at issue + pttm(s,d) + k (section 6), so it may
// issue at 1 - pttm(s,d) at the earliest; the bound takes -pttm(s,d), below both that and
// the Word32 value -ttm (pttm >= ttm), so it holds whichever width the transfer gets. Every
// other term keeps its Word32 value, which is never larger than the paired one: a paired
// item reaches the mux no earlier than max(1, pttm) >= max(1, ttm) and is written
// W + 1 events later, so its write and its row end come no earlier than a word's would.
#include <algorithm>
#include <limits>
#include <vector>

#include "compiler/phase_schedule.hpp"
#include "compiler/schedule_model.hpp"

namespace lockstep::compiler {

uint32_t phase_lower_bound(const arch::CapturePhase& phase, const arch::Topology& topology, Width width) {
  std::vector<bool> paired(phase.transfers.size(), false);
  if (width == Width::Paired64) paired = paired_eligible(phase, topology);
  const uint32_t tiles = topology.tiles();              // logical ids
  const uint32_t physical = topology.physical_tiles();  // per-tile arrays are by physical id
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  constexpr int64_t kTail = 6;
  std::vector<int64_t> send_items(physical, 0), recv_items(physical, 0);
  std::vector<int64_t> first_send(physical, kNone), first_recv(physical, kNone), route_tail(physical, kNone);
  for (size_t i = 0; i < phase.transfers.size(); ++i) {
    const arch::Transfer& transfer = phase.transfers[i];
    if (transfer.source_tile >= tiles) continue;
    const int64_t items = paired[i] ? transfer.words / 2 : transfer.words;
    const uint32_t s = topology.physical(transfer.source_tile);
    int64_t earliest_issue = 0;
    for (const arch::Destination& dest : transfer.destinations) {
      if (dest.tile >= tiles) continue;
      const uint32_t d = topology.physical(dest.tile);
      const int64_t ttm = topology.time_to_mux(s, d);
      earliest_issue = std::max<int64_t>(earliest_issue, paired[i] ? -topology.paired_time_to_mux(s, d) : -ttm);
      recv_items[d] += items;
      first_recv[d] = std::min(first_recv[d], std::max<int64_t>(1, 1 + ttm));
      route_tail[s] = std::min(route_tail[s], ttm + topology.write_delay(d) + kTail);
    }
    send_items[s] += items;
    first_send[s] = std::min(first_send[s], 1 + earliest_issue);
  }
  int64_t bound = 0;
  for (uint32_t t = 0; t < physical; ++t) {
    if (send_items[t] > 0) {
      const int64_t last = first_send[t] + send_items[t] - 1;
      bound = std::max(bound, last + std::max<int64_t>(0, route_tail[t] == kNone ? 0 : route_tail[t]));
    }
    if (recv_items[t] > 0) bound = std::max(bound, first_recv[t] + recv_items[t] - 1 + topology.write_delay(t) + kTail);
  }
  return static_cast<uint32_t>(bound);
}

}  // namespace lockstep::compiler
