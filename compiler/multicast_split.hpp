#pragma once
// Receiver groups for wide multicast transfers. A multicast message needs every receiver's
// mux on the sender at once, so a transfer to dozens of tiles waits for a window that is
// free on all of them together. Sending the same words again to smaller groups trades
// sender time, usually idle in multicast phases, for windows that are easy to find.
#include <cstdint>

#include "arch/topology.hpp"
#include "formats/capture.hpp"

namespace lockstep::compiler {

// The phase with each transfer of more than `group` destinations cut into groups of at most
// `group` destinations (neighbouring physical tiles together), largest fan-out first, as
// long as the sender's items stay within the phase's largest per-tile receive load. Same
// source addresses, so every destination word still comes from the same source word.
// With `keep_paired`, transfers eligible for 64-bit items (paired_eligible) stay whole: a
// group could split a receiving pair, and the transfer would lose its paired width. The
// groups of a split transfer never go paired (allow_paired false), so a phase with no
// eligible transfer splits, and then schedules, the same under either width.
arch::CapturePhase split_multicast(const arch::CapturePhase& phase, const arch::Topology& topology, uint32_t group,
                                   bool keep_paired = false);

}  // namespace lockstep::compiler
