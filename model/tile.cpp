#include "model/tile.hpp"

#include "arch/hex.hpp"
#include "arch/kernel_signatures.hpp"
#include "model/kernel_registry.hpp"
#include "model/supervisor_costs.hpp"

namespace lockstep::model {

using arch::hex;

Tile::Tile(sc_core::sc_module_name name, const arch::TileProgram& program,
           const arch::MachineDescription& machine, uint32_t physical, RunMonitor& monitor)
    : sc_core::sc_module(name),
      barrier("barrier"),
      program_(program),
      machine_(machine),
      physical_(physical),
      monitor_(monitor),
      memory_(machine) {
  mux = machine.neutral_mux;
  paired_mux = machine.neutral_mux;
  SC_HAS_PROCESS(Tile);
  SC_THREAD(run);
  // Supervisor threads recurse only through nested Repeats; small stacks keep 1,472 cheap.
  // ASan's instrumented frames are several times larger, so its build gets more room.
#if defined(__SANITIZE_ADDRESS__)
  set_stack_size(1024 * 1024);
#else
  set_stack_size(128 * 1024);
#endif
}

void Tile::wait_cycles(uint64_t cycles, CycleKind kind) {
  since_release_.add(kind, cycles);
  if (cycles > 0) wait(sc_core::sc_time::from_value(cycles));
}

CycleSplit Tile::path_now() const {
  CycleSplit path = release_path_ ? release_path_->total : CycleSplit{};
  path += since_release_;
  return path;
}

void Tile::released(SharedReleasePath path) {
  release_path_ = std::move(path);
  since_release_ = CycleSplit{};
}

void Tile::run() {
  for (uint32_t i = 0; i < invocations_ && !monitor_.stopping(); ++i) {
    invocation_ = i;
    execute(program_.steps);
    invocation_ends_.push_back(sc_core::sc_time_stamp().value());
  }
  finish_cycle_ = sc_core::sc_time_stamp().value();
  finish_path_ = path_now();
  finished_ = true;
}

void Tile::execute(const std::vector<arch::Step>& steps) {
  for (const auto& step : steps) {
    if (monitor_.stopping()) return;
    std::visit(
        [this](const auto& s) {
          using T = std::decay_t<decltype(s)>;
          if constexpr (std::is_same_v<T, arch::SyncStep>) do_sync(s);
          if constexpr (std::is_same_v<T, arch::ExchangeStep>) do_exchange(s);
          if constexpr (std::is_same_v<T, arch::KernelStep>) do_kernel(s);
          if constexpr (std::is_same_v<T, arch::RepeatStep>) do_repeat(s);
          if constexpr (std::is_same_v<T, arch::PatchStep>) do_patch(s);
        },
        step.kind);
  }
}

void Tile::exchanged(std::shared_ptr<const PhaseActivities> activities, uint32_t position) {
  exchange_activities_ = std::move(activities);
  exchange_position_ = position;
}

void Tile::record(StepRole role, const void* step, uint64_t start) {
  const uint64_t end = sc_core::sc_time_stamp().value();
  const auto epoch = static_cast<uint32_t>(epoch_);
  if (role == StepRole::Kernel && !records_.empty()) {
    // Consecutive calls of one kernel with the same arguments share a sample (the stack's
    // profile does the same), so a long run of small calls stays one line.
    StepRecord& last = records_.back();
    if (last.role == StepRole::Kernel && last.end == start && last.epoch == epoch && last.invocation == invocation_) {
      const auto* a = static_cast<const arch::KernelStep*>(last.step);
      const auto* b = static_cast<const arch::KernelStep*>(step);
      if (a == b || (a->name == b->name && a->scalars == b->scalars)) {
        last.end = end;
        ++last.calls;
        return;
      }
    }
  }
  StepRecord r;
  r.start = start;
  r.end = end;
  r.step = step;
  r.role = role;
  r.epoch = epoch;
  r.invocation = invocation_;
  if (role == StepRole::Exchange) {
    r.activities = std::move(exchange_activities_);
    r.position = exchange_position_;
  }
  records_.push_back(std::move(r));
}

void Tile::do_sync(const arch::SyncStep& step) {
  const uint64_t start = sc_core::sc_time_stamp().value();
  wait_cycles(sync_instructions() * machine_.supervisor_cycles_per_instruction, CycleKind::Sync);
  barrier->arrive(BarrierKey{false, 0}, *this);
  if (monitor_.profile) record(StepRole::Sync, &step, start);
}

void Tile::do_exchange(const arch::ExchangeStep& step) {
  const uint64_t start = sc_core::sc_time_stamp().value();
  wait_cycles(exchange_setup_instructions(step) * machine_.supervisor_cycles_per_instruction, CycleKind::Sync);
  pending_exchange_ = &step;
  current_phase_ = step.phase;
  const int64_t events = barrier->arrive(BarrierKey{true, step.phase}, *this);
  pending_exchange_ = nullptr;
  wait_cycles(static_cast<uint64_t>(events), CycleKind::Exchange);
  if (monitor_.profile) record(StepRole::Exchange, &step, start);
}

RecordedHazard Tile::make_step_hazard(HazardClass kind, const std::string& what, const std::string& detail) const {
  RecordedHazard h;
  h.hazard.kind = kind;
  h.hazard.tile = logical();
  h.hazard.instruction = what;
  h.hazard.detail = detail;
  h.phase = current_phase_;
  h.iteration = iteration();
  h.cycle = sc_core::sc_time_stamp().value();
  return h;
}

void Tile::step_hazard(HazardClass kind, const std::string& what, const std::string& detail) {
  monitor_.report(make_step_hazard(kind, what, detail));
}

void Tile::run_pending_kernels() {
  for (PendingKernel& k : pending_) {
    try {
      k.kernel->execute(k.operands, k.step->scalars, memory_);
    } catch (const std::out_of_range& e) {
      k.context.hazard.detail = e.what();
      kernel_hazards_.push_back(std::move(k.context));
    }
  }
  pending_.clear();
}

void Tile::report_kernel_hazards() {
  for (auto& h : kernel_hazards_) monitor_.report(std::move(h));
  kernel_hazards_.clear();
}

void Tile::flush_kernels() {
  run_pending_kernels();
  report_kernel_hazards();
}

// Whether a queued kernel's operand spans `address` (the validated signature's spans).
bool Tile::pending_kernel_touches(uint32_t address) const {
  for (const PendingKernel& k : pending_) {
    const arch::KernelSignature* sig = arch::find_kernel_signature(k.step->name);
    if (sig == nullptr) return true;
    const auto spans = sig->operand_bytes(k.step->scalars, k.operands.size());
    for (size_t i = 0; i < k.operands.size(); ++i) {
      if (address + 4 > k.operands[i] && address < uint64_t(k.operands[i]) + spans[i]) return true;
    }
  }
  return false;
}

void Tile::do_kernel(const arch::KernelStep& step) {
  const uint64_t start = sc_core::sc_time_stamp().value();
  // Kernels wait for the next barrier to run on every core; a long run of them without one
  // (a Repeat of kernel calls) runs here in program order instead, which gives the same
  // memory, so the queue and the operand search over it stay short.
  constexpr size_t kMaxQueuedKernels = 256;
  if (pending_.size() >= kMaxQueuedKernels) flush_kernels();
  const KernelDefinition* kernel = find_kernel(step.name);
  std::vector<uint32_t> operands;
  bool ok = kernel != nullptr;
  for (const auto& op : step.operands) {
    if (!op.indirect) {
      operands.push_back(op.address);
    } else if (memory_.contains(op.address, 4)) {
      if (pending_kernel_touches(op.address)) flush_kernels();
      operands.push_back(memory_.read_word(op.address));
    } else {
      step_hazard(HazardClass::WriteOutOfRange, "kernel " + step.name,
                  "indirect operand slot " + hex(op.address) + " outside SRAM");
      ok = false;
    }
  }
  if (ok) {
    pending_.push_back({kernel, &step, std::move(operands),
                        make_step_hazard(HazardClass::WriteOutOfRange, "kernel " + step.name, "")});
  }
  const uint64_t cycles = kernel_launch_instructions() * machine_.supervisor_cycles_per_instruction +
                          (kernel ? kernel->cycles(step.scalars, machine_) : 0);
  since_release_.add_kernel(step.name, cycles);
  if (cycles > 0) wait(sc_core::sc_time::from_value(cycles));
  if (monitor_.profile) record(StepRole::Kernel, &step, start);
}

void Tile::do_repeat(const arch::RepeatStep& step) {
  const uint64_t entry = sc_core::sc_time_stamp().value();
  wait_cycles(repeat_entry_instructions() * machine_.supervisor_cycles_per_instruction, CycleKind::Control);
  if (monitor_.profile) record(StepRole::RepeatEntry, &step, entry);
  // The device keeps iterated pointers in the Repeat's stack frame and writes their initial
  // addresses at every entry (IPU21-DEVICE.md 8.4): a Repeat entered again (the next
  // invocation) starts from the addresses its first entry found. After it ends the slots
  // keep their advanced values, as the popped frame's memory does.
  auto [initial, first_entry] = repeat_initial_pointers_.try_emplace(&step);
  for (const auto& p : step.pointers) {
    if (!memory_.contains(p.address, 4)) continue;
    if (first_entry) initial->second.emplace_back(p.address, memory_.read_word(p.address));
  }
  if (!first_entry) {
    flush_kernels();  // the entry's stores follow the kernels in program order
    for (const auto& [address, value] : initial->second) memory_.write_word(address, value);
  }
  const uint64_t outer_epoch = epoch_;
  for (uint32_t i = 0; i < step.count; ++i) {
    monitor_.check_limits(sc_core::sc_time_stamp().value());
    if (monitor_.stopping()) return;
    iterations_.push_back(i);
    epoch_ = outer_epoch * step.count + i;
    execute(step.body);
    iterations_.pop_back();
    if (monitor_.stopping()) return;
    const uint64_t bookkeeping = sc_core::sc_time_stamp().value();
    if (!step.pointers.empty()) flush_kernels();  // the loop code's loads and stores
    for (const auto& p : step.pointers) {
      if (!memory_.contains(p.address, 4)) {
        step_hazard(HazardClass::WriteOutOfRange, "repeat pointer",
                    "iterated pointer slot " + hex(p.address) + " outside SRAM");
        continue;
      }
      memory_.write_word(p.address, memory_.read_word(p.address) + static_cast<uint32_t>(p.stride));
    }
    wait_cycles(repeat_iteration_instructions(step, i + 1 == step.count) *
                    machine_.supervisor_cycles_per_instruction,
                CycleKind::Control);
    if (monitor_.profile) record(StepRole::RepeatIteration, &step, bookkeeping);
  }
  epoch_ = outer_epoch;
}

void Tile::do_patch(const arch::PatchStep& step) {
  const uint64_t start = sc_core::sc_time_stamp().value();
  flush_kernels();  // the patch's stores follow the kernels in program order
  const uint32_t i = iteration();
  for (const auto& entry : step.entries) {
    if (entry.values.empty()) continue;
    if (!memory_.contains(entry.word_address, 4)) {
      step_hazard(HazardClass::WriteOutOfRange, "patch",
                  "patched word " + hex(entry.word_address) + " outside SRAM");
      continue;
    }
    memory_.write_word(entry.word_address, entry.values[i % entry.values.size()]);
  }
  wait_cycles(patch_cycles(step, machine_), CycleKind::Patching);
  if (monitor_.profile) record(StepRole::Patch, &step, start);
}

}  // namespace lockstep::model
