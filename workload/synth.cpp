// The four plain traffic families and the entry point; the transformer family is in
// synth_transformer.cpp.
#include "workload/synth.hpp"

#include <algorithm>
#include <numeric>

#include "io/errors.hpp"
#include "workload/synth_builder.hpp"
#include "workload/synth_random.hpp"

namespace lockstep::workload {

arch::Capture synthesize_transformer(const SynthOptions& options, const arch::MachineDescription& machine,
                                     uint32_t tiles, uint32_t phases);

namespace {

constexpr uint64_t kPhaseStream = 1;

// Distinct tiles other than `source`, uniformly drawn (partial Fisher-Yates over a pool).
std::vector<uint32_t> distinct_others(SynthRandom& random, uint32_t tiles, uint32_t source, uint32_t count,
                                      std::vector<uint32_t>& pool) {
  count = std::min(count, tiles - 1);
  std::vector<uint32_t> chosen;
  chosen.reserve(count);
  if (count * 4 < tiles) {  // sparse: rejection is cheaper than touching the pool
    while (chosen.size() < count) {
      const uint32_t d = random.below(tiles);
      if (d != source && std::find(chosen.begin(), chosen.end(), d) == chosen.end()) {
        chosen.push_back(d);
      }
    }
    return chosen;
  }
  pool.resize(tiles);
  std::iota(pool.begin(), pool.end(), 0u);
  std::swap(pool[source], pool[tiles - 1]);
  for (uint32_t i = 0; i < count; ++i) {
    std::swap(pool[i], pool[i + random.below(tiles - 1 - i)]);
    chosen.push_back(pool[i]);
  }
  return chosen;
}

void permutation_phase(SynthPhaseBuilder& b, SynthRandom& random, uint32_t tiles) {
  std::vector<uint32_t> image(tiles);
  std::iota(image.begin(), image.end(), 0u);
  for (uint32_t i = tiles - 1; i > 0; --i) std::swap(image[i], image[random.below(i + 1)]);
  // Make it a derangement: a fixed point swaps images with its neighbour.
  for (uint32_t s = 0; s < tiles; ++s) {
    if (image[s] == s) std::swap(image[s], image[(s + 1) % tiles]);
  }
  for (uint32_t s = 0; s < tiles; ++s) {
    const uint32_t d = image[s];
    b.add(s, std::span<const uint32_t>(&d, 1), random.log_between(1, 2048));
  }
}

void uniform_phase(SynthPhaseBuilder& b, SynthRandom& random, uint32_t tiles) {
  std::vector<uint32_t> pool;
  for (uint32_t s = 0; s < tiles; ++s) {
    for (uint32_t d : distinct_others(random, tiles, s, 32, pool)) {
      b.add(s, std::span<const uint32_t>(&d, 1), random.log_between(1, 256));
    }
  }
}

void skewed_phase(SynthPhaseBuilder& b, SynthRandom& random, uint32_t tiles) {
  std::vector<uint32_t> pool;
  const uint32_t hot_count = std::max(1u, tiles / 32);
  std::vector<uint32_t> hot(tiles);
  std::iota(hot.begin(), hot.end(), 0u);
  for (uint32_t i = 0; i < hot_count; ++i) std::swap(hot[i], hot[i + random.below(tiles - i)]);
  hot.resize(hot_count);
  for (uint32_t s = 0; s < tiles; ++s) {
    for (int k = 0; k < 4; ++k) {
      uint32_t d = random.chance(1, 2) ? hot[random.below(static_cast<uint32_t>(hot.size()))] : random.below(tiles);
      if (d == s) d = (s + 1) % tiles;
      b.add(s, std::span<const uint32_t>(&d, 1), random.log_between(1, 512));
    }
  }
}

// A quarter of the pairs (L, L+1) keep their second tile out of the phase so that the
// first may send 64-bit paired items (its partner must idle, docs/scheduling.md "Paired64"):
// it multicasts 128..256 words to complete pairs. Everyone else multicasts as before, among
// the tiles that take part.
void multicast_phase(SynthPhaseBuilder& b, SynthRandom& random, uint32_t tiles) {
  std::vector<uint32_t> pool;
  std::vector<uint8_t> quiet(tiles, 0);
  for (uint32_t p = 0; p + 1 < tiles; p += 2) quiet[p + 1] = random.chance(1, 4) ? 1 : 0;
  std::vector<uint32_t> active, open_pairs, index(tiles, 0);
  for (uint32_t t = 0; t < tiles; ++t) {
    if (quiet[t]) continue;
    index[t] = static_cast<uint32_t>(active.size());
    active.push_back(t);
    if (t % 2 == 0 && t + 1 < tiles && !quiet[t + 1]) open_pairs.push_back(t);
  }
  const auto active_count = static_cast<uint32_t>(active.size());
  const auto pair_count = static_cast<uint32_t>(open_pairs.size());
  std::vector<uint32_t> dests;
  for (uint32_t s : active) {
    const bool sends_pairs = s % 2 == 0 && s + 1 < tiles && quiet[s + 1] && pair_count > 0;
    for (int k = 0; k < 3; ++k) {
      const uint32_t pick = random.below(100);
      const uint32_t fanout = pick < 50   ? random.between(2, 4)
                              : pick < 85 ? random.between(5, 16)
                                          : random.between(17, 64);
      dests.clear();
      if (sends_pairs) {
        // Index pair_count stands for no pair: distinct_others never picks it.
        for (uint32_t i : distinct_others(random, pair_count + 1, pair_count, std::max(1u, fanout / 2), pool)) {
          dests.push_back(open_pairs[i]);
          dests.push_back(open_pairs[i] + 1);
        }
        b.add(s, dests, random.log_between(128, 256));
        continue;
      }
      if (active_count < 2) break;
      for (uint32_t i : distinct_others(random, active_count, index[s], fanout, pool)) dests.push_back(active[i]);
      b.add(s, dests, random.log_between(1, 256));
    }
  }
}

}  // namespace

const std::vector<std::string>& synth_family_names() {
  static const std::vector<std::string> names = {"permutation", "uniform", "skewed", "multicast", "transformer"};
  return names;
}

SynthFamily parse_synth_family(const std::string& name) {
  const auto& names = synth_family_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<SynthFamily>(i);
  }
  std::string choices;
  for (const auto& n : names) choices += (choices.empty() ? "" : ", ") + n;
  throw InputError("--family: unknown family '" + name + "' (choose from " + choices + ")");
}

