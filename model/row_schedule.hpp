#pragma once
// One tile's exchange row turned into timed facts (IPU21-EXCHANGE.md section 5): send runs
// and control events on the tile's event clock, plus the row's horizon. No SystemC, no
// other tile: the fabric combines the schedules of all tiles of a phase.
#include <cstdint>
#include <span>
#include <vector>

#include "arch/instruction.hpp"
#include "model/hazard.hpp"

namespace lockstep::model {

enum class ControlKind : uint8_t {
  Xpic,        // ordinary incoming mux (XPIC sel 0)
  PairedXpic,  // paired (double-width) mux stream (XPIC sel 1)
  PicPointer,  // incoming pointer, word address (PIC sel 0)
  PicFormat,   // incoming format (PIC sel 1)
};
bool is_xpic(ControlKind kind);

struct Control {
  int64_t event = 0;  // takes effect at the start of this event
  ControlKind kind = ControlKind::Xpic;
  uint32_t value = 0;
  uint32_t instruction = 0;  // index into RowSchedule::instructions
};

// Consecutive items of one send-like instruction.
struct SendRun {
  int64_t issue_event = 0;  // event the instruction issued
  int64_t first_event = 0;  // item 0 leaves at this event; item k at first_event + k
  uint32_t items = 0;
  uint32_t item_address = 0;  // first item's address (byte address / 4, or / 8 if wide)
  uint32_t sctl = 0;
  uint32_t instruction = 0;
  uint32_t message = 0;  // runs of one message share this number (a send or restart begins one)

  bool wide() const { return (sctl & 4u) != 0; }
  uint32_t directions() const { return sctl & 3u; }
  uint32_t item_bytes() const { return wide() ? 8u : 4u; }
  uint64_t byte_address() const { return uint64_t(item_address) * item_bytes(); }
  uint64_t bytes() const { return uint64_t(items) * item_bytes(); }
};

// An instruction of the row as scheduled: its opcode, where it is and when it issued. Its
// other fields are decoded again from the row's words when a hazard names it
// (instruction_at): a whole arch::Instruction is 92 bytes, and a phase's first execution
// schedules up to a million instructions.
struct ScheduledInstruction {
  arch::Opcode op = arch::Opcode::Delay;
  uint32_t byte_offset = 0;  // from the row's first word
  int64_t issue_event = 0;
};

// The whole instruction `s` of the row whose words start at words[0], decoded again.
arch::Instruction instruction_at(std::span<const uint32_t> words, const ScheduledInstruction& s);

// An encoding problem (hazard 11) found while scheduling; the row stops at a decode error.
struct RowIssue {
  int64_t event = 0;
  uint32_t byte_offset = 0;
  uint32_t instruction = UINT32_MAX;  // index, or UINT32_MAX for an undecodable word
  std::string detail;
};

struct RowSchedule {
  std::vector<ScheduledInstruction> instructions;
  std::vector<SendRun> runs;      // in event order
  std::vector<Control> controls;  // in event order (stable in row order)
  int64_t horizon = 0;            // the counter when the row returns
  uint32_t row_bytes = 0;         // bytes up to and including the return
  bool returned = false;          // a Return was reached
  std::vector<RowIssue> issues;
};

// Schedules the row whose words start at words[0]. Stops at the first Return; a word that
// is not an instruction, a supervisor instruction (setzi, put, call, ...), or running off
// the end ends the row with an issue.
RowSchedule schedule_row(std::span<const uint32_t> words);

}  // namespace lockstep::model
