#pragma once
// The cross-check's scatter plot: device cycles (y) against simulated cycles (x) on log-log
// axes, one point per phase, kernel and the total, with the y = x line. Drawn once with
// cairo, rendered to SVG and PNG from that one drawing. Deterministic bytes.
#include <string>

#include "sim/device/crosscheck.hpp"

namespace lockstep::replay {

struct ScatterFiles {
  std::string svg;
  std::string png;
};

// Rows with a zero or a missing value on either side cannot sit on log axes: they are left
// out and counted in the subtitle.
ScatterFiles render_crosscheck_scatter(const Crosscheck& check);

}  // namespace lockstep::replay
