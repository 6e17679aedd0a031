#pragma once
// A compact model of what transfer data holds over a run, for the payload proof: every
// word is zero, or the payload token of some (origin tile, origin address). Copies move
// origins, never bytes, so the model grows with transfers, not with words.
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

namespace lockstep::compiler {

class ProofMemory {
 public:
  explicit ProofMemory(uint64_t token_seed) : seed_(token_seed) {}

  // The word at a holds payload_token(seed, tile, a): a Tokens segment.
  void fill_tokens(uint32_t tile, uint32_t address, uint32_t bytes);

  // What [address, address+bytes) of `tile` holds now, as pieces to be written elsewhere.
  struct Piece {
    uint32_t offset = 0;  // from the start of the read range
    uint32_t bytes = 0;
    bool token = false;  // false: zero
    uint32_t origin_tile = 0;
    uint32_t origin_address = 0;
  };
  std::vector<Piece> read(uint32_t tile, uint32_t address, uint32_t bytes) const;
  void write(uint32_t tile, uint32_t address, const std::vector<Piece>& pieces);

  // The bytes of a range as the simulator's SRAM would hold them (little-endian words).
  std::vector<uint8_t> bytes(uint32_t tile, uint32_t address, uint32_t bytes) const;

 private:
  struct Run {
    uint32_t end = 0;
    bool token = false;
    uint32_t origin_tile = 0;
    uint32_t origin_address = 0;
  };
  using Runs = std::map<uint32_t, Run>;  // start -> run; gaps are zero
  void assign(Runs& runs, uint32_t begin, uint32_t end, const Run& run);
  void split_at(Runs& runs, uint32_t address);

  uint64_t seed_;
  std::unordered_map<uint32_t, Runs> tiles_;
};

}  // namespace lockstep::compiler
