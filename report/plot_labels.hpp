#pragma once
// Placing point labels so they do not overlap each other or the markers: each label
// tries positions around its point, nearest first, and takes the first free one (or the
// least-overlapping one when none is free). Greedy and deterministic.
#include <vector>

namespace lockstep::replay {

struct Box {
  double x = 0, y = 0, w = 0, h = 0;  // top-left corner and size, y downwards
  double overlap(const Box& other) const;
};

struct LabelRequest {
  double anchor_x = 0, anchor_y = 0;  // the point, in device units
  double width = 0, height = 0;       // the text's box
  double gap = 7;                     // clearance between the point and the label
};

struct LabelPlacement {
  Box box;
  bool leader = false;  // placed away from its point: draw a line to it
};

// Places labels in the given order (earlier ones get the better spots). `obstacles` are
// boxes no label should cover (markers); `area` is where labels must stay.
std::vector<LabelPlacement> place_labels(const std::vector<LabelRequest>& requests, const std::vector<Box>& obstacles,
                                         const Box& area);

}  // namespace lockstep::replay
