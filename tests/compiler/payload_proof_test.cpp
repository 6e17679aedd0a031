// prove_payload against the reference model: following every word through a ProofMemory,
// phase by phase and iteration by iteration (what the compiler did before it scaled), on
// random phases with overlapping writes, iterated sources, phases that read their own
// destinations, and checksums over several ranges; and the same expectations at any
// thread count.
#include "compiler/payload_proof.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <map>
#include <random>

#include "compiler/proof_memory.hpp"
#include "formats/package.hpp"

namespace lockstep::compiler {
namespace {

constexpr uint32_t kTiles = 6;
constexpr uint32_t kBase = 0x60000;

std::vector<uint8_t> little_endian(uint64_t value) {
  std::vector<uint8_t> out(8);
  for (int k = 0; k < 8; ++k) out[k] = static_cast<uint8_t>(value >> (8 * k));
  return out;
}

std::vector<arch::CapturePhase> random_phases(uint32_t seed) {
  std::mt19937 random(seed);
  auto pick = [&](uint32_t low, uint32_t high) { return std::uniform_int_distribution<uint32_t>(low, high)(random); };
  std::vector<arch::CapturePhase> phases(pick(1, 4));
  for (size_t p = 0; p < phases.size(); ++p) {
    arch::CapturePhase& phase = phases[p];
    phase.id = static_cast<uint32_t>(p);
    phase.iterations = pick(0, 2) == 0 ? 1 : pick(2, 4);
    const uint32_t transfers = pick(1, 8);
    for (uint32_t k = 0; k < transfers; ++k) {
      arch::Transfer transfer;
      transfer.source_tile = pick(0, kTiles - 1);
      transfer.words = pick(1, 24);
      const uint32_t addresses = pick(0, 1) == 0 ? 1 : phase.iterations;
      for (uint32_t a = 0; a < addresses; ++a) transfer.source_addresses.push_back(kBase + 4 * pick(0, 96));
      const uint32_t destinations = pick(1, 3);
      for (uint32_t d = 0; d < destinations; ++d) {
        transfer.destinations.push_back(arch::Destination{pick(0, kTiles - 1), kBase + 4 * pick(0, 96)});
      }
      phase.transfers.push_back(transfer);
    }
  }
  return phases;
}

std::vector<ProofTile> proof_tiles(const std::vector<arch::CapturePhase>& phases) {
  std::vector<ProofTile> tiles(kTiles);
  for (uint32_t t = 0; t < kTiles; ++t) {
    tiles[t].tile = t;
    tiles[t].destinations.resize(phases.size());
    tiles[t].checksums.resize(phases.size());
  }
  for (size_t p = 0; p < phases.size(); ++p) {
    for (const arch::Transfer& transfer : phases[p].transfers) {
      for (uint32_t address : transfer.source_addresses) {
        tiles[transfer.source_tile].sources.push_back(Span{address, transfer.words * 4});
      }
      for (const arch::Destination& d : transfer.destinations) {
        tiles[d.tile].destinations[p].push_back(Span{d.address, transfer.words * 4});
      }
    }
  }
  for (ProofTile& tile : tiles) {
    tile.sources = merge_spans(tile.sources);
    uint32_t slot = 0x90000;
    for (size_t p = 0; p < phases.size(); ++p) {
      tile.destinations[p] = merge_spans(tile.destinations[p]);
      if (tile.destinations[p].empty()) continue;
      tile.checksums[p].push_back(ProofChecksum{tile.destinations[p], slot});
      slot += 8 * std::max<uint32_t>(phases[p].iterations, 1);
    }
  }
  return tiles;
}

// Every word through a ProofMemory: the proof as package_builder computed it before.
std::vector<arch::Expectation> reference_proof(const std::vector<arch::CapturePhase>& phases,
                                               const std::vector<ProofTile>& tiles, uint64_t seed) {
  ProofMemory memory(seed);
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint8_t>> slots;
  for (const ProofTile& tile : tiles) {
    for (const Span& span : tile.sources) memory.fill_tokens(tile.tile, span.address, span.bytes);
  }
  for (size_t p = 0; p < phases.size(); ++p) {
    const arch::CapturePhase& phase = phases[p];
    for (uint32_t i = 0; i < std::max<uint32_t>(phase.iterations, 1); ++i) {
      std::vector<std::vector<ProofMemory::Piece>> reads;
      for (const arch::Transfer& transfer : phase.transfers) {
        const uint32_t address = transfer.source_addresses[i % transfer.source_addresses.size()];
        reads.push_back(memory.read(transfer.source_tile, address, transfer.words * 4));
      }
      if (phase.iterations > 1) {
        for (const ProofTile& tile : tiles) {
          for (const Span& span : tile.destinations[p]) {
            memory.write(tile.tile, span.address, {ProofMemory::Piece{0, span.bytes, false, 0, 0}});
          }
        }
      }
      for (size_t k = 0; k < phase.transfers.size(); ++k) {
        for (const arch::Destination& d : phase.transfers[k].destinations) memory.write(d.tile, d.address, reads[k]);
      }
      for (const ProofTile& tile : tiles) {
        for (const ProofChecksum& checksum : tile.checksums[p]) {
          std::vector<uint8_t> digests;
          for (const Span& range : checksum.ranges) {
            const std::vector<uint8_t> bytes = memory.bytes(tile.tile, range.address, range.bytes);
            const std::vector<uint8_t> digest = little_endian(arch::xxh3_64(bytes.data(), bytes.size()));
            digests.insert(digests.end(), digest.begin(), digest.end());
          }
          const std::vector<uint8_t> digest =
              checksum.ranges.size() == 1 ? digests : little_endian(arch::xxh3_64(digests.data(), digests.size()));
          auto& slot = slots[{tile.tile, checksum.slot_address}];
          slot.insert(slot.end(), digest.begin(), digest.end());
        }
      }
    }
  }
  std::vector<arch::Expectation> expectations;
  for (auto& [key, bytes] : slots) {
    expectations.push_back(arch::Expectation{key.first, key.second, static_cast<uint32_t>(bytes.size()), bytes, {}});
  }
  for (const ProofTile& tile : tiles) {
    std::vector<Span> all;
    for (const auto& ranges : tile.destinations) all.insert(all.end(), ranges.begin(), ranges.end());
    for (const Span& span : merge_spans(all)) {
      for (uint32_t offset = 0; offset < span.bytes; offset += kExpectationChunkBytes) {
        arch::Expectation expectation{
            tile.tile, span.address + offset, std::min(kExpectationChunkBytes, span.bytes - offset), {}, {}};
        std::vector<uint8_t> bytes = memory.bytes(tile.tile, expectation.address, expectation.size);
        if (expectation.size <= kExactExpectationBytes) {
          expectation.bytes = std::move(bytes);
        } else {
          expectation.digest = arch::fnv1a64(bytes.data(), bytes.size());
        }
        expectations.push_back(std::move(expectation));
      }
    }
  }
  std::sort(expectations.begin(), expectations.end(), [](const arch::Expectation& a, const arch::Expectation& b) {
    return std::tie(a.tile, a.address) < std::tie(b.tile, b.address);
  });
  return expectations;
}

TEST(PayloadProof, MatchesTheReferenceModelOnRandomPhases) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    const std::vector<arch::CapturePhase> phases = random_phases(seed);
    const std::vector<ProofTile> tiles = proof_tiles(phases);
    std::vector<const arch::CapturePhase*> pointers;
    for (const auto& phase : phases) pointers.push_back(&phase);
    const std::vector<arch::Expectation> expected = reference_proof(phases, tiles, seed);
    const std::vector<arch::Expectation> proved = prove_payload(pointers, tiles, seed);
    ASSERT_EQ(proved.size(), expected.size()) << "seed " << seed;
    for (size_t e = 0; e < expected.size(); ++e) {
      ASSERT_EQ(proved[e], expected[e]) << "seed " << seed << ", expectation " << e << " (tile " << expected[e].tile
                                        << ", address " << expected[e].address << ")";
    }
  }
}

