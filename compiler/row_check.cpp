// check_row: executes a decoded row the way docs/ipu21-exchange.md section 5 says and
// compares what it does with what the schedule planned.
#include "compiler/row_check.hpp"

#include <algorithm>
#include <sstream>
#include <string>

#include "arch/instruction.hpp"
#include "io/errors.hpp"

namespace lockstep::compiler {
namespace {

using arch::Opcode;

struct Run {
  int64_t first_event;
  int64_t items;
  int64_t address;
  uint32_t sctl;
  bool operator==(const Run&) const = default;
};

struct Control {
  int64_t event;
  bool has_xpic = false;
  bool has_pic = false;
  bool has_format = false;
  bool xpic_paired = false;
  uint32_t xpic = 0;
  uint32_t pic = 0;
  uint32_t format = 0;
  bool operator==(const Control&) const = default;
};

void append_run(std::vector<Run>& runs, Run run) {
  if (run.items <= 0) return;
  if (!runs.empty()) {
    Run& last = runs.back();
    if (last.first_event + last.items == run.first_event && last.address + last.items == run.address &&
        last.sctl == run.sctl) {
      last.items += run.items;
      return;
    }
  }
  runs.push_back(run);
}

class Checker {
 public:
  Checker(const PhaseProblem& problem, const Order& order, const TilePlan& plan, const TileRow& row)
      : problem_(problem), order_(order), plan_(plan), row_(row) {}

  void run() {
    std::vector<arch::DecodedInstruction> decoded;
    try {
      decoded = arch::decode_row(row_.words);
    } catch (const arch::DecodeError& error) {
      fail(0, std::string("row does not decode: ") + error.what());
    }
    execute(decoded);
    compare_runs();
    compare_controls();
    if (t_ != plan_.end_event)
      fail(t_, "row ends at event " + std::to_string(t_) + ", planned " + std::to_string(plan_.end_event));
    if (static_cast<uint32_t>(t_) != row_.end_event) fail(t_, "end_event field disagrees with the row");
    check_fields();
  }

 private:
  [[noreturn]] void fail(int64_t event, const std::string& what) const {
    throw CompilerError("encoding: phase " + std::to_string(problem_.phase->id) + " tile " + std::to_string(row_.tile) +
                        " event " + std::to_string(event) + ": " + what);
  }

  Control& control_at(int64_t event) {
    if (controls_.empty() || controls_.back().event != event) {
      if (!controls_.empty() && controls_.back().event > event) fail(event, "controls out of event order");
      controls_.push_back(Control{event});
    }
    return controls_.back();
  }
  // Selector 1 is the paired mux (XPIC) or the format (PIC): only rows of a phase with
  // paired transfers may use them.
  void xpic(int64_t event, uint32_t selector, uint32_t value) {
    if (event < 1) fail(event, "control before event 1");
    if (selector != 0 && problem_.paired_transfers == 0) fail(event, "paired XPIC control in a 32-bit phase");
    Control& c = control_at(event);
    if (c.has_xpic) fail(event, "two XPIC controls on one event");
    c.has_xpic = true;
    c.xpic_paired = selector != 0;
    c.xpic = value;
  }
  void pic(int64_t event, uint32_t selector, uint32_t value) {
    if (event < 1) fail(event, "control before event 1");
    if (selector != 0 && problem_.paired_transfers == 0) fail(event, "PIC format control in a 32-bit phase");
    Control& c = control_at(event);
    if (c.has_pic || c.has_format) fail(event, "two PIC controls on one event");
    (selector == 0 ? c.has_pic : c.has_format) = true;
    (selector == 0 ? c.pic : c.format) = value;
  }

  void execute(const std::vector<arch::DecodedInstruction>& decoded) {
    uint32_t word = 0;
    int64_t next = 0;
    uint32_t sctl = 0;
    bool open = false;
    for (const auto& d : decoded) {
      const arch::Instruction& ins = d.instruction;
      switch (ins.op) {
        case Opcode::Delay:
          t_ += ins.events;
          break;
        case Opcode::DelayPic:
          t_ += ins.events;
          pic(t_, ins.selector, ins.value);
          break;
        case Opcode::DelayXpic:
          t_ += ins.events;
          xpic(t_, ins.selector, ins.value);
          break;
        case Opcode::Send:
          next = ins.address;
          sctl = ins.sctl;
          open = true;
          first_items_.push_back({word, t_ + 1});
          append_run(runs_, {t_ + 1, ins.words, next, sctl});
          next += ins.words;
          t_ += ins.words;
          break;
        case Opcode::SendOff:
          if (!open) fail(t_, "sendoff with no open stream");
          next += ins.delta;
          sctl = ins.sctl;
          append_run(runs_, {t_ + 1, ins.words, next, sctl});
          next += ins.words;
          t_ += ins.words;
          break;
        case Opcode::SendPic:
          if (!open) fail(t_, "sendpic with no open stream");
          if (ins.selector < 2)
            xpic(t_ + 1, ins.selector, ins.value);
          else
            pic(t_ + 1, ins.selector - 2, ins.value);
          append_run(runs_, {t_ + 1, ins.words, next, sctl});
          next += ins.words;
          t_ += ins.words;
          break;
        case Opcode::SendPicP:
          if (word % 2 != 0) fail(t_, "sendpicp at odd word index");
          xpic(t_ + 1, ins.xpic_paired ? 1 : 0, ins.xpic);
          pic(t_ + 1, ins.pic_selector, ins.pic);
          if (ins.sctl & 3u) {
            next = ins.address;
            sctl = ins.sctl;
            open = true;
            first_items_.push_back({word, t_ + 1});
            append_run(runs_, {t_ + 1, ins.words, next, sctl});
            next += ins.words;
          }
          t_ += ins.words;
          break;
        case Opcode::Return:
          return;
        default:
          fail(t_, "unexpected instruction " + arch::describe(ins));
      }
      word += d.word_count;
    }
  }

