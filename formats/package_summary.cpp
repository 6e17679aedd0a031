#include "formats/package_summary.hpp"

#include <algorithm>

namespace lockstep::arch {

StepCounts count_steps(const std::vector<Step>& steps) {
  StepCounts counts{};
  for (const Step& step : steps) {
    ++counts[step.kind.index()];
    if (const auto* r = std::get_if<RepeatStep>(&step.kind)) {
      const StepCounts inner = count_steps(r->body);
      for (size_t k = 0; k < counts.size(); ++k) counts[k] += inner[k];
    }
  }
  return counts;
}

PackageSummary summarize_package(const Package& package) {
  PackageSummary out;
  for (const TileProgram& t : package.tiles) {
    TileSummary s;
    s.tile = t.tile;
    s.table_bytes = t.table.size;
    s.segments = t.segments.size();
    for (const Segment& seg : t.segments) s.segment_bytes += seg.size;
    s.steps = count_steps(t.steps);
    out.max_table_bytes = std::max(out.max_table_bytes, s.table_bytes);
    out.total_table_bytes += s.table_bytes;
    for (size_t k = 0; k < s.steps.size(); ++k) {
      out.total_steps[k] += s.steps[k];
      out.max_steps_per_tile[k] = std::max(out.max_steps_per_tile[k], s.steps[k]);
    }
    out.tiles.push_back(s);
  }
  return out;
}

}  // namespace lockstep::arch
