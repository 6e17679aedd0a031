#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "formats/package.hpp"
#include "formats/token.hpp"
#include "io/errors.hpp"
#include "replay/point_check.hpp"
#include "replay/point_codec.hpp"
#include "replay/replay_args.hpp"
#include "sim/backend.hpp"
#include "support/repeated_p2p.hpp"

namespace lockstep::replay {
namespace {

// Tile memory as a sparse map of words; untouched memory reads as zero, like the model.
// One map for every tile, so a lock keeps the checker's parallel calls apart.
class FakeMemory : public sim::MemoryView {
 public:
  void write_word(uint32_t tile, uint32_t address, uint32_t value) {
    const std::lock_guard<std::mutex> hold(lock_);
    words_[{tile, address}] = value;
  }
  void read(uint32_t tile, uint32_t address, uint32_t bytes, uint8_t* out) const override {
    const std::lock_guard<std::mutex> hold(lock_);
    for (uint32_t a = 0; a < bytes; a += 4) {
      const auto it = words_.find({tile, address + a});
      const uint32_t v = it == words_.end() ? 0 : it->second;
      std::memcpy(out + a, &v, 4);
    }
  }
  bool equal(uint32_t tile, uint32_t address, uint32_t bytes, const uint8_t* expected) const override {
    std::vector<uint8_t> found(bytes);
    read(tile, address, bytes, found.data());
    return std::memcmp(found.data(), expected, bytes) == 0;
  }
  void write(uint32_t tile, uint32_t address, uint32_t bytes, const uint8_t* data) override {
    const std::lock_guard<std::mutex> hold(lock_);
    for (uint32_t a = 0; a < bytes; a += 4) {
      uint32_t v;
      std::memcpy(&v, data + a, 4);
      words_[{tile, address + a}] = v;
    }
  }
  void write_tokens(uint32_t tile, uint32_t address, uint32_t bytes, uint64_t seed, uint32_t iteration) override {
    std::vector<uint32_t> tokens(bytes / 4);
    arch::payload_tokens(seed, tile, address, iteration, tokens);
    write(tile, address, bytes, reinterpret_cast<const uint8_t*>(tokens.data()));
  }

