#pragma once
// The synthesizer's random numbers: splitmix64 and our own range reduction, so a seed
// gives the same capture with every standard library (std distributions are not portable).
#include <algorithm>
#include <cstdint>

namespace lockstep::workload {

class SynthRandom {
 public:
  explicit SynthRandom(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); n > 0.
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(((next() >> 32) * uint64_t{n}) >> 32); }
  // Uniform in [lo, hi]; lo <= hi.
  uint32_t between(uint32_t lo, uint32_t hi) { return lo + below(hi - lo + 1); }
  // True with probability num/den.
  bool chance(uint32_t num, uint32_t den) { return below(den) < num; }
  // Sizes spread over orders of magnitude, as real traffic is: log-uniform in [lo, hi].
  uint32_t log_between(uint32_t lo, uint32_t hi) {
    uint32_t octaves = 0;
    while ((uint64_t{lo} << (octaves + 1)) <= hi) ++octaves;
    const uint32_t octave = below(octaves + 1);
    const uint64_t top = std::min<uint64_t>(hi, (uint64_t{lo} << (octave + 1)) - 1);
    const uint32_t bottom = static_cast<uint32_t>(uint64_t{lo} << octave);
    return between(bottom, static_cast<uint32_t>(std::max<uint64_t>(top, bottom)));
  }

 private:
  uint64_t state_;
};

// An independent stream per (seed, purpose, index).
inline SynthRandom synth_stream(uint64_t seed, uint64_t purpose, uint64_t index) {
  SynthRandom mix(seed ^ (purpose * 0xd6e8feb86659fd93ull) ^ (index * 0xa0761d6478bd642full));
  return SynthRandom(mix.next());
}

}  // namespace lockstep::workload
