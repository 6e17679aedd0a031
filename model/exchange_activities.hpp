#pragma once
// What each tile did during one exchange phase, for cycle profiles: its send, receive and
// partner-busy intervals in events from the release (IPU21-DEVICE.md 15.2). Timing only,
// so a phase relocated or repeated with the same timing shares one set.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/exchange_phase.hpp"
#include "profile/profile.hpp"

namespace lockstep::model {

struct PhaseActivities {
  std::vector<std::vector<arch::ExchangeActivity>> per_tile;  // by position in the phase's tiles
  std::vector<int64_t> row_end;                               // by position: the event the tile's row returned at
  int64_t horizon = 0;
};

// From an executed phase (its schedules still present): sends are the event spans of each
// send run, receives the write spans, and a paired (64-bit) sender's partner (physical XOR 2)
// is busy from the send's issue to the sender row's end (IPU21-EXCHANGE.md, paired
// transfers). Overlapping or touching intervals of one kind merge; negative events clip to 0.
std::shared_ptr<const PhaseActivities> exchange_activities(const PhaseOutcome& outcome,
                                                           std::span<const PhaseTile> tiles);

}  // namespace lockstep::model
