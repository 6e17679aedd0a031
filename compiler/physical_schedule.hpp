#pragma once
// Physical scheduling: every message of an order gets the earliest issue event at which it
// obeys every rule of docs/scheduling.md ("Physical rules"), taking messages in order and
// backfilling gaps left by earlier ones.
#include "compiler/schedule_model.hpp"

namespace lockstep::compiler {

// With `single_controls`, no PIC control may share an event with an XPIC control on any
// tile (so no row needs a sendpicp); used when a row could not align one.
Placement place_order(const PhaseProblem& problem, const Order& order, bool single_controls = false);

// The horizon a placement implies, and the tile that sets it (recomputed from the issues).
void compute_horizon(const PhaseProblem& problem, const Order& order, Placement& placement);

}  // namespace lockstep::compiler
