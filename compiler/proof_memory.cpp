#include "compiler/proof_memory.hpp"

#include <algorithm>

#include "formats/token.hpp"

namespace lockstep::compiler {

void ProofMemory::split_at(Runs& runs, uint32_t address) {
  auto it = runs.upper_bound(address);
  if (it == runs.begin()) return;
  --it;
  if (it->first == address || it->second.end <= address) return;
  Run tail = it->second;
  if (tail.token) tail.origin_address += address - it->first;
  it->second.end = address;
  runs.emplace(address, tail);
}

void ProofMemory::assign(Runs& runs, uint32_t begin, uint32_t end, const Run& run) {
  if (begin >= end) return;
  split_at(runs, begin);
  split_at(runs, end);
  runs.erase(runs.lower_bound(begin), runs.lower_bound(end));
  if (!run.token) return;  // zero is the absence of a run
  Run stored = run;
  stored.end = end;
  runs.emplace(begin, stored);
}

void ProofMemory::fill_tokens(uint32_t tile, uint32_t address, uint32_t bytes) {
  assign(tiles_[tile], address, address + bytes, Run{0, true, tile, address});
}

std::vector<ProofMemory::Piece> ProofMemory::read(uint32_t tile, uint32_t address, uint32_t bytes) const {
  std::vector<Piece> pieces;
  const uint32_t end = address + bytes;
  uint32_t cursor = address;
  const auto found = tiles_.find(tile);
  if (found != tiles_.end()) {
    const Runs& runs = found->second;
    auto it = runs.upper_bound(address);
    if (it != runs.begin()) --it;
    for (; it != runs.end() && it->first < end; ++it) {
      const uint32_t run_begin = std::max(it->first, address);
      const uint32_t run_end = std::min(it->second.end, end);
      if (run_begin >= run_end) continue;
      if (run_begin > cursor) pieces.push_back(Piece{cursor - address, run_begin - cursor, false, 0, 0});
      pieces.push_back(Piece{run_begin - address, run_end - run_begin, true, it->second.origin_tile,
                             it->second.origin_address + (run_begin - it->first)});
      cursor = run_end;
    }
  }
  if (cursor < end) pieces.push_back(Piece{cursor - address, end - cursor, false, 0, 0});
  return pieces;
}

void ProofMemory::write(uint32_t tile, uint32_t address, const std::vector<Piece>& pieces) {
  Runs& runs = tiles_[tile];
  for (const Piece& piece : pieces) {
    assign(runs, address + piece.offset, address + piece.offset + piece.bytes,
           Run{0, piece.token, piece.origin_tile, piece.origin_address});
  }
}

std::vector<uint8_t> ProofMemory::bytes(uint32_t tile, uint32_t address, uint32_t size) const {
  std::vector<uint8_t> out(size, 0);
  for (const Piece& piece : read(tile, address, size)) {
    if (!piece.token) continue;
    for (uint32_t b = 0; b + 4 <= piece.bytes; b += 4) {
      const uint32_t token = arch::payload_token(seed_, piece.origin_tile, piece.origin_address + b);
      for (int k = 0; k < 4; ++k) out[piece.offset + b + k] = static_cast<uint8_t>(token >> (8 * k));
    }
  }
  return out;
}

}  // namespace lockstep::compiler
