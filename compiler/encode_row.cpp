// encode_tile_row: walk the tile's event clock once, emitting
//   * idle stretches as `delay`;
//   * a lone control on an idle event as `delaypic`/`delayxpic` ending on that event;
//   * two controls on one idle event as `sendpicp` with sctl 0 (one event);
//   * a message as `send` (<= 64 items) then `sendoff` continuations (delta 0, <= 4096);
//   * a control that falls inside a message as `sendpic` (one control) or `sendpicp`
//     (both, restarting the stream at the current address), issued one event before it.
// A `sendpicp` must start at an even word index: when it would not, an earlier instruction
// since the previous `sendpicp` is split in two (delay 1 + rest, send 1 + sendoff, ...),
// which adds one word and changes no event.
#include "compiler/encode_row.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "arch/instruction.hpp"
#include "io/errors.hpp"

namespace lockstep::compiler {
namespace {

using arch::Instruction;
using arch::Opcode;

constexpr uint32_t kMaxSend = 64;
constexpr uint32_t kMaxSendOff = 4096;
constexpr uint32_t kMaxDelay = 1u << 19;
constexpr uint32_t kMaxDelayPic = 128;
constexpr uint32_t kMaxDelayXpic = 4096;
constexpr uint32_t kXpicOrdinary = 0;
constexpr uint32_t kXpicPaired = 1;
constexpr uint32_t kPicPointer = 0;
constexpr uint32_t kPicFormat = 1;
constexpr uint32_t kSendPicXpic = 0;
constexpr uint32_t kSendPicPairedXpic = 1;
constexpr uint32_t kSendPicPointer = 2;
constexpr uint32_t kSendPicFormat = 3;
constexpr int32_t kNever = std::numeric_limits<int32_t>::max();

struct Emitted {
  Instruction ins;
  int32_t message = -1;         // message whose address this word bears (send, transmitting sendpicp)
  uint32_t item_offset = 0;     // items of that message before this instruction's first item
  bool pic = false;             // carries a PIC pointer
  uint32_t stream_sctl = 0;     // sctl of the open stream (for splitting a sendpic)
  int32_t event = 0;            // event of the control it carries, if any
  int32_t stream_message = -1;  // message whose items it sends (sendpic)
  uint32_t stream_offset = 0;   // items of that message before its first item
};

uint32_t size_of(const Instruction& ins) { return ins.op == Opcode::SendPicP ? 2 : 1; }

class RowBuilder {
 public:
  RowBuilder(const PhaseProblem& problem, TilePlan& plan) : problem_(problem), plan_(plan) {}

  std::vector<Emitted> build() {
    size_t next_control = 0;
    const auto& controls = plan_.controls;
    // About an instruction per send and per control, and a delay between them; grown from
    // empty, the copies of these 130-byte records were 5% of a compile.
    out_.reserve(2 * (plan_.sends.size() + controls.size()) + 2);
    for (const SendSegment& seg : plan_.sends) {
      const int32_t issue = seg.first_event - 1;
      while (next_control < controls.size() && controls[next_control].event < issue)
        idle_control(controls[next_control++]);
      if (next_control < controls.size() && controls[next_control].event <= seg.first_event)
        fail(controls[next_control].event, "control at a message's issue or first-item event");
      idle_to(issue);
      next_control = send_segment(seg, next_control);
    }
    while (next_control < controls.size()) idle_control(controls[next_control++]);
    if (!added_.empty()) {
      plan_.controls.insert(plan_.controls.end(), added_.begin(), added_.end());
      std::sort(plan_.controls.begin(), plan_.controls.end(),
                [](const ControlEvent& a, const ControlEvent& b) { return a.event < b.event; });
    }
    if (cursor_ > plan_.end_event) fail(cursor_, "row runs past its end event");
    idle_to(plan_.end_event);
    Instruction ret;
    ret.op = Opcode::Return;
    push({ret});
    return std::move(out_);
  }

 private:
  std::string where(int32_t event) const {
    return "encoding: phase " + std::to_string(problem_.phase->id) + " tile " +
           std::to_string(problem_.topology->logical(plan_.tile)) + " event " + std::to_string(event) + ": ";
  }
  [[noreturn]] void fail(int32_t event, const std::string& what) const { throw CompilerError(where(event) + what); }

  void push(const Emitted& e) {
    words_ += size_of(e.ins);
    out_.push_back(e);
  }

