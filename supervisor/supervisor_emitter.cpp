#include "supervisor/supervisor_emitter.hpp"

#include <algorithm>
#include <array>

#include "arch/host_packets.hpp"
#include "arch/instruction_sequences.hpp"
#include "arch/kernel_signatures.hpp"
#include "arch/stack_kernels.hpp"
#include "formats/package_validate_host.hpp"
#include "formats/token.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "supervisor/emitter_instructions.hpp"

namespace lockstep::arch {
namespace {

using namespace emitter;

// The word a tile's SRAM holds at `address` before the run (what the package loads there).
uint32_t initial_word(const TileProgram& program, uint32_t address) {
  for (const Segment& s : program.segments) {
    if (address < s.address || uint64_t(address) + 4 > uint64_t(s.address) + s.size) continue;
    const uint32_t at = address - s.address;
    switch (s.fill) {
      case FillKind::Zero:
        return 0;
      case FillKind::Tokens:
        return payload_token(s.token_seed, program.tile, address);
      case FillKind::Bytes:
        return uint32_t(s.bytes[at]) | uint32_t(s.bytes[at + 1]) << 8 | uint32_t(s.bytes[at + 2]) << 16 |
               uint32_t(s.bytes[at + 3]) << 24;
    }
  }
  return 0;
}

// A kernel of the IPU21 stack is called by its own symbol (IPU21-DEVICE.md 10: the stack's
// ABI is Lockstep's, output and inputs from $m2, then the scalars); Lockstep's own kernels
// by lockstep_kernel_<name>_<operands>.
std::string kernel_symbol(const KernelStep& k) {
  if (parse_stack_kernel(k.name)) return k.name;
  return "lockstep_kernel_" + k.name + "_" + std::to_string(k.operands.size());
}

}  // namespace

SupervisorEmitter::SupervisorEmitter(const TileProgram& program, const MachineDescription& machine,
                                     const LoweringOptions& options, uint32_t physical, uint32_t base)
    : program_(program), machine_(machine), options_(options), physical_(physical), base_(base) {}

void SupervisorEmitter::fail(const std::string& what) const {
  throw InputError("tile " + std::to_string(program_.tile) + ": supervisor code: " + what);
}

SupervisorEmitter::Label SupervisorEmitter::new_label() {
  label_address_.push_back(0);
  return static_cast<Label>(label_address_.size() - 1);
}
void SupervisorEmitter::bind(Label label) { label_address_[label] = here(); }
uint32_t SupervisorEmitter::here() const { return base_ + static_cast<uint32_t>(code_.size() * 4); }
void SupervisorEmitter::emit(const Instruction& instruction) { encode_into(instruction, code_); }
void SupervisorEmitter::emit_ref(Instruction instruction, Label label, int32_t offset) {
  references_.push_back({code_.size(), instruction, label, offset});
  code_.push_back(0);  // written in finish()
}
void SupervisorEmitter::site(SiteRole role, const Step* step, bool exchange, uint32_t phase) {
  sites_.push_back({here(), role, step, exchange, phase});
}
SupervisorEmitter::Label SupervisorEmitter::data(std::vector<uint32_t> words) {
  const Label label = new_label();
  data_labels_.emplace_back(label, static_cast<uint32_t>(data_.size()));
  data_.insert(data_.end(), words.begin(), words.end());
  return label;
}

// The setzi macro and the add chunks of arch/instruction_sequences.hpp, whose limits
// validate_package checks a package's values against.
void SupervisorEmitter::load_immediate(uint32_t reg, uint32_t value) {
  for (const Instruction& in : load_word(reg, value)) emit(in);
}
void SupervisorEmitter::load_label(uint32_t reg, Label label) { emit_ref(setzi(reg, 0), label); }
void SupervisorEmitter::add_constant(uint32_t reg, int64_t value) {
  for (const Instruction& in : arch::add_constant(reg, value)) emit(in);
}
void SupervisorEmitter::call(uint32_t return_reg, Label target) { emit_ref(branch(Opcode::Call, return_reg), target); }

// Which intrinsics the program calls and how deep its frames go.
void SupervisorEmitter::scan(const std::vector<Step>& list, uint32_t depth) {
  stack_bytes_ = std::max(stack_bytes_, depth * kFrameBytes);
  for (const Step& step : list) {
    if (const auto* k = std::get_if<KernelStep>(&step.kind)) {
      const std::string name = kernel_symbol(*k);
      if (!symbol_label_.count(name)) {
        symbol_label_[name] = new_label();
        symbols_.push_back({name, 0, true, k->name, static_cast<uint32_t>(k->operands.size())});
      }
    } else if (const auto* p = std::get_if<PatchStep>(&step.kind)) {
      if (p->method == PatchMethod::Bulk && !symbol_label_.count("lockstep_bulk_patch")) {
        symbol_label_["lockstep_bulk_patch"] = new_label();
        symbols_.push_back({"lockstep_bulk_patch", 0, true, "", 0});
      }
    } else if (const auto* r = std::get_if<RepeatStep>(&step.kind)) {
      scan(r->body, depth + 1);
    } else if (const auto* h = std::get_if<HostStep>(&step.kind)) {
      const std::vector<uint32_t> landing = host_landing_addresses(*h);
      for (size_t i = 0; i < landing.size(); ++i)
        copies_staged_ = copies_staged_ || landing[i] != h->transfers[i].tile_address;
    }
  }
}

// Lockstep's runtime (docs/supervisor-code.md): start-up, the worker barrier and the two
// patch helpers, then one `trap 1` slot per intrinsic, sorted by name.
void SupervisorEmitter::runtime() {
  for (const char* name : {"lockstep_start", "lockstep_worker_barrier", "lockstep_patch_word", "lockstep_patch_row"}) {
    symbol_label_[name] = new_label();
    symbols_.push_back({name, 0, false, "", 0});
  }
  // lockstep_start: the stack's start-up (section 9.1) without the worker initialisation,
  // which needs `runall`: Lockstep's code never starts workers of its own.
  bind(symbol_label_["lockstep_start"]);
  emit(sync(Opcode::Sync, 3));
  emit(sync(Opcode::Sync, 1));
  emit(setzi(kM8, machine_.neutral_mux));
  emit(put(kIncomingMux, kM8));
  emit(put(kOutgoingBase, kZero));
  load_label(kStack, stack_top_label_);
  emit(setzi(kM8, 0x600 + ((physical_ & 0x3f) & ~2u)));
  emit(put(kIncomingMux, kM8));
  emit(sync(Opcode::Sync, 7));
  emit(setzi(kM8, machine_.neutral_mux));
  emit(put(kIncomingMux, kM8));
  load_label(kM0, program_label_);
  emit(br(kM0));
  // lockstep_worker_barrier ($m7): no worker of Lockstep's runs past its kernel call, so
  // waiting for the tile's workers is the whole barrier.
  bind(symbol_label_["lockstep_worker_barrier"]);
  emit(sync(Opcode::Sync, 1));
  emit(br(kM7));
  // lockstep_patch_word: mem[$m2] = mem[$m3 + 4 * $m4], $m4 = the Repeat's remaining count
  // and $m3 = the value table (stored last iteration first) less 4; returns through $m9.
  bind(symbol_label_["lockstep_patch_word"]);
  emit(arithmetic(Opcode::Shl, kM4, kM4, 2));
  emit(ld32_indexed(kM5, kM3, kM4));
  emit(st32(kM5, kM2));
  emit(br(kM9));
  // lockstep_patch_row: for i < $m5: mem[$m2 + offsets[i]] = values[i]; $m3 offsets,
  // $m4 values; returns through $m9. `brz $m15` is an unconditional branch.
  bind(symbol_label_["lockstep_patch_row"]);
  const Label loop = new_label(), done = new_label();
  emit_ref(branch(Opcode::Brz, kM5), done);
  bind(loop);
  emit(ld32(kM0, kM3, 0));
  emit(ld32(kM1, kM4, 0));
  emit(st32(kM1, kM2, kM0));
  emit(arithmetic(Opcode::Add, kM3, kM3, 4));
  emit(arithmetic(Opcode::Add, kM4, kM4, 4));
  emit(arithmetic(Opcode::Add, kM5, kM5, -1));
  emit_ref(branch(Opcode::Brz, kM5), done);
  emit_ref(branch(Opcode::Brz, kZero), loop);
  bind(done);
  emit(br(kM9));
  if (copies_staged_) copy_words_helper();
  std::sort(symbols_.begin(), symbols_.end(), [](const CodeSymbol& a, const CodeSymbol& b) {
    return a.intrinsic != b.intrinsic ? !a.intrinsic : a.name < b.name;
  });
  for (const CodeSymbol& s : symbols_) {
    if (!s.intrinsic) continue;
    bind(symbol_label_[s.name]);
    Instruction trap = op(Opcode::Trap);
    trap.breakpoint = 1;
    emit(trap);
  }
}

TileCode SupervisorEmitter::run() {
  program_label_ = new_label();
  stack_top_label_ = new_label();
  scan(program_.steps, 0);
  if (options_.invocations > 1) stack_bytes_ += kFrameBytes;
  runtime();
  program_body();
  return finish();
}

// The whole program (section 8.1): the steps, in an invocation loop when there are several.
void SupervisorEmitter::program_body() {
  bind(program_label_);
  const bool loop = options_.invocations > 1;
  const Label start = new_label(), done = new_label();
  if (loop) {
    add_constant(kStack, -int64_t(kFrameBytes));
    load_immediate(kM0, options_.invocations);
    emit(st32(kM0, kStack));
  }
  bind(start);
  steps(program_.steps, nullptr);
  if (loop) {
    // An invocation ends once its count is down; the frame is not popped before the halt.
    emit(ld32(kM0, kStack, 0));
    emit(arithmetic(Opcode::Add, kM0, kM0, -1));
    emit(st32(kM0, kStack));
    emit_ref(branch(Opcode::Brz, kM0), done);
    site(SiteRole::InvocationEnd, nullptr);
    load_label(kM0, start);
    emit(br(kM0));
    bind(done);
    site(SiteRole::InvocationEnd, nullptr);
  }
  if (options_.completion_word) {  // ipu_stack_static_complete's store, from verified encodings
    emit(setzi(kM0, 1));
    emit(setzi(kM1, kCompletionWord));
    emit(st32(kM0, kM1));
  }
  site(SiteRole::Halt, nullptr);
  emit(br(kZero));  // a branch to address 0 halts (section 6)
}

void SupervisorEmitter::steps(const std::vector<Step>& list, const RepeatStep* repeat) {
  for (const Step& step : list) {
    std::visit(
        [&](const auto& s) {
          using T = std::decay_t<decltype(s)>;
          if constexpr (std::is_same_v<T, SyncStep>) sync_step(step, s);
          if constexpr (std::is_same_v<T, ExchangeStep>) exchange_step(step, s);
          if constexpr (std::is_same_v<T, KernelStep>) kernel_step(step, s);
          if constexpr (std::is_same_v<T, RepeatStep>) repeat_step(step, s);
          if constexpr (std::is_same_v<T, PatchStep>) patch_step(step, s, repeat);
          if constexpr (std::is_same_v<T, HostStep>) host_step(step, s);
        },
        step.kind);
  }
}

void SupervisorEmitter::sync_step(const Step& step, const SyncStep& s) {
  site(SiteRole::Sync, &step);
  site(SiteRole::Barrier, &step);
  emit(sync(Opcode::Sync, s.zone));
}

// Section 8.2 steps 4 to 11 (no profile samples, no patches: those are steps of their own).
void SupervisorEmitter::exchange_step(const Step& step, const ExchangeStep& e) {
  site(SiteRole::Exchange, &step);
  emit(setzi(kM8, e.incoming_base));
  emit(put(kIncomingBase, kM8));
  if (e.incoming_mux) {
    emit(setzi(kM8, *e.incoming_mux));
    emit(put(kIncomingMux, kM8));
  }
  if (e.incoming_format != 0) {
    emit(setzi(kM8, e.incoming_format));
    emit(put(kIncomingFormat, kM8));
  }
  if (e.incoming_muxpair) {
    emit(setzi(kM8, *e.incoming_muxpair));
    emit(put(kIncomingMuxPair, kM8));
  }
  emit(put(kOutgoingBase, kZero));
  if (e.row_address) {
    call(kM7, symbol_label_["lockstep_worker_barrier"]);
    emit(setzi(kM8, 1));
    emit(put(kIncomingDcount, kM8));
    site(SiteRole::Barrier, &step, true, e.phase);
    emit(sync(Opcode::Sync, 3));
    site(SiteRole::RowCall, &step);
    Instruction row = branch(Opcode::Call, kM10);
    row.target = *e.row_address;
    emit(row);
  } else {
    emit(sync(Opcode::Sans, 0));
    site(SiteRole::Barrier, &step, true, e.phase);
    emit(sync(Opcode::Sync, 1));
  }
}

// Section 8.3 with Lockstep's kernel ABI: operand i in $m(2+i), then the scalars; an
// indirect operand loads its slot. The kernel returns through $m10.
void SupervisorEmitter::kernel_step(const Step& step, const KernelStep& k) {
  // validate_package refuses both (same limits); a package lowered unvalidated hears why.
  if (const std::string why = kernel_arguments_misfit(k.operands.size() + k.scalars.size()); !why.empty()) {
    fail("kernel " + k.name + ": " + why);
  }
  for (size_t j = 0; j < k.scalars.size(); ++j) {
    if (const std::string why = word_misfit(k.scalars[j]); !why.empty()) {
      fail("kernel " + k.name + ": scalars[" + std::to_string(j) + "]: " + why);
    }
  }
  site(SiteRole::Kernel, &step);
  uint32_t reg = kKernelFirstArgument;
  for (const Operand& o : k.operands) {
    emit(setzi(reg, o.address));
    if (o.indirect) emit(ld32(reg, reg, 0));
    if (o.indirect && o.offset != 0) add_constant(reg, o.offset);
    ++reg;
  }
  for (const int64_t scalar : k.scalars) {
    for (const Instruction& in : load_word(reg++, scalar)) emit(in);
  }
  call(kM10, symbol_label_[kernel_symbol(k)]);
}

// Section 8.4 with the iterated pointers in their own SRAM slots (the package names them)
// rather than in the frame; the frame holds the remaining count.
void SupervisorEmitter::repeat_step(const Step& step, const RepeatStep& r) {
  site(SiteRole::RepeatEntry, &step);
  add_constant(kStack, -int64_t(kFrameBytes));
  load_immediate(kM0, r.count);
  emit(st32(kM0, kStack));
  for (const IteratedPointer& p : r.pointers) {
    load_immediate(kM0, initial_word(program_, p.address));
    emit(setzi(kM1, p.address));
    emit(st32(kM0, kM1));
  }
  const Label loop = new_label(), done = new_label();
  bind(loop);
  site(SiteRole::RepeatBody, &step);
  steps(r.body, &r);
  site(SiteRole::RepeatIteration, &step);
  for (const IteratedPointer& p : r.pointers) {
    if (p.stride == 0) continue;
    emit(setzi(kM1, p.address));
    emit(ld32(kM0, kM1, 0));
    add_constant(kM0, p.stride);
    emit(st32(kM0, kM1));
  }
  emit(ld32(kM0, kStack, 0));
  emit(arithmetic(Opcode::Add, kM0, kM0, -1));
  emit(st32(kM0, kStack));
  emit_ref(branch(Opcode::Brz, kM0), done);
  load_label(kM0, loop);
  emit(br(kM0));
  bind(done);
  site(SiteRole::RepeatExit, &step);
  add_constant(kStack, kFrameBytes);
}

void SupervisorEmitter::patch_step(const Step& step, const PatchStep& p, const RepeatStep* repeat) {
  site(SiteRole::Patch, &step);
  if (p.method == PatchMethod::Bulk) {
    patch_bulk(p, repeat);
    return;
  }
  std::vector<const PatchEntry*> setup;
  for (const PatchEntry& e : p.entries) {
    const bool varies = e.values.size() > 1 && repeat != nullptr;
    if (varies) {
      patch_per_iteration(e, *repeat);
    } else if (p.method == PatchMethod::Setup) {
      setup.push_back(&e);
    } else {
      patch_constant(e.word_address, e.values.front());
    }
  }
  if (!setup.empty()) patch_setup(setup);
}

void SupervisorEmitter::patch_constant(uint32_t word_address, uint32_t value) {
  load_immediate(kM5, value);
  emit(setzi(kM2, word_address));
  emit(st32(kM5, kM2));
}

// The value table lies last iteration first, so the remaining count indexes it (no `sub`).
void SupervisorEmitter::patch_per_iteration(const PatchEntry& entry, const RepeatStep& repeat) {
  std::vector<uint32_t> table(repeat.count);
  for (uint32_t i = 0; i < repeat.count; ++i) table[repeat.count - 1 - i] = entry.values[i % entry.values.size()];
  const Label values = data(std::move(table));
  emit(setzi(kM2, entry.word_address));
  emit_ref(setzi(kM3, 0), values, -4);
  emit(ld32(kM4, kStack, 0));
  call(kM9, symbol_label_["lockstep_patch_word"]);
}

void SupervisorEmitter::patch_setup(const std::vector<const PatchEntry*>& entries) {
  uint32_t low = entries.front()->word_address;
  for (const PatchEntry* e : entries) low = std::min(low, e->word_address);
  std::vector<uint32_t> offsets, values;
  for (const PatchEntry* e : entries) {
    offsets.push_back(e->word_address - low);
    values.push_back(e->values.front());
  }
  const Label offset_table = data(std::move(offsets));
  const Label value_table = data(std::move(values));
  emit(setzi(kM2, low));
  load_label(kM3, offset_table);
  load_label(kM4, value_table);
  load_immediate(kM5, static_cast<uint32_t>(entries.size()));
  call(kM9, symbol_label_["lockstep_patch_row"]);
}

// The six-worker patcher (intrinsic): $m2 list of (word address, V values) records,
// $m3 records, $m4 the Repeat's remaining count (1 outside), $m5 V, $m6 the Repeat's count.
void SupervisorEmitter::patch_bulk(const PatchStep& p, const RepeatStep* repeat) {
  const uint32_t count = repeat ? repeat->count : 1;
  uint32_t per_entry = 1;
  for (const PatchEntry& e : p.entries) {
    if (e.values.size() > 1) per_entry = count;
  }
  std::vector<uint32_t> list;
  for (const PatchEntry& e : p.entries) {
    list.push_back(e.word_address);
    for (uint32_t i = 0; i < per_entry; ++i) list.push_back(e.values[i % e.values.size()]);
  }
  const Label records = data(std::move(list));
  load_label(kM2, records);
  load_immediate(kM3, static_cast<uint32_t>(p.entries.size()));
  if (repeat) {
    emit(ld32(kM4, kStack, 0));
  } else {
    emit(setzi(kM4, 1));
  }
  load_immediate(kM5, per_entry);
  load_immediate(kM6, count);
  call(kM10, symbol_label_["lockstep_bulk_patch"]);
}

// Places the data tables after the code and its guard, the stack after them, and writes
// every reference.
TileCode SupervisorEmitter::finish() {
  if (data_.size() % 2 != 0) data_.push_back(0);  // keeps the stack 8-aligned
  TileCode code;
  code.tile = program_.tile;
  code.base = base_;
  code.code_bytes = static_cast<uint32_t>(code_.size() * 4);
  code.invocations = std::max<uint32_t>(1, options_.invocations);
  const uint32_t data_base = base_ + code.code_bytes + kGuardWords * 4;
  for (const auto& [label, offset] : data_labels_) label_address_[label] = data_base + offset * 4;
  const uint32_t stack_base = data_base + static_cast<uint32_t>(data_.size() * 4);
  label_address_[stack_top_label_] = stack_base + stack_bytes_;
  for (const Reference& r : references_) {
    Instruction in = r.instruction;
    const uint32_t address = label_address_[r.label] + static_cast<uint32_t>(r.offset);
    if (in.op == Opcode::SetZi) {
      in.immediate = static_cast<int32_t>(address);
    } else if (in.op == Opcode::Send) {
      in.address = address / 4;  // a word address (32-bit items)
    } else {
      in.target = address;
    }
    std::vector<uint32_t> words = encode(in);
    code_[r.index] = words.front();
  }
  code.words = std::move(code_);
  code.words.resize(code.words.size() + kGuardWords, 0);
  code.words.insert(code.words.end(), data_.begin(), data_.end());
  code.words.resize(code.words.size() + stack_bytes_ / 4, 0);
  code.program = label_address_[program_label_];
  code.stack_top = label_address_[stack_top_label_];
  for (CodeSymbol& s : symbols_) s.address = label_address_[symbol_label_[s.name]];
  std::sort(symbols_.begin(), symbols_.end(),
            [](const CodeSymbol& a, const CodeSymbol& b) { return a.address < b.address; });
  code.symbols = std::move(symbols_);
  code.sites = std::move(sites_);  // emitted in address order
  return code;
}

}  // namespace lockstep::arch
