#pragma once
// Row encoding: one tile's plan as a single sequential stream of exchange instructions
// (docs/scheduling.md, "Row encoding").
#include "compiler/encode_plan.hpp"
#include "compiler/phase_schedule.hpp"

namespace lockstep::compiler {

TileRow encode_tile_row(const PhaseProblem& problem, const Order& order, const TilePlan& plan);

}  // namespace lockstep::compiler
