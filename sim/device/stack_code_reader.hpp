#pragma once
// Reading the supervisor code the IPU21 stack's emitter generates (IPU21-DEVICE.md section 8,
// runtime symbols `ipu_stack_static_*` of section 9) back into steps, for `device import` of
// images the stack built. Only what the model executes is accepted: exchanges, their setup
// and Repeat patches, Repeats (the invocation loop reads as one), calls of the stack's kernels
// that arch/stack_kernels.hpp knows (each a kernel step of that symbol), and cycle samples
// (kernel steps of the sample helper), and host phases (sim/device/stack_host_reader.cpp).
// Checkpoints are refused by name.
#include "supervisor/code_reader.hpp"

namespace lockstep::arch {

class StackCodeReader : public CodeReader {
 public:
  using CodeReader::CodeReader;

  // The steps from `program` up to the jump to ipu_stack_static_complete.
  std::vector<Step> read_stack_program(uint32_t program);
  // The Repeat pointers' slots (in the frame below kSupervisorStackTop) and the values the
  // Repeats store there first: the package's initial words at those addresses.
  const std::map<uint32_t, uint32_t>& initial_words() const { return initial_words_; }

  static constexpr uint32_t kSupervisorStackTop = 0x586e0;  // $m11 after start-up (D 9.1)

 private:
  std::string next_call_symbol() const;  // the symbol of the next call, "" if none
  bool at_complete() const;
  bool at_loop_end() const;
  std::vector<Step> read_stack_steps(bool in_repeat);
  Step read_stack_exchange();
  Step read_stack_repeat();
  PatchStep read_setup_patch();
  PatchEntry read_repeat_patch();
  Step read_stack_kernel(const std::string& symbol);
  Operand read_pointer_operand(uint32_t reg);
  void read_inline_copies(std::vector<Step>& steps);
  uint32_t word_here();  // the raw word at the read position (an inline table), then past it
  // Host phases (stack_host_reader.cpp).
  void read_host_run(std::vector<Step>& steps);
  void read_host_followers(std::vector<Step>& steps);
  std::vector<std::pair<uint32_t, uint32_t>> host_program_sends(uint32_t program) const;
  HostStep host_phase(const std::vector<std::pair<uint32_t, uint32_t>>& sends, uint32_t packet,
                      const std::vector<uint32_t>& words) const;
  std::optional<uint32_t> frame_base_;  // inside a Repeat: its frame's address
  std::map<uint32_t, uint32_t> initial_words_;
};

}  // namespace lockstep::arch
