// The sequences of supervisor/supervisor_emitter.cpp, read back. Registers and CSRs are the
// emitter's (IPU21-DEVICE.md sections 3 and 4).
#include "supervisor/code_reader.hpp"

#include "arch/kernel_signatures.hpp"
#include "arch/registers.hpp"
#include "arch/stack_kernels.hpp"
#include "io/hex.hpp"
#include "supervisor/emitter_instructions.hpp"
#include "supervisor/supervisor_code.hpp"

// GCC 12 reports the Step variants built below as "maybe uninitialized" (a known false
// positive of std::variant moves at -O2); every one is built whole.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace lockstep::arch {
using namespace registers;  // kM0 .. kZero, the exchange CSRs
namespace {

// The stack pointer's move for a Repeat frame, signed as the add instruction carries it.
constexpr int32_t kFrameStep = static_cast<int32_t>(emitter::kFrameBytes);

// The register an instruction writes or names first, for next_is().
uint32_t first_register(const Instruction& in) {
  switch (in.op) {
    case Opcode::Add:
    case Opcode::And:
    case Opcode::Shl:
    case Opcode::Ld32:
    case Opcode::Get:
      return in.dest;
    case Opcode::St32:
      return in.source;
    default:
      return in.reg;
  }
}

}  // namespace

CodeReader::CodeReader(std::vector<uint32_t> code, uint32_t base, std::map<uint32_t, std::string> symbols,
                       std::function<uint32_t(uint32_t)> memory)
    : code_(std::move(code)), base_(base), symbols_(std::move(symbols)), memory_(std::move(memory)) {}

