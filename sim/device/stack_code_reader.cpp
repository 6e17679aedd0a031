// The stack emitter's sequences (IPU21-DEVICE.md 8.1 to 8.6), read back into steps.
#include "sim/device/stack_code_reader.hpp"

#include "arch/registers.hpp"
#include "arch/stack_kernels.hpp"
#include "io/hex.hpp"

// GCC 12's false "maybe uninitialized" on std::variant moves, as in code_reader.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace lockstep::arch {
using namespace registers;  // kM0 .. kZero, the exchange CSRs
namespace {

constexpr uint32_t kMaxPatchWords = 1u << 16;  // a bound on tables read from the image

}  // namespace

std::string StackCodeReader::next_call_symbol() const {
  for (size_t k = 0; k < 8; ++k) {
    const auto in = at(k);
    if (!in) return "";
    if (in->op == Opcode::Call) return symbol(in->target);
  }
  return "";
}

bool StackCodeReader::at_complete() const {
  const auto set = at(), br = at(1);
  return set && br && set->op == Opcode::SetZi && set->reg == kM0 && br->op == Opcode::Br && br->reg == kM0 &&
         symbol(static_cast<uint32_t>(set->immediate)) == "ipu_stack_static_complete";
}

// A Repeat's bookkeeping starts with `ld32 $m0, $m11, $m15, slot`; no body step does.
bool StackCodeReader::at_loop_end() const {
  const auto in = at();
  return in && in->op == Opcode::Ld32 && in->dest == kM0 && in->base == kStack && in->index == kZero;
}

std::vector<Step> StackCodeReader::read_stack_program(uint32_t program) {
  const uint32_t base = address() - 4 * static_cast<uint32_t>(pc_);
  pc_ = (program - base) / 4;
  std::vector<Step> steps = read_stack_steps(false);
  if (!at_complete()) fail("expected the jump to ipu_stack_static_complete");
  return steps;
}

std::vector<Step> StackCodeReader::read_stack_steps(bool in_repeat) {
  std::vector<Step> steps;
  while (at() && !at_complete() && !(in_repeat && at_loop_end())) {
    const auto in = *at();
    if (in.op == Opcode::Add && in.dest == kStack && in.source == kStack && in.immediate < 0) {
      if (in_repeat) fail("a Repeat inside a Repeat (the stack's emitter rejects them)");
      steps.push_back(read_stack_repeat());
      continue;
    }
    if (in.op == Opcode::Trap) fail("a checkpoint trap: the model does not stop at breakpoints");
    if (in.op == Opcode::SetZi && in.reg == kM8) {
      steps.push_back(read_stack_exchange());
      continue;
    }
    const std::string callee = next_call_symbol();
    if (callee == "ipu_stack_static_patch_row") {
      steps.push_back(Step{read_setup_patch()});
    } else if (callee == "ipu_stack_static_patch_word") {
      if (!in_repeat) fail("a Repeat patch outside a Repeat");
      PatchStep patch{PatchMethod::Helper, {}};
      while (next_call_symbol() == "ipu_stack_static_patch_word" && next_is(Opcode::SetZi, kM2)) {
        patch.entries.push_back(read_repeat_patch());
      }
      steps.push_back(Step{std::move(patch)});
    } else if (callee == "ipu_stack_static_host_run") {
      if (in_repeat) fail("a host phase inside a Repeat");
      read_host_run(steps);
    } else if (callee == "ipu_stack_static_repeat_call") {
      if (in_repeat) fail("a host phase inside a Repeat");
      read_host_followers(steps);
    } else if (callee == "ipu_stack_static_copy_u16" && next_is(Opcode::SetZi, kM4)) {
      read_inline_copies(steps);
    } else if (parse_stack_kernel(callee)) {
      steps.push_back(read_stack_kernel(callee));
    } else if (!callee.empty()) {
      const std::string why = stack_kernel_refusal(callee);
      fail("a call of " + (why.empty() ? callee + ": not a kernel of the IPU21 stack" : why));
    } else {
      fail("no step of the stack's emitter starts here");
    }
  }
  return steps;
}

