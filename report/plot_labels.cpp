#include "report/plot_labels.hpp"

#include <algorithm>
#include <limits>

namespace lockstep::replay {

double Box::overlap(const Box& other) const {
  const double dx = std::min(x + w, other.x + other.w) - std::max(x, other.x);
  const double dy = std::min(y + h, other.y + other.h) - std::max(y, other.y);
  return dx > 0 && dy > 0 ? dx * dy : 0;
}

namespace {

// Candidate boxes around the anchor at clearance `d`: right, left, above, below, then
// the four diagonals.
std::vector<Box> candidates(const LabelRequest& r, double d) {
  const double w = r.width, h = r.height, x = r.anchor_x, y = r.anchor_y;
  const double diagonal = d * 0.75;
  return {
      {x + d, y - h / 2, w, h},
      {x - d - w, y - h / 2, w, h},
      {x - w / 2, y - d - h, w, h},
      {x - w / 2, y + d, w, h},
      {x + diagonal, y - diagonal - h, w, h},
      {x + diagonal, y + diagonal, w, h},
      {x - diagonal - w, y - diagonal - h, w, h},
      {x - diagonal - w, y + diagonal, w, h},
  };
}

double outside(const Box& b, const Box& area) { return b.w * b.h - b.overlap(area); }

}  // namespace

std::vector<LabelPlacement> place_labels(const std::vector<LabelRequest>& requests, const std::vector<Box>& obstacles,
                                         const Box& area) {
  std::vector<LabelPlacement> placed;
  std::vector<Box> taken;
  for (const auto& request : requests) {
    LabelPlacement best;
    double best_cost = std::numeric_limits<double>::infinity();
    bool free_spot = false;
    // Clearance levels: beside the point, then further out with a leader line.
    const double levels[] = {1.0, 2.6, 4.2};
    for (size_t level = 0; level < std::size(levels) && !free_spot; ++level) {
      for (const Box& box : candidates(request, request.gap * levels[level])) {
        double cost = outside(box, area) * 100;
        for (const Box& t : taken) cost += box.overlap(t) * 10;
        for (const Box& o : obstacles) cost += box.overlap(o);
        if (cost == 0) {
          best = {box, level > 0};
          free_spot = true;
          break;
        }
        // A crowded near spot beats a crowded far one unless it is clearly worse.
        cost += static_cast<double>(level) * 20;
        if (cost < best_cost) {
          best_cost = cost;
          best = {box, level > 0};
        }
      }
    }
    taken.push_back(best.box);
    placed.push_back(best);
  }
  return placed;
}

}  // namespace lockstep::replay
