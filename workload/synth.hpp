#pragma once
// Synthetic captures: realistic phases of transfers for families of traffic patterns, at
// any tile count, the same bytes for the same seed. Used by tests, demos and the
// compile-time benchmark (`lockstep capture synth`).
#include <cstdint>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/capture.hpp"

namespace lockstep::workload {

enum class SynthFamily : uint8_t {
  Permutation,  // every tile sends one block to its image under a random derangement
  Uniform,      // all-to-all (each tile to min(N-1, 32) distinct uniformly drawn tiles)
  Skewed,       // hot spots: half the transfers go to a few hot tiles
  Multicast,    // multicast-heavy: 2..64 destinations per transfer
  Transformer,  // attention/MLP-like phases; the layer body is a Repeat of 27
};

struct SynthOptions {
  SynthFamily family = SynthFamily::Permutation;
  uint32_t tiles = 0;  // tiles 0..tiles-1 take part; 0 = all of the machine's tiles
  uint64_t seed = 1;
  uint32_t phases = 0;  // 0 = the family's default (synth_default_phases)
};

SynthFamily parse_synth_family(const std::string& name);  // InputError naming the choices
std::string synth_family_name(SynthFamily family);
const std::vector<std::string>& synth_family_names();
uint32_t synth_default_phases(SynthFamily family);

// InputError if the options do not fit the machine (tiles < 2 or > machine tiles, ...).
arch::Capture synthesize_capture(const SynthOptions& options, const arch::MachineDescription& machine);

}  // namespace lockstep::workload