 private:
  mutable std::mutex lock_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> words_;
};

arch::CapturePhase two_iteration_phase() {
  arch::CapturePhase phase;
  phase.id = 2;
  phase.iterations = 2;
  arch::Transfer a;
  a.source_tile = 1;
  a.source_addresses = {0x50000, 0x50100};
  a.destinations = {{3, 0x60000}, {4, 0x60040}};
  a.words = 4;
  arch::Transfer b;
  b.source_tile = 5;
  b.source_addresses = {0x58000, 0x58000};
  b.destinations = {{3, 0x61000}};
  b.words = 2;
  phase.transfers = {a, b};
  return phase;
}

// A checker of two_iteration_phase (seed 3) and its memory. Not copyable: the checker holds
// references to the phase, options and result beside it.
struct TwoIterationCheck {
  explicit TwoIterationCheck(bool payload_digest = false) : options(seeded(payload_digest)) {}
  TwoIterationCheck(const TwoIterationCheck&) = delete;
  static PointResult two_iterations() {
    PointResult r;
    r.iterations = 2;
    return r;
  }
  static PointOptions seeded(bool payload_digest) {
    PointOptions o;
    o.seed = 3;
    o.payload_digest = payload_digest;
    return o;
  }
  arch::CapturePhase phase = two_iteration_phase();
  PointOptions options;
  PointResult result = two_iterations();
  PayloadChecker checker{phase, options, result};
  FakeMemory memory;
};

// Memory as a correct run leaves it after `iteration`.
void deliver(FakeMemory& memory, const arch::CapturePhase& phase, uint32_t iteration, uint64_t seed) {
  for (const auto& t : phase.transfers) {
    for (const auto& d : t.destinations) {
      for (uint32_t k = 0; k < t.words; ++k) {
        memory.write_word(d.tile, d.address + 4 * k,
                          arch::payload_token(seed, t.source_tile, t.source_addresses[iteration] + 4 * k, iteration));
      }
    }
  }
}

TEST(ReplayCheck, CorrectDeliveryPassesEveryIteration) {
  TwoIterationCheck check(true);
  auto& [phase, options, result, checker, memory] = check;
  for (uint32_t i = 0; i < 2; ++i) {
    deliver(memory, phase, i, 3);
    checker.after({2, i, 100, 50 + i, {}, 0, {}}, memory);
  }
  EXPECT_TRUE(result.payload_ok());
  EXPECT_EQ(result.words_checked, 2u * (8 + 2));
  EXPECT_EQ(result.horizon, 51u);
  EXPECT_NE(result.payload_digest, 0u);
}

TEST(ReplayCheck, SourcesGetTheNextIterationsTokens) {
  TwoIterationCheck check;
  auto& [phase, options, result, checker, memory] = check;
  deliver(memory, phase, 0, 3);
  checker.after({2, 0, 100, 50, {}, 0, {}}, memory);
  uint8_t word[4];
  for (uint32_t k = 0; k < 4; ++k) {
    memory.read(1, 0x50100 + 4 * k, 4, word);
    uint32_t v;
    std::memcpy(&v, word, 4);
    EXPECT_EQ(v, arch::payload_token(3, 1, 0x50100 + 4 * k, 1)) << k;
  }
  memory.read(5, 0x58000, 4, word);
  uint32_t same;
  std::memcpy(&same, word, 4);
  EXPECT_EQ(same, arch::payload_token(3, 5, 0x58000, 1));
  EXPECT_NE(same, arch::payload_token(3, 5, 0x58000, 0));
}

TEST(ReplayCheck, StaleIterationAndCorruptWordAreMismatches) {
  TwoIterationCheck check;
  auto& [phase, options, result, checker, memory] = check;
  deliver(memory, phase, 0, 3);
  checker.after({2, 0, 100, 50, {}, 0, {}}, memory);
  EXPECT_EQ(result.mismatch_count, 0u);
  // Iteration 1 delivers nothing new. Its tokens are salted by the iteration, so even
  // transfer b, which reads the same source address in both iterations, cannot pass on
  // what iteration 0 left.
  memory.write_word(3, 0x61004, 0xdeadbeef);
  checker.after({2, 1, 200, 50, {}, 0, {}}, memory);
  EXPECT_FALSE(result.payload_ok());
  EXPECT_EQ(result.mismatch_count, 8u + 2);
  ASSERT_EQ(result.mismatches.size(), 10u);
  const auto& first = result.mismatches.front();
  EXPECT_EQ(first.tile, 3u);
  EXPECT_EQ(first.address, 0x60000u);
  EXPECT_EQ(first.iteration, 1u);
  EXPECT_EQ(first.expected, arch::payload_token(3, 1, 0x50100, 1));
  EXPECT_EQ(first.found, arch::payload_token(3, 1, 0x50000));
  const auto& same_source = result.mismatches[8];
  EXPECT_EQ(same_source.address, 0x61000u);
  EXPECT_EQ(same_source.expected, arch::payload_token(3, 5, 0x58000, 1));
  EXPECT_EQ(same_source.found, arch::payload_token(3, 5, 0x58000));
  EXPECT_EQ(result.mismatches.back().found, 0xdeadbeefu);
}

// A tile checked as its words land (landed) is not checked again after the execution: a
// corrupt word there counts once. A tile that never landed, or landed for another phase, is
// checked after.
TEST(ReplayCheck, TilesCheckedAsTheyLandAreCheckedOnce) {
  TwoIterationCheck check;
  auto& [phase, options, result, checker, memory] = check;
  deliver(memory, phase, 0, 3);
  checker.landed(2, 0, 3, memory);
  checker.landed(2, 0, 4, memory);
  checker.after({2, 0, 100, 50, {}, 0, {}}, memory);
  EXPECT_EQ(result.mismatch_count, 0u);
  EXPECT_EQ(result.words_checked, 10u);

  deliver(memory, phase, 1, 3);
  memory.write_word(3, 0x61004, 0xdeadbeef);
  memory.write_word(4, 0x6004c, 0xfeedface);
  checker.landed(2, 1, 3, memory);
  checker.landed(7, 1, 4, memory);  // another phase's landing: tile 4 waits for after()
  checker.after({2, 1, 200, 50, {}, 0, {}}, memory);
  EXPECT_EQ(result.words_checked, 20u);
  EXPECT_EQ(result.mismatch_count, 2u);
  ASSERT_EQ(result.mismatches.size(), 2u);
  EXPECT_EQ(result.mismatches[0].tile, 4u);  // capture order: transfer a, then b
  EXPECT_EQ(result.mismatches[0].found, 0xfeedfaceu);
  EXPECT_EQ(result.mismatches[1].tile, 3u);
  EXPECT_EQ(result.mismatches[1].address, 0x61004u);
  EXPECT_EQ(result.mismatches[1].expected, arch::payload_token(3, 5, 0x58004, 1));
}

// On the SystemC model: p2p_3w's exchange (tile 0 sends 12 bytes at 0x60000, loaded with
// tokens of seed 7; tile 1 receives them at 0x70000) in a Repeat of 3. The checker sees tile 1
// land in each iteration and checks it there; with another seed than the loader's, the first
// iteration's 3 words are wrong (the refill writes the checker's own tokens for the others),
// and each counts once. `lay`: the copies lay runs of the tokens they move at tile 1, as a
// replay's do (sim::RunOptions::lay_copied_tokens), instead of making them there.
PointResult replay_p2p_on_the_model(uint64_t seed, uint32_t& landings, bool lay) {
  const arch::Package package =
      arch::parse_package_yaml(testing::repeated_p2p("", testing::kP2pSend, "", testing::kP2pReceive, ""), "p2p.yaml");
  arch::CapturePhase phase;
  phase.id = 1;
  phase.iterations = 3;
  arch::Transfer transfer;
  transfer.source_tile = 0;
  transfer.source_addresses = {0x60000, 0x60000, 0x60000};
  transfer.destinations = {{1, 0x70000}};
  transfer.words = 3;
  phase.transfers = {transfer};
  PointOptions options;
  options.seed = seed;
  PointResult result;
  result.iterations = 3;
  PayloadChecker checker(phase, options, result);
  sim::RunOptions run;
  run.lay_copied_tokens = lay;
  run.after_exchange = [&](const sim::PhaseExecution& e, sim::MemoryView& m) { checker.after(e, m); };
  run.after_landing = [&](uint32_t p, uint32_t i, uint32_t tile, const sim::MemoryView& m) {
    ++landings;  // one receiver: one thread at a time
    checker.landed(p, i, tile, m);
  };
  EXPECT_TRUE(sim::make_systemc_backend(arch::load_machine(package.machine_name))->run(package, run).ok());
  return result;
}

class ReplayCheckOnTheModel : public ::testing::TestWithParam<bool> {};

TEST_P(ReplayCheckOnTheModel, ReceiversAreCheckedAsTheyLand) {
  uint32_t landings = 0;
  const PointResult right = replay_p2p_on_the_model(7, landings, GetParam());
  EXPECT_EQ(landings, 3u);
  EXPECT_EQ(right.executions, 3u);
  EXPECT_EQ(right.words_checked, 9u);
  EXPECT_TRUE(right.payload_ok());
  landings = 0;
  const PointResult wrong = replay_p2p_on_the_model(8, landings, GetParam());
  EXPECT_EQ(landings, 3u);
  EXPECT_EQ(wrong.words_checked, 9u);
  EXPECT_EQ(wrong.mismatch_count, 3u);
  ASSERT_EQ(wrong.mismatches.size(), 3u);
  EXPECT_EQ(wrong.mismatches[0].iteration, 0u);
  EXPECT_EQ(wrong.mismatches[0].found, arch::payload_token(7, 0, 0x60000));
  EXPECT_EQ(wrong.mismatches[0].expected, arch::payload_token(8, 0, 0x60000));
}

INSTANTIATE_TEST_SUITE_P(Copies, ReplayCheckOnTheModel, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("LaidAsRuns") : std::string("MadeAtTheDestination");
                         });

TEST(ReplayCheck, SampledCheckFindsTheOnlyDestinationOfACorruptTile) {
  const auto phase = two_iteration_phase();
  PointOptions options;
  options.seed = 3;
  options.samples = 2;  // one word per destination tile (tiles 3 and 4), whichever words
  PointResult result;
  result.iterations = 1;
  arch::CapturePhase one = phase;
  one.iterations = 1;
  PayloadChecker checker(one, options, result);
  FakeMemory memory;
  deliver(memory, phase, 0, 3);
  // Every word of tile 4 is wrong: a sample that covers every tile must see it.
  for (uint32_t k = 0; k < 4; ++k) memory.write_word(4, 0x60040 + 4 * k, 0);
  checker.after({2, 0, 0, 10, {}, 0, {}}, memory);
  EXPECT_EQ(result.words_checked, 2u);
  EXPECT_EQ(result.mismatch_count, 1u);
  EXPECT_EQ(result.mismatches.at(0).tile, 4u);
}

TEST(ReplayCheck, MissingExecutionsFail) {
  PointResult result;
  result.iterations = 27;
  result.executions = 26;
  EXPECT_FALSE(result.payload_ok());
  result.executions = 27;
  EXPECT_TRUE(result.payload_ok());
}

TEST(ReplayCheck, PointResultsSurviveEncoding) {
  PointResult r;
  r.spec = {7, "B256", true};
  r.label = "layer.attn.qkv";
  r.execution_count = 27;
  r.horizon = 1234;
  r.total_row_bytes = 1ull << 40;
  r.compile_ms = 1.5;
  r.mismatches = {{1, 2, 3, 4, 5}};
  r.mismatch_count = 9;
  r.hazards = {"mux-left-open tile 3"};
  r.payload_digest = 0x0123456789abcdefull;
  r.error = "";
  const auto bytes = encode_point_result(r);
  const auto back = decode_point_result(bytes);
  EXPECT_EQ(encode_point_result(back), bytes);
  EXPECT_EQ(back.spec.config, "B256");
  EXPECT_TRUE(back.spec.paired);
  EXPECT_EQ(back.mismatches, r.mismatches);
  EXPECT_EQ(back.hazards, r.hazards);
  EXPECT_EQ(back.total_row_bytes, r.total_row_bytes);
  EXPECT_THROW(decode_point_result(bytes.substr(0, bytes.size() - 1)), std::runtime_error);
}

TEST(ReplayArgs, PhaseListsAndConfigNames) {
  EXPECT_EQ(parse_phase_list("3"), (std::vector<uint32_t>{3}));
  EXPECT_EQ(parse_phase_list("9,3,5-7,3"), (std::vector<uint32_t>{3, 5, 6, 7, 9}));
  EXPECT_THROW(parse_phase_list("3,"), InputError);
  EXPECT_THROW(parse_phase_list("7-5"), InputError);
  EXPECT_THROW(parse_phase_list("x"), InputError);
  const auto paired = parse_point_config("B256p", 4);
  EXPECT_EQ(paired.config, "B256");
  EXPECT_TRUE(paired.paired);
  EXPECT_EQ(paired.compiler_config(), "B256+paired");
  EXPECT_EQ(paired.display_name(), "B256p");
  EXPECT_TRUE(parse_point_config("S64+paired", 0).paired);
  EXPECT_FALSE(parse_point_config("latency", 0).paired);
  EXPECT_THROW(parse_point_config("B0256", 0), InputError);
  EXPECT_THROW(parse_point_config("fastest", 0), InputError);
}

}  // namespace
}  // namespace lockstep::replay
