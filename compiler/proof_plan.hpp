#pragma once
// The payload proof of a package: which destination spans each tile checksums after an
// exchange, where the digests go, and what every digest and destination must hold.
#include <cstdint>
#include <vector>

#include "arch/machine.hpp"
#include "formats/capture.hpp"
#include "formats/package.hpp"

namespace lockstep::compiler {

struct Span {
  uint32_t address = 0;
  uint32_t bytes = 0;
};

// Byte ranges, sorted and merged (touching ranges join).
std::vector<Span> merge_spans(std::vector<Span> ranges);

// Per phase position, per tile position: whether a checksum follows the exchange. Iterated
// phases always do (each iteration overwrites the last); others only when a later phase
// writes into their destinations, so the end state no longer shows their delivery.
std::vector<std::vector<bool>> checksum_needed(const std::vector<const arch::CapturePhase*>& phases,
                                               const std::vector<std::vector<std::vector<Span>>>& destinations);

// Final-state expectations of destination ranges: exact bytes for short ranges, digests
// for long ones, at most `chunk_bytes` each.
inline constexpr uint32_t kExpectationChunkBytes = 4096;
inline constexpr uint32_t kExactExpectationBytes = 64;

}  // namespace lockstep::compiler