// Section 8.3: the output address in $m2, the inputs from $m3, the scalars after them, each by
// setzi (and shl 12, add for 20 bits or more), then `call SYMBOL, $m10`.
Step StackCodeReader::read_stack_kernel(const std::string& symbol) {
  const StackKernel kernel = *parse_stack_kernel(symbol);
  KernelStep k;
  k.name = symbol;
  const size_t values = kernel.pointers() + kernel.scalars();
  for (uint32_t i = 0; i < values; ++i) {
    const uint32_t reg = kM2 + i;
    if (next_is(Opcode::Ld32, reg)) {
      if (i >= kernel.pointers()) fail("a Repeat pointer as a scalar of " + symbol);
      k.operands.push_back(read_pointer_operand(reg));
      continue;
    }
    const uint32_t value = take_immediate(reg);
    if (i < kernel.pointers())
      k.operands.push_back({value, false});
    else
      k.scalars.push_back(value);
  }
  take_call(kM10);
  return Step{std::move(k)};
}

// Section 8.3's repeat-pointer address: `ld32 $r, $m11, $m15, slot` then `add $r, $r, k` chunks.
Operand StackCodeReader::read_pointer_operand(uint32_t reg) {
  const auto ld = at();
  if (!frame_base_ || ld->base != kStack || ld->index != kZero || ld->offset == 0)
    fail("an operand loaded from memory that is not a Repeat pointer's slot");
  const uint32_t slot = *frame_base_ + 4 * ld->offset;
  if (!initial_words_.count(slot))
    fail("an operand from Repeat pointer slot " + std::to_string(ld->offset) + ", which the Repeat never set");
  ++pc_;
  return Operand{slot, true, static_cast<int32_t>(take_adds(reg))};
}

// Section 8.3's batched half-word copies: `setzi $m4, n; call copy_u16, $m10` and n inline
// (source, destination) word pairs the helper returns past: one copy step of a half-word each.
void StackCodeReader::read_inline_copies(std::vector<Step>& steps) {
  const uint32_t entries = take_immediate(kM4);
  take_call(kM10);
  if (entries == 0 || entries > kMaxPatchWords)
    fail("a batched half-word copy of " + std::to_string(entries) + " entries");
  for (uint32_t i = 0; i < entries; ++i) {
    const uint32_t source = word_here(), destination = word_here();
    steps.push_back(Step{KernelStep{"ipu_stack_static_copy_u16", {{destination, false}, {source, false}}, {1}}});
  }
}

uint32_t StackCodeReader::word_here() {
  const uint32_t word = memory(address());
  ++pc_;
  return word;
}

// Section 8.2 steps 4 to 11 (no preserved bases: the stack's compiler never uses them).
Step StackCodeReader::read_stack_exchange() {
  ExchangeStep e;
  e.incoming_base = take_setzi(kM8);
  take_put(kIncomingBase, kM8);
  for (auto in = at(); in && in->op == Opcode::SetZi && in->reg == kM8 && next_is(Opcode::Put, kM8, 1); in = at()) {
    const auto put = at(1);
    const uint32_t value = take_setzi(kM8);
    if (put->csr == kIncomingMux)
      e.incoming_mux = value;
    else if (put->csr == kIncomingFormat)
      e.incoming_format = value;
    else if (put->csr == kIncomingMuxPair)
      e.incoming_muxpair = value;
    else
      break;
    ++pc_;
  }
  take_put(kOutgoingBase, kZero);
  if (at() && at()->op == Opcode::Sans) {
    take_zone(Opcode::Sans, 0);
    take_zone(Opcode::Sync, 1);
    const uint32_t row = take_call(kM10);
    if (memory(row) != 0x43a00000u) fail("an inactive tile's row at " + hex(row) + " is more than br $m10");
    return Step{e};
  }
  if (symbol(take_call(kM7)) != "ipu_stack_static_worker_barrier") fail("expected the worker barrier's call");
  if (next_is(Opcode::SetZi, kM8)) {
    if (take_setzi(kM8) != 1) fail("an INCOMING_DCOUNT other than 1 (host data): not an internal exchange");
    take_put(kIncomingDcount, kM8);
  }
  take_zone(Opcode::Sync, 3);
  e.row_address = take_call(kM10);
  return Step{e};
}