  void compare_runs() {
    std::vector<Run> planned;
    for (const SendSegment& s : plan_.sends) append_run(planned, {s.first_event, s.items, s.item_address, s.sctl});
    const size_t n = std::min(planned.size(), runs_.size());
    for (size_t i = 0; i < n; ++i) {
      if (!(planned[i] == runs_[i])) {
        const int64_t event = std::min(planned[i].first_event, runs_[i].first_event);
        fail(event, "items leave as " + describe(runs_[i]) + ", planned " + describe(planned[i]));
      }
    }
    if (planned.size() != runs_.size()) {
      const Run& extra = planned.size() > runs_.size() ? planned[n] : runs_[n];
      fail(extra.first_event,
           planned.size() > runs_.size() ? "planned items never sent" : "items sent that were not planned");
    }
  }

  static std::string describe(const Run& run) {
    std::ostringstream out;
    out << run.items << " items from event " << run.first_event << " at item address 0x" << std::hex << run.address
        << " sctl " << std::dec << run.sctl;
    return out.str();
  }

  void compare_controls() {
    std::vector<Control> planned;
    for (const ControlEvent& c : plan_.controls)
      planned.push_back({c.event, c.has_xpic, c.has_pic, c.has_format, c.xpic_paired, c.xpic, c.pic, c.format});
    const size_t n = std::min(planned.size(), controls_.size());
    for (size_t i = 0; i < n; ++i) {
      if (!(planned[i] == controls_[i])) {
        fail(std::min(planned[i].event, controls_[i].event), "controls differ from the plan");
      }
    }
    if (planned.size() != controls_.size()) {
      const Control& extra = planned.size() > controls_.size() ? planned[n] : controls_[n];
      fail(extra.event, planned.size() > controls_.size() ? "planned control missing" : "control not planned");
    }
  }

  // Every word that starts a message's items bears an address field whose per-iteration
  // values move with that transfer's Repeat source addresses.
  void check_fields() {
    const uint32_t iterations = std::max<uint32_t>(problem_.phase->iterations, 1);
    size_t next_send = 0;
    for (const AddressField& field : row_.address_fields) {
      if (field.word_index >= row_.words.size()) fail(0, "address field past the row");
      if (field.values.empty() || (field.values.size() != 1 && field.values.size() != iterations))
        fail(0, "address field with a bad number of values");
      if (field.values[0] != row_.words[field.word_index]) fail(0, "address field's first value is not the row word");
      if (field.kind != AddressField::Kind::SendAddress) continue;
      if (next_send >= first_items_.size() || first_items_[next_send].first != field.word_index)
        fail(0, "send address field at word " + std::to_string(field.word_index) + " does not start a stream");
      const int64_t event = first_items_[next_send++].second;
      auto seg = std::upper_bound(plan_.sends.begin(), plan_.sends.end(), event,
                                  [](int64_t e, const SendSegment& s) { return e < s.first_event; });
      if (seg == plan_.sends.begin()) fail(event, "send address field outside any planned message");
      --seg;
      const Message& message = order_[seg->message];
      for (uint32_t i = 0; i < iterations; ++i) {
        const uint32_t value = field.values[field.values.size() == 1 ? 0 : i];
        const uint32_t expected =
            message_item_address(problem_, message, i) + static_cast<uint32_t>(event - seg->first_event);
        const uint32_t pair[2] = {value, 0};
        const arch::Instruction ins = arch::decode(pair, 0).instruction;
        if (ins.address != expected)
          fail(event, "iteration " + std::to_string(i) + " sends from item address " + std::to_string(ins.address) +
                          ", expected " + std::to_string(expected));
      }
    }
    if (next_send != first_items_.size()) fail(first_items_[next_send].second, "stream start without an address field");
  }

  const PhaseProblem& problem_;
  const Order& order_;
  const TilePlan& plan_;
  const TileRow& row_;
  int64_t t_ = 0;
  std::vector<Run> runs_;
  std::vector<Control> controls_;
  std::vector<std::pair<uint32_t, int64_t>> first_items_;  // word index, event of first item
};

}  // namespace

void check_row(const PhaseProblem& problem, const Order& order, const TilePlan& plan, const TileRow& row) {
  Checker(problem, order, plan, row).run();
}

}  // namespace lockstep::compiler
