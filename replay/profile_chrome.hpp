#pragma once
// A cycle profile in the Chrome trace event format (the JSON that Perfetto and
// chrome://tracing open): one thread per tile, one complete ("X") event per sample.
#include <ostream>

#include "arch/profile.hpp"

namespace lockstep::replay {

// Times are microseconds at the profile's clock (cycles in args.cycles); events in tile,
// then sample order, so the same profile gives the same bytes.
void write_chrome_trace(const arch::Profile& profile, std::ostream& out);

}  // namespace lockstep::replay