// Section 8.4: the frame holds the remaining count and the pointers. A Repeat the reader
// accepts is never nested, so its frame lies right below the supervisor stack's top: pointer i's
// slot is kSupervisorStackTop - frame + 4 (i + 1), an iterated pointer of the package whose
// initial value initial_words() gives the import to place.
Step StackCodeReader::read_stack_repeat() {
  const int64_t frame = -take_adds(kStack);
  if (frame <= 0 || frame > 4096) fail("a Repeat frame of " + std::to_string(frame) + " bytes");
  RepeatStep r;
  r.count = take_immediate(kM0);
  take_st32(kM0, kStack);
  frame_base_ = kSupervisorStackTop - static_cast<uint32_t>(frame);
  while (next_is(Opcode::SetZi, kM0)) {
    const uint32_t initial = take_immediate(kM0);
    const auto st = at();
    if (!st || st->op != Opcode::St32 || st->source != kM0 || st->base != kStack || st->offset == 0 ||
        4 * (st->offset + 1) > static_cast<uint64_t>(frame))
      fail("expected a pointer slot's st32 inside the frame");
    ++pc_;
    const uint32_t slot = *frame_base_ + 4 * st->offset;
    initial_words_[slot] = initial;
    r.pointers.push_back({slot, 0});
  }
  r.body = read_stack_steps(true);
  while (at_loop_end() && at()->offset != 0) {  // pointer advances
    const uint32_t slot = *frame_base_ + 4 * at()->offset;
    ++pc_;
    const int64_t stride = take_adds(kM0);
    ++pc_;  // its st32
    for (IteratedPointer& p : r.pointers) {
      if (p.address == slot) p.stride = static_cast<int32_t>(stride);
    }
  }
  frame_base_.reset();
  take_ld32(kM0, kStack, 0);
  take_add(kM0, kM0, -1);
  take_st32(kM0, kStack);
  if (!next_is(Opcode::Brz, kM0)) fail("expected brz $m0 (the Repeat's count test)");
  ++pc_;
  take_setzi(kM0);
  take_br(kM0);
  if (take_adds(kStack) != frame) fail("the Repeat's frame pop does not match its push");
  if (r.body.empty()) fail("an empty Repeat body");
  return Step{std::move(r)};
}

// `setzi $m2,row; setzi $m3,offsets; setzi $m4,values; setzi $m5,n; call patch_row,$m9`.
PatchStep StackCodeReader::read_setup_patch() {
  const uint32_t row = take_setzi(kM2);
  const uint32_t offsets = take_setzi(kM3);
  const uint32_t values = take_setzi(kM4);
  const uint32_t n = take_immediate(kM5);
  take_call(kM9);
  if (n == 0 || n > kMaxPatchWords) fail("a setup patch of " + std::to_string(n) + " words");
  PatchStep p{PatchMethod::Setup, {}};
  for (uint32_t i = 0; i < n; ++i) {
    p.entries.push_back({row + memory(offsets + 4 * i), {memory(values + 4 * i)}});
  }
  return p;
}

// `setzi $m2,word; setzi $m3,table; ld32 $m4,$m11,$m15,0; setzi $m5,count; call patch_word,$m9`:
// the helper writes table[count - remaining], the iteration's value.
PatchEntry StackCodeReader::read_repeat_patch() {
  const uint32_t word = take_setzi(kM2);
  const uint32_t table = take_setzi(kM3);
  take_ld32(kM4, kStack, 0);
  const uint32_t count = take_immediate(kM5);
  take_call(kM9);
  if (count == 0 || count > kMaxPatchWords) fail("a Repeat patch of " + std::to_string(count) + " values");
  PatchEntry e{word, {}};
  for (uint32_t i = 0; i < count; ++i) e.values.push_back(memory(table + 4 * i));
  return e;
}

}  // namespace lockstep::arch