  void idle_to(int32_t event) {
    while (cursor_ < event) {
      const uint32_t n = static_cast<uint32_t>(std::min<int64_t>(int64_t{event} - cursor_, kMaxDelay));
      Instruction ins;
      ins.op = Opcode::Delay;
      ins.events = n;
      push({ins});
      cursor_ += static_cast<int32_t>(n);
    }
  }

  void idle_control(const ControlEvent& c) {
    if (c.event <= cursor_) fail(c.event, "control on or before the current event");
    if (c.has_xpic && (c.has_pic || c.has_format)) {
      if (c.has_format) fail(c.event, "a format control cannot share an event with a mux control");
      idle_to(c.event - 1);
      Instruction ins;
      ins.op = Opcode::SendPicP;
      ins.words = 1;
      ins.sctl = 0;
      ins.address = 0;
      ins.xpic = c.xpic;
      ins.xpic_paired = c.xpic_paired;
      ins.pic = c.pic;
      align_for_sendpicp(c.event);
      push({ins, -1, 0, true, 0});
      cursor_ = c.event;
      return;
    }
    const uint32_t limit = c.has_xpic ? kMaxDelayXpic : kMaxDelayPic;
    if (c.event - cursor_ > static_cast<int32_t>(limit)) idle_to(c.event - static_cast<int32_t>(limit));
    Instruction ins;
    ins.op = c.has_xpic ? Opcode::DelayXpic : Opcode::DelayPic;
    ins.events = static_cast<uint32_t>(c.event - cursor_);
    ins.selector =
        c.has_xpic ? (c.xpic_paired ? kXpicPaired : kXpicOrdinary) : (c.has_format ? kPicFormat : kPicPointer);
    ins.value = c.has_xpic ? c.xpic : c.has_format ? c.format : c.pic;
    push({ins, -1, 0, c.has_pic, 0, c.event});
    cursor_ = c.event;
  }

  // Emits the segment; returns the index of the first control after it.
  size_t send_segment(const SendSegment& seg, size_t next_control) {
    const auto& controls = plan_.controls;
    const int32_t last = seg.first_event + static_cast<int32_t>(seg.items) - 1;
    auto next_event = [&](size_t k) {
      return k < controls.size() && controls[k].event <= last ? controls[k].event : kNever;
    };
    int32_t pos = seg.first_event;
    auto count_until = [&](uint32_t cap, int32_t stop) {
      const int64_t limit = std::min<int64_t>({int64_t{cap}, int64_t{last} - pos + 1, int64_t{stop} - pos});
      return static_cast<uint32_t>(limit);
    };
    {
      Instruction ins;
      ins.op = Opcode::Send;
      ins.words = count_until(kMaxSend, next_event(next_control));
      ins.address = seg.item_address;
      ins.sctl = seg.sctl;
      push({ins, static_cast<int32_t>(seg.message), 0, false, seg.sctl, 0, static_cast<int32_t>(seg.message), 0});
      pos += static_cast<int32_t>(ins.words);
    }
    while (pos <= last) {
      const uint32_t offset = static_cast<uint32_t>(pos - seg.first_event);
      if (next_event(next_control) == pos) {
        const ControlEvent& c = controls[next_control++];
        Instruction ins;
        ins.words = count_until(kMaxSend, next_event(next_control));
        if (c.has_xpic && c.has_format) fail(pos, "a format control cannot share an event with a mux control");
        if (c.has_xpic && c.has_pic) {
          ins.op = Opcode::SendPicP;
          ins.address = seg.item_address + offset;
          ins.sctl = seg.sctl;
          ins.xpic = c.xpic;
          ins.xpic_paired = c.xpic_paired;
          ins.pic = c.pic;
          cursor_ = pos - 1;
          align_for_sendpicp(pos);
          push({ins, static_cast<int32_t>(seg.message), offset, true, seg.sctl, pos, static_cast<int32_t>(seg.message),
                offset});
        } else {
          ins.op = Opcode::SendPic;
          ins.selector = c.has_xpic ? (c.xpic_paired ? kSendPicPairedXpic : kSendPicXpic)
                                    : (c.has_format ? kSendPicFormat : kSendPicPointer);
          ins.value = c.has_xpic ? c.xpic : c.has_format ? c.format : c.pic;
          push({ins, -1, 0, c.has_pic, seg.sctl, pos, static_cast<int32_t>(seg.message), offset});
        }
        pos += static_cast<int32_t>(ins.words);
      } else {
        Instruction ins;
        ins.op = Opcode::SendOff;
        ins.words = count_until(kMaxSendOff, next_event(next_control));
        ins.delta = 0;
        ins.sctl = seg.sctl;
        push({ins, -1, 0, false, seg.sctl, 0, static_cast<int32_t>(seg.message), offset});
        pos += static_cast<int32_t>(ins.words);
      }
    }
    cursor_ = last;
    return next_control;
  }

