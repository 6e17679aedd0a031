#pragma once
// The payload proof's expected values: what every checksum slot holds after every iteration,
// and what every destination range holds at the end, for a package whose source memory
// starts as payload tokens.
//
// The same answer as following the data through a ProofMemory (the reference model,
// compiler/proof_memory.hpp, used by the tests), computed in a way that scales to the whole
// model: a phase's destination ranges are rewritten completely in every iteration, so who
// wrote which byte of them (the phase's write plan) is worked out once per phase, and an
// iteration only reads its transfers' sources and composes digests from those reads. Ranges
// that receive the same transfers in the same layout (multicast receivers) share one digest,
// and content seen before (iterations reading unchanged sources) is not hashed again. Reads
// and digests of one iteration, the write plans and the final ranges run in parallel, every
// result kept by index, so the expectations do not depend on the thread count.
#include <cstdint>
#include <functional>
#include <vector>

#include "compiler/proof_plan.hpp"
#include "formats/capture.hpp"
#include "formats/package.hpp"

namespace lockstep::compiler {

// A checksum after a phase's exchange on one tile: one 8-byte digest per iteration, from
// slot_address on. One range is hashed directly; several are hashed one by one and the
// digest is that of their digests.
struct ProofChecksum {
  std::vector<Span> ranges;
  uint32_t slot_address = 0;
};

struct ProofTile {
  uint32_t tile = 0;
  std::vector<Span> sources;                          // merged; hold payload tokens at the start
  std::vector<std::vector<Span>> destinations;        // per phase position, merged
  std::vector<std::vector<ProofChecksum>> checksums;  // per phase position
};

// (iterations proved, all iterations): called after every iteration of every phase.
using ProofProgress = std::function<void(uint64_t, uint64_t)>;

// Phases run in the given order, each with all its iterations; iteration i of a transfer reads
// source_addresses[i % size], every transfer reads before any writes. Returns the slot
// expectations (every iteration's digests) and the final-state expectations of every tile's
// merged destination ranges (chunks of kExpectationChunkBytes, exact bytes up to
// kExactExpectationBytes, digests above), sorted by tile and address.
std::vector<arch::Expectation> prove_payload(const std::vector<const arch::CapturePhase*>& phases,
                                             const std::vector<ProofTile>& tiles, uint64_t token_seed,
                                             const ProofProgress& progress = {});

}  // namespace lockstep::compiler
