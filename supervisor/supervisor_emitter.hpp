#pragma once
// The instruction-by-instruction writer behind lower_tile_code (supervisor/supervisor_code.hpp):
// one pass over a tile's steps at a given base address, with labels for forward targets.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "arch/instruction.hpp"
#include "supervisor/supervisor_code.hpp"

namespace lockstep::arch {

class SupervisorEmitter {
 public:
  SupervisorEmitter(const TileProgram& program, const MachineDescription& machine, const LoweringOptions& options,
                    uint32_t physical, uint32_t base);
  TileCode run();

 private:
  using Label = uint32_t;
  struct Reference {
    size_t index;  // code word
    Instruction instruction;
    Label label;     // resolves the immediate (setzi) or target (call, brz)
    int32_t offset;  // added to the label's address
  };

  Label new_label();
  void bind(Label label);  // at the next instruction
  uint32_t here() const;
  void emit(const Instruction& instruction);
  void emit_ref(Instruction instruction, Label label, int32_t offset = 0);  // label's address + offset
  void site(SiteRole role, const Step* step, bool exchange = false, uint32_t phase = 0);
  Label data(std::vector<uint32_t> words);

  void load_immediate(uint32_t reg, uint32_t value);
  void load_label(uint32_t reg, Label label);
  void add_constant(uint32_t reg, int64_t value);
  void call(uint32_t return_reg, Label target);

  void scan(const std::vector<Step>& steps, uint32_t depth);
  void runtime();
  void copy_words_helper();
  void program_body();
  void steps(const std::vector<Step>& list, const RepeatStep* repeat);
  void sync_step(const Step& step, const SyncStep& s);
  void exchange_step(const Step& step, const ExchangeStep& e);
  void host_step(const Step& step, const HostStep& h);
  void host_body(const HostStep& h, const std::vector<uint32_t>& requests);
  void kernel_step(const Step& step, const KernelStep& k);
  void repeat_step(const Step& step, const RepeatStep& r);
  void patch_step(const Step& step, const PatchStep& p, const RepeatStep* repeat);
  void patch_constant(uint32_t word_address, uint32_t value);
  void patch_per_iteration(const PatchEntry& entry, const RepeatStep& repeat);
  void patch_setup(const std::vector<const PatchEntry*>& entries);
  void patch_bulk(const PatchStep& p, const RepeatStep* repeat);
  [[noreturn]] void fail(const std::string& what) const;
  TileCode finish();

  const TileProgram& program_;
  const MachineDescription& machine_;
  LoweringOptions options_;
  uint32_t physical_;
  uint32_t base_;

  std::vector<uint32_t> code_;
  std::vector<Reference> references_;
  std::vector<uint32_t> label_address_;
  std::vector<std::pair<Label, uint32_t>> data_labels_;  // label, word offset in data_
  std::vector<uint32_t> data_;
  std::vector<CodeSite> sites_;
  std::vector<CodeSymbol> symbols_;
  std::map<std::string, Label> symbol_label_;  // by symbol name
  uint32_t stack_bytes_ = 0;
  size_t host_phase_ = 0;
  bool copies_staged_ = false;  // some host step stages a transfer: the copy helper is emitted  // host steps lowered
                                // so far (the index into options_.host_readers)
  Label program_label_ = 0;
  Label stack_top_label_ = 0;
};

}  // namespace lockstep::arch
