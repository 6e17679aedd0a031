#include "report/plot_axis.hpp"

#include <algorithm>
#include <cmath>

namespace lockstep::replay {

namespace {

double nice_step(double raw) {
  if (raw <= 1) return 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * magnitude >= raw) return factor * magnitude;
  }
  return 10 * magnitude;
}

}  // namespace

AxisScale nice_axis(double min, double max, int target_ticks) {
  if (max < min) std::swap(min, max);
  double span = max - min;
  if (span <= 0) span = std::max(std::fabs(max) * 0.2, 2.0);
  AxisScale scale;
  const double margin = span * 0.07;
  scale.lo = min - margin;
  scale.hi = max + margin;
  if (max == min) {
    scale.lo = min - span / 2;
    scale.hi = max + span / 2;
  }
  if (min >= 0) scale.lo = std::max(0.0, scale.lo);
  const double step = nice_step((scale.hi - scale.lo) / std::max(1, target_ticks));
  for (double t = std::ceil(scale.lo / step) * step; t <= scale.hi + 1e-9; t += step) {
    scale.ticks.push_back(t);
  }
  return scale;
}

std::string tick_text(double value) {
  const long long v = std::llround(value);
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

}  // namespace lockstep::replay
