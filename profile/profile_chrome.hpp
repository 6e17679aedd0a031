#pragma once
// A cycle profile in the Chrome trace event format (the JSON that Perfetto and
// chrome://tracing open): one thread per tile, one complete ("X") event per sample.
#include <cstdint>
#include <optional>
#include <ostream>
#include <set>

#include "profile/profile.hpp"

namespace lockstep::replay {

// Which samples to export (a whole model's trace is 1.7 GB; one invocation or a few tiles
// open quickly in Perfetto).
struct ChromeTraceOptions {
  std::optional<std::set<uint32_t>> tiles;  // physical tiles; all when empty
  std::optional<uint32_t> invocation;       // all when empty
};

// Times are microseconds at the profile's clock (cycles in args.cycles); events in tile,
// then sample order, so the same profile gives the same bytes.
void write_chrome_trace(const arch::Profile& profile, const ChromeTraceOptions& options, std::ostream& out);

}  // namespace lockstep::replay