  // Makes the next word index even by splitting one instruction emitted since the last
  // sendpicp; no event moves.
  void align_for_sendpicp(int32_t event) {
    if (words_ % 2 == 0) return;
    for (size_t k = out_.size(); k-- > 0;) {
      Emitted& e = out_[k];
      if (e.ins.op == Opcode::SendPicP) {
        // Its tail can still be cut off: sendpicp keeps its index, the tail follows it.
        if (e.ins.words < 2) break;
        Instruction rest;
        if (e.ins.sctl & 3u) {
          rest.op = Opcode::SendOff;
          rest.words = e.ins.words - 1;
          rest.sctl = e.ins.sctl;
        } else {
          rest.op = Opcode::Delay;
          rest.events = e.ins.words - 1;
        }
        const Emitted tail{rest, -1, 0, false, e.stream_sctl, 0, e.stream_message, e.stream_offset + 1};
        e.ins.words = 1;
        out_.insert(out_.begin() + static_cast<std::ptrdiff_t>(k) + 1, tail);
        ++words_;
        return;
      }
      Emitted tail = e;
      bool split = false;
      switch (e.ins.op) {
        case Opcode::Delay:
        case Opcode::DelayPic:
        case Opcode::DelayXpic:
          if (e.ins.events >= 2) {
            Instruction head;
            head.op = Opcode::Delay;
            head.events = 1;
            tail.ins.events = e.ins.events - 1;
            e = Emitted{head};
            split = true;
          }
          break;
        case Opcode::Send:
        case Opcode::SendOff:
        case Opcode::SendPic:
          if (e.ins.words >= 2) {
            e.ins.words = 1;
            Instruction rest;
            rest.op = Opcode::SendOff;
            rest.words = tail.ins.words - 1;
            rest.delta = 0;
            rest.sctl = e.stream_sctl;
            tail = Emitted{rest, -1, 0, false, e.stream_sctl, 0, e.stream_message, e.stream_offset + 1};
            split = true;
          }
          break;
        default:
          break;
      }
      if (split) {
        out_.insert(out_.begin() + static_cast<std::ptrdiff_t>(k) + 1, tail);
        ++words_;
        return;
      }
    }
    if (widen_single_control()) return;
    throw AlignmentError(where(event) + "no instruction to split or widen to align a sendpicp at an even word index");
  }

