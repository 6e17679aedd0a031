// The payload proof of a compiled Repeat must catch an iteration that delivers nothing, even
// when every iteration reads the same source address (the same tokens): the package zeroes
// the destinations before each iteration. Mutation: a patch inside the Repeat turns the
// sender's `send` into one with no direction in iteration 1 only.
#include <gtest/gtest.h>

#include <optional>
#include <variant>

#include "arch/instruction.hpp"
#include "compiler/compile.hpp"
#include "formats/package.hpp"
#include "sim/backend.hpp"

namespace lockstep::integration {
namespace {

arch::Capture same_address_repeat() {
  arch::Capture capture;
  capture.machine_name = "ipu21-c600-t16";
  arch::CapturePhase phase;
  phase.id = 1;
  phase.label = "repeat.same-address";
  phase.execution_count = 3;
  phase.iterations = 3;
  arch::Transfer t;
  t.source_tile = 0;
  t.source_addresses = {0x60000, 0x60000, 0x60000};
  t.destinations = {{5, 0x68000}};
  t.words = 64;
  phase.transfers.push_back(t);
  capture.phases.push_back(phase);
  return capture;
}

// The row words of `program` from `address` on, out of its segments.
std::vector<uint32_t> row_words(const arch::TileProgram& program, uint32_t address) {
  for (const auto& segment : program.segments) {
    if (address < segment.address || address >= segment.address + segment.bytes.size()) continue;
    std::vector<uint32_t> words;
    for (size_t at = address - segment.address; at + 4 <= segment.bytes.size(); at += 4) {
      const uint8_t* b = &segment.bytes[at];
      words.push_back(uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24);
    }
    return words;
  }
  return {};
}

sim::RunResult run(const arch::Package& package, const arch::MachineDescription& machine) {
  sim::RunOptions options;
  options.keep_going = true;
  return sim::make_systemc_backend(machine)->run(package, options);
}

TEST(RepeatProofMutation, AnIterationThatDeliversNothingFailsTheProof) {
  const auto machine = arch::load_machine("ipu21-c600-t16");
  compiler::CompileOptions options;
  options.config = compiler::parse_config("B1024");
  arch::Package package = compiler::compile_capture(same_address_repeat(), machine, options).package;
  const auto clean = run(package, machine);
  ASSERT_TRUE(clean.ok()) << clean.expectation_failures.size() << " expectation failures";

  // Tile 0's Repeat body: find the exchange and the send word of its row.
  arch::TileProgram* sender = nullptr;
  for (auto& program : package.tiles) sender = program.tile == 0 ? &program : sender;
  ASSERT_NE(sender, nullptr);
  arch::RepeatStep* repeat = nullptr;
  for (auto& step : sender->steps) {
    if (auto* r = std::get_if<arch::RepeatStep>(&step.kind)) repeat = r;
  }
  ASSERT_NE(repeat, nullptr);
  uint32_t row_address = 0;
  for (const auto& step : repeat->body) {
    if (const auto* e = std::get_if<arch::ExchangeStep>(&step.kind)) row_address = e->row_address.value_or(0);
  }
  const std::vector<uint32_t> words = row_words(*sender, row_address);
  ASSERT_FALSE(words.empty());
  std::optional<arch::Instruction> send;
  uint32_t send_index = 0, index = 0;
  for (const auto& d : arch::decode_row(words)) {
    if (d.instruction.op == arch::Opcode::Send && !send) {
      send = d.instruction;
      send_index = index;
    }
    index += d.word_count;
  }
  ASSERT_TRUE(send.has_value());
  arch::Instruction silent = *send;
  silent.sctl = 0;
  const std::vector<uint32_t> silent_words = arch::encode(silent);
  ASSERT_EQ(silent_words.size(), 1u);
  const uint32_t word_address = row_address + 4 * send_index;
  const uint32_t original = words[send_index];
  arch::PatchStep patch{arch::PatchMethod::Helper, {{word_address, {original, silent_words[0], original}}}};
  repeat->body.insert(repeat->body.begin(), arch::Step{patch});

  const auto mutated = run(package, machine);
  EXPECT_FALSE(mutated.expectation_failures.empty()) << "iteration 1 delivered nothing, yet the proof passed";
}

}  // namespace
}  // namespace lockstep::integration
