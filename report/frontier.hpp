#pragma once
// The frontier of a phase: its Pareto-optimal points over (horizon, max row bytes,
// total row bytes), all three to be minimised. Only points whose payload passed qualify.
#include <string>
#include <vector>

#include "results/results.hpp"

namespace lockstep::replay {

// True if `a` dominates `b`: <= in all three metrics and < in at least one.
bool dominates(const ResultRow& a, const ResultRow& b);

// Indices into `rows` of the frontier points, per phase in increasing phase order and
// within a phase in results order. A point is kept unless another passing point of its
// phase dominates it; of several passing points with exactly equal metrics only the first
// in results order is kept.
std::vector<size_t> frontier_points(const std::vector<ResultRow>& rows);

// frontier.csv: phase,label,config,width,horizon,max_row_bytes,total_row_bytes
std::string frontier_csv_text(const std::vector<ResultRow>& rows, const std::vector<size_t>& frontier);

}  // namespace lockstep::replay
