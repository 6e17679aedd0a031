#pragma once
// Row encoding: one tile's plan as a single sequential stream of exchange instructions
// (docs/scheduling.md, "Row encoding").
#include "compiler/encode_plan.hpp"
#include "compiler/phase_schedule.hpp"
#include "io/errors.hpp"

namespace lockstep::compiler {

// A row needed a sendpicp at an even word index and no instruction could be split or
// widened to get there.
class AlignmentError : public CompilerError {
 public:
  using CompilerError::CompilerError;
};

// May add a companion control that changes nothing to `plan` when it needs a sendpicp at an
// even word index (see encode_row.cpp); the row check then expects it.
TileRow encode_tile_row(const PhaseProblem& problem, const Order& order, TilePlan& plan);

}  // namespace lockstep::compiler
