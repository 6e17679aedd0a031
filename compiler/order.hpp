#pragma once
// Orders: the sequence of messages (chunks of transfers) handed to the physical scheduler.
// Definitions in docs/scheduling.md ("Orders"). Chunk sizes, waves and loads count items
// (a 32-bit word, or a 64-bit pair of words of a paired transfer), written W "words" below.
#include <vector>

#include "compiler/schedule_model.hpp"

namespace lockstep::compiler {

// S(W): every transfer cut into chunks of at most W words (W = 0: uncut), sorted by the
// heavier endpoint's total load (descending), then transfer, then chunk.
Order stream_order(const PhaseProblem& problem, uint32_t chunk_words);

// B(W): chunks of at most W words packed first-fit into waves in which no tile sends more
// than W words or receives more than W words; the order lists wave 0, wave 1, ...
Order balanced_order(const PhaseProblem& problem, uint32_t wave_words);

// Remaining-combined: chunks of at most W words; repeatedly take the chunk whose busiest
// endpoint has the most remaining (not yet ordered) send + receive words.
Order remaining_combined_order(const PhaseProblem& problem, uint32_t chunk_words);

// Maximum-matching waves (balanced point-to-point phases): every wave is a maximum
// matching of senders to receivers among the remaining transfers, each transfer cut into
// chunks of at most W words. Empty when the phase has a multicast.
Order matching_order(const PhaseProblem& problem, uint32_t chunk_words);

// Critical-path repair: the messages touching `tile` move to the front, keeping their
// relative order.
Order promote_tile(const PhaseProblem& problem, const Order& order, uint32_t tile);

// Automatic: Balanced when the phase is endpoint-balanced (the busiest tile carries at most
// twice the mean load of the busy tiles), else Stream; both with W = 1024.
bool phase_is_balanced(const PhaseProblem& problem);

}  // namespace lockstep::compiler
