#pragma once
// Axis ranges and tick positions for report plots: round steps (1, 2 or 5 x 10^k) that
// cover the data with a little margin, so points never sit on the frame.
#include <string>
#include <vector>

namespace lockstep::replay {

struct AxisScale {
  double lo = 0;
  double hi = 1;
  std::vector<double> ticks;  // increasing, all within [lo, hi]
  // Maps a data value to [0, 1] along the axis.
  double fraction(double value) const { return (value - lo) / (hi - lo); }
};

// A scale for data in [min, max] (integers: steps are never below 1), about
// `target_ticks` ticks. Never extends below zero when the data is non-negative.
AxisScale nice_axis(double min, double max, int target_ticks = 8);

// Integer tick text with thousands separators: 19194 -> "19,194".
std::string tick_text(double value);

}  // namespace lockstep::replay