TEST(PayloadProof, SameExpectationsOnOneThreadAndOnSeveral) {
  const std::vector<arch::CapturePhase> phases = random_phases(7);
  const std::vector<ProofTile> tiles = proof_tiles(phases);
  std::vector<const arch::CapturePhase*> pointers;
  for (const auto& phase : phases) pointers.push_back(&phase);
  std::vector<arch::Expectation> one;
  {
    const tbb::global_control single(tbb::global_control::max_allowed_parallelism, 1);
    one = prove_payload(pointers, tiles, 3);
  }
  const tbb::global_control several(tbb::global_control::max_allowed_parallelism, 4);
  EXPECT_EQ(prove_payload(pointers, tiles, 3), one);
}

TEST(PayloadProof, ReportsEveryIteration) {
  const std::vector<arch::CapturePhase> phases = random_phases(11);
  std::vector<const arch::CapturePhase*> pointers;
  uint64_t iterations = 0;
  for (const auto& phase : phases) {
    pointers.push_back(&phase);
    iterations += std::max<uint32_t>(phase.iterations, 1);
  }
  std::vector<uint64_t> seen;
  prove_payload(pointers, proof_tiles(phases), 1, [&](uint64_t done, uint64_t total) {
    EXPECT_EQ(total, iterations);
    seen.push_back(done);
  });
  ASSERT_EQ(seen.size(), iterations);
  EXPECT_EQ(seen.back(), iterations);
}

}  // namespace
}  // namespace lockstep::compiler
