#include "report/frontier.hpp"

#include "io/csv.hpp"

namespace lockstep::replay {

namespace {

bool same_metrics(const ResultRow& a, const ResultRow& b) {
  return a.horizon == b.horizon && a.max_row_bytes == b.max_row_bytes && a.total_row_bytes == b.total_row_bytes;
}

}  // namespace

bool dominates(const ResultRow& a, const ResultRow& b) {
  const bool no_worse =
      a.horizon <= b.horizon && a.max_row_bytes <= b.max_row_bytes && a.total_row_bytes <= b.total_row_bytes;
  return no_worse && !same_metrics(a, b);
}

std::vector<size_t> frontier_points(const std::vector<ResultRow>& rows) {
  std::vector<size_t> frontier;
  for (const auto& phase : group_by_phase(rows)) {
    for (size_t i = 0; i < phase.rows.size(); ++i) {
      const ResultRow& candidate = rows[phase.rows[i]];
      if (!candidate.payload_pass) continue;
      bool kept = true;
      for (size_t j = 0; j < phase.rows.size() && kept; ++j) {
        const ResultRow& other = rows[phase.rows[j]];
        if (j == i || !other.payload_pass) continue;
        // An earlier point with identical metrics stands for this one.
        if (dominates(other, candidate) || (j < i && same_metrics(other, candidate))) {
          kept = false;
        }
      }
      if (kept) frontier.push_back(phase.rows[i]);
    }
  }
  return frontier;
}

std::string frontier_csv_text(const std::vector<ResultRow>& rows, const std::vector<size_t>& frontier) {
  std::string out = "phase,label,config,width,horizon,max_row_bytes,total_row_bytes\n";
  for (size_t index : frontier) {
    const ResultRow& r = rows[index];
    out += std::to_string(r.phase) + "," + arch::csv_field(r.label) + "," + r.config + "," + width_name(r.width) + "," +
           std::to_string(r.horizon) + "," + std::to_string(r.max_row_bytes) + "," + std::to_string(r.total_row_bytes) +
           "\n";
  }
  return out;
}

}  // namespace lockstep::replay