  // Every instruction since the last sendpicp takes one event: turn one at an even word index
  // that carries a single control into a sendpicp carrying the same control plus a companion
  // that changes nothing (the pointer's current value, or the mux's current source). One
  // more word, no event moves; the companion joins the plan so the row check expects it.
  bool widen_single_control() {
    // Issue counter of every emitted instruction.
    std::vector<int32_t> issue(out_.size());
    int32_t counter = 0;
    for (size_t k = 0; k < out_.size(); ++k) {
      issue[k] = counter;
      const Instruction& ins = out_[k].ins;
      const bool sends = ins.op == Opcode::Send || ins.op == Opcode::SendOff || ins.op == Opcode::SendPic ||
                         ins.op == Opcode::SendPicP;
      counter += static_cast<int32_t>(sends ? ins.words : ins.events);
    }
    uint32_t index = words_;
    for (size_t k = out_.size(); k-- > 0;) {
      Emitted& e = out_[k];
      index -= size_of(e.ins);
      if (e.ins.op == Opcode::SendPicP) break;
      if (index % 2 != 0) continue;
      const int32_t event = issue[k] + 1;  // where a sendpicp in its place applies controls
      const bool one_event = e.ins.events == 1;
      const bool delay_xpic = e.ins.op == Opcode::DelayXpic && one_event;
      // A format control has no sendpicp form: it is never widened.
      const bool delay_pic = e.ins.op == Opcode::DelayPic && one_event && e.ins.selector == kPicPointer;
      const bool send_pic = e.ins.op == Opcode::SendPic && e.ins.selector != kSendPicFormat;
      const bool plain_delay = e.ins.op == Opcode::Delay && one_event;
      const bool send_off = e.ins.op == Opcode::SendOff && e.ins.words <= kMaxSend && e.stream_message >= 0;
      if (!delay_xpic && !delay_pic && !send_pic && !plain_delay && !send_off) continue;
      if ((plain_delay || send_off) && is_message_start(event)) continue;
      auto control = std::lower_bound(plan_.controls.begin(), plan_.controls.end(), event,
                                      [](const ControlEvent& c, int32_t v) { return c.event < v; });
      ControlEvent fresh{event};
      if (plain_delay || send_off) {
        // The walk over plan_.controls is still running: new entries are merged in after it.
        if (control != plan_.controls.end() && control->event == event) continue;
        added_.push_back(fresh);
        control = plan_.controls.end();
      } else if (control == plan_.controls.end() || control->event != event ||
                 (control->has_xpic && control->has_pic) || control->has_format) {
        fail(event, "widening a control the plan does not hold");
      }
      // The companions change nothing: the mux keeps its source, the pointer its value.
      ControlEvent& target = control == plan_.controls.end() ? added_.back() : *control;
      if (!target.has_xpic) {
        target.has_xpic = true;
        target.xpic = plan_.xpic_at(event, problem_.machine->neutral_mux);
      }
      if (!target.has_pic) {
        target.has_pic = true;
        target.pic = plan_.pointer_at(event);
      }
      control = plan_.controls.end();
      const ControlEvent& applied = target;
      Instruction wide;
      wide.op = Opcode::SendPicP;
      wide.xpic = applied.xpic;
      wide.xpic_paired = applied.xpic_paired;
      wide.pic = applied.pic;
      if (send_pic || send_off) {
        wide.words = e.ins.words;
        wide.sctl = e.stream_sctl;
        wide.address =
            message_item_address(problem_, order_->at(static_cast<size_t>(e.stream_message)), 0) + e.stream_offset;
        e = Emitted{wide,  e.stream_message, e.stream_offset, true, e.stream_sctl,
                    event, e.stream_message, e.stream_offset};
      } else {
        wide.words = 1;
        wide.sctl = 0;
        e = Emitted{wide, -1, 0, true, 0, event};
      }
      ++words_;
      return true;
    }
    return false;
  }

  bool is_message_start(int32_t event) const {
    for (const SendSegment& s : plan_.sends)
      if (event == s.first_event || event == s.first_event - 1) return true;
    return false;
  }

  const PhaseProblem& problem_;
  TilePlan& plan_;

 public:
  const Order* order_ = nullptr;

 private:
  std::vector<Emitted> out_;
  std::vector<ControlEvent> added_;  // companion controls created by widening
  uint32_t words_ = 0;
  int32_t cursor_ = 0;
};

}  // namespace

TileRow encode_tile_row(const PhaseProblem& problem, const Order& order, TilePlan& plan) {
  RowBuilder builder(problem, plan);
  builder.order_ = &order;
  const std::vector<Emitted> emitted = builder.build();
  TileRow row;
  row.tile = problem.topology->logical(plan.tile);
  row.incoming_base = 0;
  row.end_event = static_cast<uint32_t>(plan.end_event);
  const uint32_t iterations = std::max<uint32_t>(problem.phase->iterations, 1);
  for (const Emitted& e : emitted) {
    const uint32_t index = static_cast<uint32_t>(row.words.size());
    try {
      arch::encode_into(e.ins, row.words);
    } catch (const std::invalid_argument& error) {
      throw CompilerError("encoding: phase " + std::to_string(problem.phase->id) + " tile " + std::to_string(row.tile) +
                          ": " + arch::describe(e.ins) + ": " + error.what());
    }
    if (e.message >= 0) {
      const Message& message = order[static_cast<size_t>(e.message)];
      AddressField field;
      field.word_index = index;
      field.kind = AddressField::Kind::SendAddress;
      for (uint32_t i = 0; i < iterations; ++i) {
        Instruction ins = e.ins;
        ins.address = message_item_address(problem, message, i) + e.item_offset;
        field.values.push_back(arch::encode(ins)[0]);
      }
      if (std::all_of(field.values.begin(), field.values.end(), [&](uint32_t v) { return v == field.values[0]; }))
        field.values.resize(1);
      row.address_fields.push_back(std::move(field));
    }
    if (e.pic) {
      const uint32_t pic_index = e.ins.op == Opcode::SendPicP ? index + 1 : index;
      row.address_fields.push_back({pic_index, AddressField::Kind::PicPointer, {row.words[pic_index]}});
    }
  }
  return row;
}

}  // namespace lockstep::compiler
