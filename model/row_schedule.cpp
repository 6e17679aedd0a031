#include "model/row_schedule.hpp"

#include <algorithm>
#include <string>

namespace lockstep::model {

bool is_xpic(ControlKind kind) { return kind == ControlKind::Xpic || kind == ControlKind::PairedXpic; }

namespace {

// The stream a sendoff/sendpic continues (section 5: "outgoing stream (next, sctl)").
struct Stream {
  bool open = false;
  uint32_t next = 0;  // next item address
  uint32_t sctl = 0;
  uint32_t message = 0;
};

ControlKind pic_kind(uint32_t selector) { return selector == 0 ? ControlKind::PicPointer : ControlKind::PicFormat; }
ControlKind xpic_kind(uint32_t selector) { return selector == 0 ? ControlKind::Xpic : ControlKind::PairedXpic; }

}  // namespace

arch::Instruction instruction_at(std::span<const uint32_t> words, const ScheduledInstruction& s) {
  return arch::decode(words, s.byte_offset / 4).instruction;
}

namespace {

// schedule_row, with room for the longest row its window can hold.
RowSchedule schedule_row_in_room(std::span<const uint32_t> words) {
  RowSchedule out;
  out.instructions.reserve(words.size());  // at most one a word
  out.controls.reserve(words.size());      // about one a word in receive-heavy rows
  Stream stream;
  uint32_t messages = 0;
  int64_t t = 0;
  size_t index = 0;
  auto add_run = [&](int64_t issue, uint32_t items, uint32_t address, uint32_t sctl, uint32_t instruction,
                     uint32_t message) {
    out.runs.push_back({issue, issue + 1, items, address, sctl, instruction, message});
  };
  while (true) {
    if (index >= words.size()) {
      out.issues.push_back(
          {t, static_cast<uint32_t>(index * 4), UINT32_MAX, "row runs off its table without a return (br $m10)"});
      break;
    }
    arch::DecodedInstruction decoded;
    try {
      decoded = arch::decode(words, index);
    } catch (const arch::DecodeError& e) {
      out.issues.push_back({t, static_cast<uint32_t>(e.byte_offset()), UINT32_MAX, e.what()});
      break;
    } catch (const std::exception& e) {
      out.issues.push_back({t, static_cast<uint32_t>(index * 4), UINT32_MAX, e.what()});
      break;
    }
    const arch::Instruction& in = decoded.instruction;
    const auto id = static_cast<uint32_t>(out.instructions.size());
    out.instructions.push_back({in.op, static_cast<uint32_t>(index * 4), t});
    if (!arch::is_row_instruction(in.op)) {
      // Supervisor code has no event timing and may branch away: the row stops here.
      out.issues.push_back(
          {t, out.instructions.back().byte_offset, id, arch::mnemonic(in.op) + " is not an exchange row instruction"});
      break;
    }
    index += decoded.word_count;
    switch (in.op) {
      case arch::Opcode::Delay:
        t += in.events;
        break;
      case arch::Opcode::DelayPic:
        t += in.events;
        out.controls.push_back({t, pic_kind(in.selector), in.value, id});
        break;
      case arch::Opcode::DelayXpic:
        t += in.events;
        out.controls.push_back({t, xpic_kind(in.selector), in.value, id});
        break;
      case arch::Opcode::Send:
        stream = {true, in.address, in.sctl, messages++};
        add_run(t, in.words, stream.next, stream.sctl, id, stream.message);
        stream.next += in.words;
        t += in.words;
        break;
      case arch::Opcode::SendOff:
        if (!stream.open) {
          out.issues.push_back({t, out.instructions.back().byte_offset, id, "sendoff with no open stream"});
          stream = {true, 0, in.sctl, messages++};
        }
        stream.next += in.delta;
        stream.sctl = in.sctl;
        add_run(t, in.words, stream.next, stream.sctl, id, stream.message);
        stream.next += in.words;
        t += in.words;
        break;
      case arch::Opcode::SendPic: {
        if (!stream.open) {
          out.issues.push_back({t, out.instructions.back().byte_offset, id, "sendpic with no open stream"});
        }
        // sel 0/1: the two XPIC forms; 2/3: the two PIC forms.
        const ControlKind kind = in.selector < 2 ? xpic_kind(in.selector) : pic_kind(in.selector - 2);
        out.controls.push_back({t + 1, kind, in.value, id});
        if (stream.open) {
          add_run(t, in.words, stream.next, stream.sctl, id, stream.message);
          stream.next += in.words;
        }
        t += in.words;
        break;
      }
      case arch::Opcode::SendPicP:
        out.controls.push_back({t + 1, in.xpic_paired ? ControlKind::PairedXpic : ControlKind::Xpic, in.xpic, id});
        // ps (prefix bit 27) is the payload PIC value's selector: pointer or format.
        out.controls.push_back({t + 1, pic_kind(in.pic_selector), in.pic, id});
        if ((in.sctl & 3u) != 0) {
          // A transmitting sendpicp restarts the stream at its own first item's address.
          stream = {true, in.address, in.sctl, messages++};
          add_run(t, in.words, stream.next, stream.sctl, id, stream.message);
          stream.next += in.words;
        }
        t += in.words;
        break;
      case arch::Opcode::Sync:
        if (id != 0) {
          out.issues.push_back(
              {t, out.instructions.back().byte_offset, id, "sync inside a row (only a leading sync marks event 0)"});
        }
        break;
      case arch::Opcode::Sans:
        out.issues.push_back({t, out.instructions.back().byte_offset, id, "sans is not an exchange row instruction"});
        break;
      case arch::Opcode::Return:
        std::stable_sort(out.controls.begin(), out.controls.end(),
                         [](const Control& a, const Control& b) { return a.event < b.event; });
        out.returned = true;
        out.horizon = t;
        out.row_bytes = static_cast<uint32_t>(index * 4);
        return out;
      default:
        break;  // supervisor instructions ended the row above
    }
  }
  std::stable_sort(out.controls.begin(), out.controls.end(),
                   [](const Control& a, const Control& b) { return a.event < b.event; });
  out.horizon = t;
  out.row_bytes = static_cast<uint32_t>(index * 4);
  return out;
}

}  // namespace

RowSchedule schedule_row(std::span<const uint32_t> words) {
  RowSchedule out = schedule_row_in_room(words);
  // The room each list was given (a word each) is several times what a row uses; the plan keeps
  // every tile's schedule, so exact lists touch 300-600 fewer fresh heap pages in a replay of
  // phase 10 (docs/performance.md, round thirty-one), and the room freed serves the next row.
  out.instructions.shrink_to_fit();
  out.controls.shrink_to_fit();
  return out;
}

}  // namespace lockstep::model