std::optional<Instruction> CodeReader::at(size_t offset) const {
  if (pc_ + offset >= code_.size()) return std::nullopt;
  try {
    return decode(code_, pc_ + offset).instruction;
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

void CodeReader::fail(const std::string& what) const {
  throw CodeReadError{address(), pc_ < code_.size() ? code_[pc_] : 0, what};
}

bool CodeReader::next_is(Opcode op, uint32_t reg, size_t offset) const {
  const auto in = at(offset);
  return in && in->op == op && first_register(*in) == reg;
}

uint32_t CodeReader::take_setzi(uint32_t reg) {
  if (!next_is(Opcode::SetZi, reg)) fail("expected setzi $m" + std::to_string(reg));
  const uint32_t value = static_cast<uint32_t>(at()->immediate);
  ++pc_;
  return value;
}

uint32_t CodeReader::take_immediate(uint32_t reg) {
  uint32_t value = take_setzi(reg);
  const auto shl = at();
  const auto add = at(1);
  if (shl && shl->op == Opcode::Shl && shl->dest == reg && shl->source == reg && shl->immediate == 12 && add &&
      add->op == Opcode::Add && add->dest == reg && add->source == reg && add->immediate >= 0 &&
      add->immediate < 0x1000) {
    value = (value << 12) + static_cast<uint32_t>(add->immediate);
    pc_ += 2;
  }
  return value;
}

void CodeReader::take_put(uint32_t csr, uint32_t reg) {
  const auto in = at();
  if (!in || in->op != Opcode::Put || in->csr != csr || in->reg != reg) {
    fail("expected put " + hex(csr) + ", $m" + std::to_string(reg));
  }
  ++pc_;
}

void CodeReader::take_ld32(uint32_t dest, uint32_t base, uint32_t offset) {
  const auto in = at();
  if (!in || in->op != Opcode::Ld32 || in->dest != dest || in->base != base || in->index != kZero ||
      in->offset != offset) {
    fail("expected ld32 $m" + std::to_string(dest) + ", $m" + std::to_string(base) + ", $m15, " +
         std::to_string(offset));
  }
  ++pc_;
}

void CodeReader::take_st32(uint32_t source, uint32_t base) {
  const auto in = at();
  if (!in || in->op != Opcode::St32 || in->source != source || in->base != base || in->index != kZero ||
      in->offset != 0) {
    fail("expected st32 $m" + std::to_string(source) + ", $m" + std::to_string(base) + ", $m15, 0");
  }
  ++pc_;
}

void CodeReader::take_add(uint32_t dest, uint32_t source, int32_t immediate) {
  const auto in = at();
  if (!in || in->op != Opcode::Add || in->dest != dest || in->source != source || in->immediate != immediate) {
    fail("expected add $m" + std::to_string(dest) + ", $m" + std::to_string(source) + ", " + std::to_string(immediate));
  }
  ++pc_;
}

int64_t CodeReader::take_adds(uint32_t reg) {
  int64_t sum = 0;
  for (auto in = at(); in && in->op == Opcode::Add && in->dest == reg && in->source == reg; in = at()) {
    sum += in->immediate;
    ++pc_;
  }
  return sum;
}

uint32_t CodeReader::take_call(uint32_t reg) {
  const auto in = at();
  if (!in || in->op != Opcode::Call || in->reg != reg) fail("expected call $m" + std::to_string(reg));
  ++pc_;
  return in->target;
}

void CodeReader::take_zone(Opcode op, uint32_t zone) {
  const auto in = at();
  if (!in || in->op != op || in->zone != zone) fail("expected " + mnemonic(op) + " " + std::to_string(zone));
  ++pc_;
}

void CodeReader::take_br(uint32_t reg) {
  const auto in = at();
  if (!in || in->op != Opcode::Br || in->reg != reg) fail("expected br $m" + std::to_string(reg));
  ++pc_;
}

std::string CodeReader::symbol(uint32_t target) const {
  const auto it = symbols_.find(target);
  return it == symbols_.end() ? std::string() : it->second;
}

std::vector<Step> CodeReader::read_program(uint32_t program) {
  if (program < base_ || (program - base_) % 4 != 0 || (program - base_) / 4 >= code_.size()) {
    throw CodeReadError{program, 0, "the program's address lies outside the code area"};
  }
  pc_ = (program - base_) / 4;
  std::vector<Step> steps = read_steps(nullptr);
  take_br(kZero);  // the halt
  if (pc_ != code_.size()) fail("code after the program's final branch to address 0");
  return steps;
}

// A Repeat's body ends where its per-iteration bookkeeping starts: a pointer's advance
// (setzi $m1; ld32 $m0, $m1) or the count's decrement (ld32 $m0, $m11).
bool CodeReader::at_iteration_end() const {
  if (next_is(Opcode::SetZi, kM1) && next_is(Opcode::Ld32, kM0, 1)) return true;
  const auto in = at();
  return in && in->op == Opcode::Ld32 && in->dest == kM0 && in->base == kStack;
}

// `setzi $m0, 1; setzi $m1, 0x58000; st32 $m0, $m1, $m15, 0` (the halt must follow: read_program).
bool CodeReader::at_completion() const {
  const auto value = at(), word = at(1), store = at(2);
  return value && word && store && value->op == Opcode::SetZi && value->reg == kM0 && value->immediate == 1 &&
         word->op == Opcode::SetZi && word->reg == kM1 && static_cast<uint32_t>(word->immediate) == kCompletionWord &&
         store->op == Opcode::St32 && store->source == kM0 && store->base == kM1 && store->index == kZero &&
         store->offset == 0;
}

std::vector<Step> CodeReader::read_steps(const RepeatStep* repeat) {
  std::vector<Step> steps;
  while (true) {
    const auto in = at();
    if (!in) fail("not an instruction");
    if (!repeat && at_completion()) {
      pc_ += 3;  // read_program requires the halt next: nothing else follows the store
      completion_ = true;
      return steps;
    }
    if (in->op == Opcode::Br && in->reg == kZero && !repeat) return steps;
    if (repeat && at_iteration_end()) return steps;
    if (in->op == Opcode::Sync) {
      steps.push_back(Step{SyncStep{in->zone}});
      ++pc_;
    } else if (in->op == Opcode::Sans && in->zone == 1) {
      take_zone(Opcode::Sans, 1);  // a host phase the tile abstains from
      take_zone(Opcode::Sync, 1);
      steps.push_back(Step{HostStep{}});
    } else if (next_is(Opcode::SetZi, kM8) && at(1) && at(1)->op == Opcode::Put && at(1)->csr == kIncomingMux &&
               at(2) && at(2)->op == Opcode::Sync && (at(2)->zone == 7 || at(2)->zone == 15)) {
      steps.push_back(read_host());
    } else if (next_is(Opcode::SetZi, kM8) && next_is(Opcode::Put, kM8, 1)) {
      steps.push_back(read_exchange());
    } else if (in->op == Opcode::Add && in->dest == kStack && in->source == kStack && in->immediate == -kFrameStep) {
      steps.push_back(read_repeat());
    } else if (next_is(Opcode::SetZi, kM2) || next_is(Opcode::SetZi, kM5)) {
      // A kernel's first operand, or a patch: the call that ends the sequence says which.
      size_t k = 0;
      while (at(k) && at(k)->op != Opcode::Call) ++k;
      const auto call = at(k);
      if (call && call->reg == kM10 &&
          (symbol(call->target).rfind("lockstep_kernel_", 0) == 0 || parse_stack_kernel(symbol(call->target)))) {
        steps.push_back(read_kernel());
      } else {
        read_patch(repeat, steps);
      }
    } else {
      fail("not the start of a step Lockstep lowers (sync, exchange, host phase, kernel, patch, Repeat)");
    }
  }
}

// Section 8.2 steps 4 to 11 as the emitter writes them.
Step CodeReader::read_exchange() {
  ExchangeStep e;
  e.incoming_base = take_setzi(kM8);
  take_put(kIncomingBase, kM8);
  const auto optional_csr = [&](uint32_t csr) -> std::optional<uint32_t> {
    const auto put = at(1);
    if (!next_is(Opcode::SetZi, kM8) || !put || put->op != Opcode::Put || put->csr != csr) return std::nullopt;
    const uint32_t v = take_setzi(kM8);
    take_put(csr, kM8);
    return v;
  };
  e.incoming_mux = optional_csr(kIncomingMux);
  e.incoming_format = optional_csr(kIncomingFormat).value_or(0);
  e.incoming_muxpair = optional_csr(kIncomingMuxPair);
  take_put(kOutgoingBase, kZero);
  if (next_is(Opcode::Sans, 0)) {
    take_zone(Opcode::Sans, 0);
    take_zone(Opcode::Sync, 1);
    return Step{e};
  }
  if (symbol(take_call(kM7)) != "lockstep_worker_barrier") fail("the worker barrier's call names another symbol");
  if (take_setzi(kM8) != 1) fail("expected setzi $m8, 1 (the incoming dcount)");
  take_put(kIncomingDcount, kM8);
  take_zone(Opcode::Sync, 3);
  e.row_address = take_call(kM10);
  return Step{e};
}

// Section 8.4 as the emitter writes it: pointers live in their own slots.
Step CodeReader::read_repeat() {
  RepeatStep r;
  take_add(kStack, kStack, -kFrameStep);
  r.count = take_immediate(kM0);
  take_st32(kM0, kStack);
  while (next_is(Opcode::SetZi, kM0)) {
    const size_t start = pc_;
    take_immediate(kM0);
    if (!next_is(Opcode::SetZi, kM1)) {
      pc_ = start;
      break;
    }
    r.pointers.push_back({take_setzi(kM1), 0});
    take_st32(kM0, kM1);
  }
  const uint32_t loop = address();
  r.body = read_steps(&r);
  while (next_is(Opcode::SetZi, kM1)) {
    const uint32_t slot = take_setzi(kM1);
    take_ld32(kM0, kM1, 0);
    const int64_t stride = take_adds(kM0);
    take_st32(kM0, kM1);
    bool found = false;
    for (auto& p : r.pointers) {
      if (p.address == slot && p.stride == 0 && !found) {
        p.stride = static_cast<int32_t>(stride);
        found = true;
      }
    }
    if (!found) fail("advances a pointer slot the Repeat did not set up");
  }
  take_ld32(kM0, kStack, 0);
  take_add(kM0, kM0, -1);
  take_st32(kM0, kStack);
  const auto brz = at();
  if (!brz || brz->op != Opcode::Brz || brz->reg != kM0) fail("expected brz $m0 (the Repeat's exit)");
  ++pc_;
  if (take_setzi(kM0) != loop) fail("the Repeat's loop does not return to its body");
  take_br(kM0);
  if (brz->target != address()) fail("the Repeat's exit is not the frame's release");
  take_add(kStack, kStack, kFrameStep);
  return Step{r};
}

// Section 8.3 with Lockstep's ABI: operands from $m2 (indirect ones load their slot), then
// the scalars; `call lockstep_kernel_NAME_OPERANDS, $m10`.
Step CodeReader::read_kernel() {
  struct Value {
    uint32_t value;
    bool indirect;
    int32_t offset = 0;
  };
  std::vector<Value> values;
  for (uint32_t reg = kM2; next_is(Opcode::SetZi, reg); ++reg) {
    Value v{take_immediate(reg), false};
    const auto ld = at();
    if (ld && ld->op == Opcode::Ld32 && ld->dest == reg && ld->base == reg && ld->index == kZero && ld->offset == 0) {
      v.indirect = true;
      ++pc_;
      if (next_is(Opcode::Add, reg)) v.offset = static_cast<int32_t>(take_adds(reg));
    }
    values.push_back(v);
  }
  const std::string name = symbol(take_call(kM10));
  KernelStep k;
  std::string count;
  if (const auto stack = parse_stack_kernel(name)) {  // a stack kernel, by its own symbol
    k.name = name;
    count = std::to_string(stack->pointers());
  } else {
    const size_t underscore = name.rfind('_');
    const std::string prefix = "lockstep_kernel_";
    k.name = name.substr(prefix.size(), underscore - prefix.size());
    count = name.substr(underscore + 1);
  }
  if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos || count.size() > 2 ||
      std::stoul(count) > values.size()) {
    fail("kernel symbol " + name + " does not match the " + std::to_string(values.size()) + " values set up");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (i < std::stoul(count)) {
      k.operands.push_back({values[i].value, values[i].indirect, values[i].offset});
    } else {
      if (values[i].indirect) fail("a scalar loads from memory");
      // A signed scalar (gemm_fp8's weight scale) was loaded as its low 32 bits.
      const KernelSignature* sig = find_kernel_signature(k.name);
      const size_t j = k.scalars.size();
      const bool is_signed = sig != nullptr && j < 32 && ((sig->signed_scalars >> j) & 1u);
      k.scalars.push_back(is_signed ? int64_t{static_cast<int32_t>(values[i].value)} : int64_t{values[i].value});
    }
  }
  return Step{k};
}

// Constants (`st32`) and per-iteration words (lockstep_patch_word) form one helper step;
// a lockstep_patch_row call is a setup step of its own. Lowered again, either grouping
// gives the same words.
void CodeReader::read_patch(const RepeatStep* repeat, std::vector<Step>& steps) {
  PatchEntry entry;
  if (next_is(Opcode::SetZi, kM5)) {
    const uint32_t value = take_immediate(kM5);
    entry.word_address = take_setzi(kM2);
    take_st32(kM5, kM2);
    entry.values = {value};
  } else if (next_is(Opcode::SetZi, kM3, 1) && next_is(Opcode::Ld32, kM4, 2)) {
    entry = read_patch_word(repeat);
  } else {
    steps.push_back(Step{read_patch_row()});
    return;
  }
  PatchStep* last = steps.empty() ? nullptr : std::get_if<PatchStep>(&steps.back().kind);
  if (last && last->method == PatchMethod::Helper) {
    last->entries.push_back(std::move(entry));
  } else {
    steps.push_back(Step{PatchStep{PatchMethod::Helper, {std::move(entry)}}});
  }
}

PatchEntry CodeReader::read_patch_word(const RepeatStep* repeat) {
  if (!repeat) fail("a per-iteration patch outside a Repeat");
  PatchEntry entry;
  entry.word_address = take_setzi(kM2);
  const uint32_t table = take_setzi(kM3) + 4;  // the emitter passes the table less 4
  take_ld32(kM4, kStack, 0);
  if (symbol(take_call(kM9)) != "lockstep_patch_word") fail("a per-iteration patch calls another symbol");
  for (uint32_t i = 0; i < repeat->count; ++i) entry.values.push_back(memory_(table + 4 * (repeat->count - 1 - i)));
  if (entry.values.size() == 1) entry.values.push_back(entry.values.front());  // still varies
  return entry;
}

PatchStep CodeReader::read_patch_row() {
  PatchStep p{PatchMethod::Setup, {}};
  const uint32_t low = take_setzi(kM2);
  const uint32_t offsets = take_setzi(kM3);
  const uint32_t values = take_setzi(kM4);
  const uint32_t count = take_immediate(kM5);
  if (symbol(take_call(kM9)) != "lockstep_patch_row") fail("not a patch Lockstep lowers");
  if (count > (1u << 16)) fail("a patch_row count of " + std::to_string(count));
  for (uint32_t i = 0; i < count; ++i) p.entries.push_back({low + memory_(offsets + 4 * i), {memory_(values + 4 * i)}});
  return p;
}

}  // namespace lockstep::arch