std::string synth_family_name(SynthFamily family) { return synth_family_names().at(static_cast<size_t>(family)); }

uint32_t synth_default_phases(SynthFamily family) { return family == SynthFamily::Transformer ? 80 : 8; }

arch::Capture synthesize_capture(const SynthOptions& options, const arch::MachineDescription& machine) {
  const uint32_t tiles = options.tiles == 0 ? machine.tiles : options.tiles;
  if (tiles < 2 || tiles > machine.tiles) {
    throw InputError("--tiles: " + std::to_string(tiles) + " outside [2, " + std::to_string(machine.tiles) +
                     "] (tiles of " + machine.name + ")");
  }
  const uint32_t phases = options.phases == 0 ? synth_default_phases(options.family) : options.phases;
  if (phases > 100000) throw InputError("--phases: " + std::to_string(phases) + " is more than 100000");
  if (options.family == SynthFamily::Transformer) {
    return synthesize_transformer(options, machine, tiles, phases);
  }
  const SynthRegions regions = SynthRegions::of(machine);
  arch::Capture capture;
  capture.machine_name = machine.name;
  const std::string family = synth_family_name(options.family);
  capture.phases.resize(phases);
  for (uint32_t p = 0; p < phases; ++p) {
    arch::CapturePhase& phase = capture.phases[p];
    phase.id = p;
    phase.label = family + "." + std::to_string(p);
    phase.operation = family;
    SynthRandom random = synth_stream(options.seed, kPhaseStream, p);
    SynthPhaseBuilder builder(regions, tiles, random, phase);
    switch (options.family) {
      case SynthFamily::Permutation:
        permutation_phase(builder, random, tiles);
        break;
      case SynthFamily::Uniform:
        uniform_phase(builder, random, tiles);
        break;
      case SynthFamily::Skewed:
        skewed_phase(builder, random, tiles);
        break;
      case SynthFamily::Multicast:
        multicast_phase(builder, random, tiles);
        break;
      case SynthFamily::Transformer:
        break;
    }
  }
  return capture;
}

}  // namespace lockstep::workload
