#include "model/tile.hpp"

#include <algorithm>
#include <cstdint>
#include <variant>
#include <vector>

#include "io/hex.hpp"
#include "model/kernel_registry.hpp"

namespace lockstep::model {

using arch::hex;

namespace {
constexpr uint32_t kStackRegister = 11;
}  // namespace

Tile::Tile(sc_core::sc_module_name name, const arch::TileProgram& program, arch::TileCode code,
           const arch::MachineDescription& machine, uint32_t physical, RunMonitor& monitor, Sram memory)
    : sc_core::sc_module(name),
      barrier("barrier"),
      program_(program),
      machine_(machine),
      physical_(physical),
      monitor_(monitor),
      memory_(std::move(memory)),
      code_(std::move(code)) {
  mux = machine.neutral_mux;
  paired_mux = machine.neutral_mux;
  pc_ = code_.program;
  reg_[kStackRegister] = code_.stack_top;
}

void Tile::before_end_of_elaboration() {
  SC_HAS_PROCESS(Tile);
  if (!monitor_.synchronous_steps) {
    SC_METHOD(run_method);
    return;
  }
  SC_THREAD(run_thread);
  // A waiting step needs a stack; small ones keep 1,472 cheap. ASan's instrumented frames are
  // several times larger, so its build gets more room.
#if defined(__SANITIZE_ADDRESS__)
  set_stack_size(1024 * 1024);
#else
  set_stack_size(128 * 1024);
#endif
}

void Tile::run_method() {
  activate();
  if (finished_) return;
  if (waiting_ == Waiting::Release) {
    next_trigger(*barrier_wait_.arrival.released);
  } else {
    next_trigger(sc_core::sc_time::from_value(wake_after_));
  }
}

void Tile::run_thread() {
  for (activate(); !finished_; activate()) {
    if (waiting_ == Waiting::Release) {
      wait(*barrier_wait_.arrival.released);
    } else {
      wait(sc_core::sc_time::from_value(wake_after_));
    }
  }
}

void Tile::activate() {
  if (waiting_ != Waiting::Nothing && !resume()) return;
  interpret();
}

bool Tile::resume() {
  switch (waiting_) {
    case Waiting::Finishing:
      waiting_ = Waiting::Nothing;
      finish();
      return false;
    case Waiting::Release:
      if (!barrier_wait_.arrival.released_since()) return false;
      break;
    case Waiting::Releasing:
      barrier->release(barrier_wait_.key);
      break;
    default:
      break;
  }
  if (after_barrier()) return true;
  end_program();
  return false;
}

void Tile::end_program() {
  flush_issued();
  if (ahead_ == 0) {
    finish();
    return;
  }
  waiting_ = Waiting::Finishing;
  wake_after_ = ahead_;
  ahead_ = 0;
}

void Tile::finish() {
  close_record();
  if (invocation_ends_.size() < code_.invocations) invocation_ends_.push_back(now());
  finish_cycle_ = now();
  finish_path_ = path_now();
  finished_ = true;
  if (!monitor_.stopping() &&
      !memory_.equal(code_.base, code_.code_bytes, reinterpret_cast<const uint8_t*>(code_.words.data()))) {
    step_hazard(HazardClass::InstructionAccess, "supervisor code",
                "the code at " + hex(code_.base) + ".." + hex(code_.base + code_.code_bytes) + " was overwritten");
  }
}

void Tile::wait_cycles(uint64_t cycles, CycleKind kind) {
  since_release_.add(kind, cycles);
  advance(cycles);
}

void Tile::advance(uint64_t cycles) {
  ahead_ += cycles;
  if (monitor_.synchronous_steps) catch_up();
}

void Tile::catch_up() {
  if (ahead_ == 0) return;
  const uint64_t cycles = ahead_;
  ahead_ = 0;
  wait(sc_core::sc_time::from_value(cycles));
}

CycleSplit Tile::path_now() const {
  CycleSplit path = release_path_ ? release_path_->total : CycleSplit{};
  path += since_release_;
  return path;
}

void Tile::released(SharedReleasePath path) {
  release_path_ = std::move(path);
  ahead_ = 0;  // it resumes at the release
  since_release_ = CycleSplit{};
}

void Tile::exchanged(std::shared_ptr<const PhaseActivities> activities, uint32_t position) {
  exchange_activities_ = std::move(activities);
  exchange_position_ = position;
}

namespace {

// At most 512 KiB a tile ahead of use (1,472 tiles: 736 MiB of address space, touched only as
// records come): a longer run's records grow from there. The whole model's need at most 1,360.
constexpr uint64_t kMostRecordsReserved = uint64_t{1} << 13;

// The step records one invocation of `steps` opens at most (capped): one a step, and a Repeat's
// iteration record and body every iteration (consecutive kernel calls that merge open fewer).
uint64_t records_opened(const std::vector<arch::Step>& steps) {
  uint64_t n = 0;
  for (const auto& step : steps) {
    ++n;
    if (const auto* r = std::get_if<arch::RepeatStep>(&step.kind)) {
      n += std::min(kMostRecordsReserved, uint64_t{r->count} * (1 + records_opened(r->body)));
    }
    if (n >= kMostRecordsReserved) return kMostRecordsReserved;
  }
  return n;
}

}  // namespace

// Room for every record at once: grown by doubling, the whole model's 106 MB of records were
// moved and freed again on the simulation's thread (docs/performance.md, round twenty-nine).
void Tile::reserve_records() {
  records_.reserve(std::min(kMostRecordsReserved, records_opened(program_.steps) * code_.invocations));
}

void Tile::open_record(StepRole role, const void* step) {
  open_.open = true;
  open_.role = role;
  open_.step = step;
  open_.start = now();
  open_.epoch = static_cast<uint32_t>(epoch_);
  open_.invocation = invocation_;
  open_.kernel = role == StepRole::Kernel ? &static_cast<const arch::KernelStep*>(step)->name : nullptr;
  open_.kernel_cycles = 0;
}

// Ends the open step at the current time (issued cycles already waited).
void Tile::close_record() {
  if (!open_.open) return;
  open_.open = false;
  if (!monitor_.profile) return;
  const uint64_t end = now();
  if (open_.role == StepRole::Kernel && !records_.empty()) {
    // Consecutive calls of one kernel with the same arguments share a sample (the stack's
    // profile does the same), so a long run of small calls stays one line.
    StepRecord& last = records_.back();
    if (last.role == StepRole::Kernel && last.end == open_.start && last.epoch == open_.epoch &&
        last.invocation == open_.invocation) {
      const auto* a = static_cast<const arch::KernelStep*>(last.step);
      const auto* b = static_cast<const arch::KernelStep*>(open_.step);
      if (a == b || (a->name == b->name && a->scalars == b->scalars)) {
        last.end = end;
        ++last.calls;
        last.kernel_cycles += open_.kernel_cycles;
        return;
      }
    }
  }
  StepRecord r;
  r.start = open_.start;
  r.end = end;
  r.step = open_.step;
  r.role = open_.role;
  r.epoch = open_.epoch;
  r.invocation = open_.invocation;
  r.kernel_cycles = open_.kernel_cycles;
  if (open_.role == StepRole::Exchange) {
    r.activities = std::move(exchange_activities_);
    r.position = exchange_position_;
  }
  records_.push_back(std::move(r));
}

// A hazard of a step (supervisor code, a patch, a kernel) at the given phase, iteration and cycle.
RecordedHazard Tile::step_hazard_at(HazardClass kind, std::string what, std::string detail, uint32_t phase,
                                    uint32_t iteration, uint64_t cycle) const {
  RecordedHazard h;
  h.hazard.kind = kind;
  h.hazard.tile = logical();
  h.hazard.instruction = std::move(what);
  h.hazard.detail = std::move(detail);
  h.hazard.step = true;
  h.phase = phase;
  h.iteration = iteration;
  h.cycle = cycle;
  return h;
}

void Tile::step_hazard(HazardClass kind, const std::string& what, const std::string& detail) {
  monitor_.report(step_hazard_at(kind, what, detail, current_phase_, iteration(), now()));
}

// A queued kernel's hazard, at its launch.
RecordedHazard Tile::kernel_hazard(const PendingKernel& k, HazardClass kind, std::string detail) const {
  return step_hazard_at(kind, "kernel " + *k.name, std::move(detail), k.phase, k.iteration, k.cycle);
}

void Tile::run_pending_kernels() {
  for (size_t q = 0; q < queued_; ++q) {
    PendingKernel& k = pending_[q];
    // A kernel's operands must stay out of the code area (an indirect operand's target is
    // known only now).
    for (size_t i = 0; i < k.operands.size(); ++i) {
      if (uint64_t(k.operands[i]) + k.spans[i] <= code_.base || k.operands[i] >= code_.end()) continue;
      kernel_hazards_.push_back(kernel_hazard(k, HazardClass::InstructionAccess,
                                              "operands[" + std::to_string(i) + "] " + hex(k.operands[i]) + "+" +
                                                  std::to_string(k.spans[i]) + " overlaps the supervisor code area " +
                                                  hex(code_.base) + ".." + hex(code_.end())));
    }
    try {
      k.kernel->execute(k.operands, k.scalars, memory_);
      if (monitor_.watcher != nullptr && monitor_.watcher->watches(logical())) {
        std::vector<std::pair<uint32_t, uint64_t>> operands;
        for (size_t i = 0; i < k.operands.size(); ++i) operands.emplace_back(k.operands[i], k.spans[i]);
        monitor_.watcher->changed(logical(), memory_, "kernel " + *k.name, {k.cycle, k.phase, k.iteration}, operands);
      }
    } catch (const std::out_of_range& e) {
      kernel_hazards_.push_back(kernel_hazard(k, HazardClass::WriteOutOfRange, e.what()));
    }
  }
  queued_ = 0;
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
  for (size_t q = 0; q < queued_; ++q) {
    const PendingKernel& k = pending_[q];
    for (size_t i = 0; i < k.operands.size(); ++i) {
      if (address + 4 > k.operands[i] && address < uint64_t(k.operands[i]) + k.spans[i]) return true;
    }
  }
  return false;
}

}  // namespace lockstep::model
