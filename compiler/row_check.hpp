#pragma once
// Decode-and-verify: every encoded row is decoded again with the instruction codec and
// executed on a small event model independent of the encoder; its item departures,
// controls, end event and per-iteration address fields must equal the plan.
#include <vector>

#include "compiler/encode_plan.hpp"
#include "compiler/phase_schedule.hpp"

namespace lockstep::compiler {

// Throws CompilerError("encoding: phase P tile T event E: ...") on the first mismatch.
void check_row(const PhaseProblem& problem, const Order& order, const TilePlan& plan, const TileRow& row);

}  // namespace lockstep::compiler
