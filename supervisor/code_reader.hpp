#pragma once
// Reading a tile's supervisor code back into steps: the inverse of the sequences
// supervisor/supervisor_emitter.cpp writes (docs/supervisor-code.md). Used by `device import`
// (sim/device/application_import.cpp), which then lowers the steps again and compares words, so
// this reader only has to find the steps, not to prove every word.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arch/instruction.hpp"
#include "formats/package.hpp"

namespace lockstep::arch {

// Thrown where a word does not start or continue a known sequence.
struct CodeReadError {
  uint32_t address;
  uint32_t word;
  std::string what;
};

class CodeReader {
 public:
  // `code`: the words of [base, base + 4 * code.size()); `symbols` names call targets;
  // `memory` reads any word of the tile's image (the data tables).
  CodeReader(std::vector<uint32_t> code, uint32_t base, std::map<uint32_t, std::string> symbols,
             std::function<uint32_t(uint32_t)> memory);

  // The steps from `program` to the final `br $m15`, which must be the last code word.
  std::vector<Step> read_program(uint32_t program);
  // Whether the program read ends by setting the completion word (LoweringOptions).
  bool completion() const { return completion_; }

 protected:
  // The primitives both readers (this one and sim/device/stack_code_reader.hpp) build on.
  std::optional<Instruction> at(size_t offset = 0) const;
  uint32_t address() const { return base_ + static_cast<uint32_t>(4 * pc_); }
  [[noreturn]] void fail(const std::string& what) const;

  bool next_is(Opcode op, uint32_t reg_or_dest, size_t offset = 0) const;
  uint32_t take_setzi(uint32_t reg);
  uint32_t take_immediate(uint32_t reg);  // setzi, or setzi/shl 12/add
  void take_put(uint32_t csr, uint32_t reg);
  void take_ld32(uint32_t dest, uint32_t base, uint32_t offset);
  void take_st32(uint32_t source, uint32_t base);
  void take_add(uint32_t dest, uint32_t source, int32_t immediate);
  int64_t take_adds(uint32_t reg);  // a run of `add reg, reg, k`: their sum
  uint32_t take_call(uint32_t reg);
  void take_zone(Opcode op, uint32_t zone);
  void take_br(uint32_t reg);
  std::string symbol(uint32_t target) const;
  uint32_t memory(uint32_t address) const { return memory_(address); }
  size_t pc_ = 0;

 private:
  std::vector<Step> read_steps(const RepeatStep* repeat);
  bool at_iteration_end() const;
  bool at_completion() const;
  Step read_exchange();
  Step read_host();  // supervisor/code_reader_host.cpp
  Step read_repeat();
  Step read_kernel();
  void read_patch(const RepeatStep* repeat, std::vector<Step>& steps);
  PatchEntry read_patch_word(const RepeatStep* repeat);
  PatchStep read_patch_row();

  std::vector<uint32_t> code_;
  uint32_t base_;
  std::map<uint32_t, std::string> symbols_;
  std::function<uint32_t(uint32_t)> memory_;
  bool completion_ = false;
};

}  // namespace lockstep::arch
