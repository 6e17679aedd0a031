#pragma once
// Points of a phase plot that sit at exactly the same spot share one label. A merged
// label of more than kMaxMergedNames names, or longer than kMaxLabelChars, is replaced
// by a short form, "S1024 +3 [1]" (its first name, how many more, a footnote number), and
// the full list goes to footnote [1] under the plot and on the phase page, so no label is
// clipped or buries the points around it.
#include <cstddef>
#include <string>
#include <vector>

#include "report/plot.hpp"

namespace lockstep::replay {

inline constexpr size_t kMaxMergedNames = 2;
inline constexpr size_t kMaxLabelChars = 16;

struct PointGroup {
  double max_row_bytes = 0;
  double horizon = 0;
  std::vector<std::string> names;  // in point order
  std::string label;               // what the plot prints
  size_t footnote = 0;             // 1-based; 0: the label is the full list
  bool reference = false, frontier = false, passed = false;
};

struct Footnote {
  size_t number = 0;
  std::string text;  // every name of the group, joined by "/"
};

struct PlotGroups {
  std::vector<PointGroup> groups;  // in order of their first point
  std::vector<Footnote> footnotes;
};

PlotGroups group_points(const std::vector<PlotPoint>& points);

}  // namespace lockstep::replay
