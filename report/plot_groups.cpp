#include "report/plot_groups.hpp"

#include <map>
#include <utility>

namespace lockstep::replay {

PlotGroups group_points(const std::vector<PlotPoint>& points) {
  PlotGroups out;
  std::map<std::pair<double, double>, size_t> group_of;
  for (const PlotPoint& p : points) {
    const auto key = std::make_pair(p.max_row_bytes, p.horizon);
    auto [it, inserted] = group_of.try_emplace(key, out.groups.size());
    if (inserted) {
      PointGroup g;
      g.max_row_bytes = p.max_row_bytes;
      g.horizon = p.horizon;
      out.groups.push_back(g);
    }
    PointGroup& g = out.groups[it->second];
    g.names.push_back(p.name);
    g.reference |= p.reference;
    g.frontier |= p.on_frontier;
    g.passed |= p.passed;
  }
  for (PointGroup& g : out.groups) {
    std::string full;
    for (const auto& name : g.names) full += (full.empty() ? "" : "/") + name;
    if (g.names.size() <= kMaxMergedNames && full.size() <= kMaxLabelChars) {
      g.label = full;
      continue;
    }
    g.footnote = out.footnotes.size() + 1;
    out.footnotes.push_back({g.footnote, full});
    g.label = g.names.front() + (g.names.size() > 1 ? " +" + std::to_string(g.names.size() - 1) : "") + " [" +
              std::to_string(g.footnote) + "]";
  }
  return out;
}

}  // namespace lockstep::replay
