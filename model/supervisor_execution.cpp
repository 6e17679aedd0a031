// The tile's supervisor: fetches the decoded word at the PC, issues it (one slot every
// machine.supervisor_cycles_per_instruction cycles) and executes it. Sites of the code
// (supervisor/supervisor_code.hpp) mark where steps begin, which syncs are barriers and which call
// is an exchange row; calls to intrinsic symbols run the model's kernels. docs/timing.md,
// "Supervisor code", lists what each instruction costs.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "arch/kernel_signatures.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "model/kernel_registry.hpp"
#include "model/tile.hpp"

namespace lockstep::model {

using arch::hex;
using arch::Opcode;
using arch::SiteRole;

namespace {
constexpr uint32_t kZeroRegister = 15;
constexpr uint32_t kIntrinsicInstructions = 3;  // runall, sync 1, br $m10 (docs/timing.md)

// The step kind a site's role acts on; std::get refuses here, at decode, a site whose step is
// not its role's kind.
const void* site_kind(const arch::CodeSite& site) {
  switch (site.role) {
    case SiteRole::Sync:
      return &std::get<arch::SyncStep>(site.step->kind);
    case SiteRole::Exchange:
      return &std::get<arch::ExchangeStep>(site.step->kind);
    case SiteRole::Kernel:
      return &std::get<arch::KernelStep>(site.step->kind);
    case SiteRole::Patch:
      return &std::get<arch::PatchStep>(site.step->kind);
    case SiteRole::Host:
      return &std::get<arch::HostStep>(site.step->kind);
    case SiteRole::RepeatEntry:
    case SiteRole::RepeatIteration:
    case SiteRole::RepeatBody:
      return &std::get<arch::RepeatStep>(site.step->kind);
    case SiteRole::Barrier:  // its host step; null for a phase's or a plain sync's barrier
      return site.step == nullptr ? nullptr : std::get_if<arch::HostStep>(&site.step->kind);
    default:
      return nullptr;
  }
}
}  // namespace

Tile::CodeWord Tile::code_word(const arch::Instruction& in) {
  const auto narrow = [](uint32_t field) {
    if (field > UINT8_MAX) throw std::logic_error("decode gave a register, zone or CSR wider than 8 bits");
    return static_cast<uint8_t>(field);
  };
  CodeWord w;
  w.op = in.op;
  w.reg = narrow(in.reg);
  w.dest = narrow(in.dest);
  w.source = narrow(in.source);
  w.base = narrow(in.base);
  w.index = narrow(in.index);
  w.zone = narrow(in.zone);
  w.csr = narrow(in.csr);
  w.immediate = in.immediate;
  w.offset = in.offset;
  w.target = in.target;
  return w;
}

std::string Tile::describe_word(uint32_t index) const {
  const std::span<const uint32_t> code(code_.words.data(), decoded_.size());
  return arch::describe(arch::decode(code, index).instruction);
}

// Decodes the instruction part of the code area once; data tables are never fetched.
void Tile::decode_code() {
  const size_t words = code_.code_bytes / 4;
  decoded_.assign(words, CodeWord{});
  intrinsic_at_.assign(words, -1);
  const std::span<const uint32_t> code(code_.words.data(), words);
  for (size_t i = 0; i < words;) {
    try {
      const arch::DecodedInstruction d = arch::decode(code, i);
      decoded_[i] = code_word(d.instruction);
      i += d.word_count;
    } catch (const arch::DecodeError& e) {
      throw InputError("tile " + std::to_string(logical()) + ": address " + hex(code_.base + 4 * uint32_t(i)) +
                       ": word " + hex(code[i]) + ": not an instruction the model executes (" + e.what() + ")");
    }
  }
  site_targets_.assign(code_.sites.size(), SiteTarget{});
  for (size_t s = code_.sites.size(); s-- > 0;) {
    const arch::CodeSite& site = code_.sites[s];
    const uint32_t at = (site.address - code_.base) / 4;
    if (at < words) decoded_[at].first_site = static_cast<int32_t>(s);
    site_targets_[s].kind = site_kind(site);
    if (site.role == SiteRole::RepeatBody)
      site_targets_[s].repeat_count = std::get<arch::RepeatStep>(site.step->kind).count;
  }
  intrinsics_.assign(code_.symbols.size(), Intrinsic{});
  for (size_t s = 0; s < code_.symbols.size(); ++s) {
    const arch::CodeSymbol& symbol = code_.symbols[s];
    if (!symbol.intrinsic) continue;
    const uint32_t at = (symbol.address - code_.base) / 4;
    if (at < words) intrinsic_at_[at] = static_cast<int32_t>(s);
    if (symbol.name == "lockstep_bulk_patch") {
      intrinsics_[s].bulk_patch = true;
    } else {
      intrinsics_[s].kernel = find_kernel(symbol.kernel);
      intrinsics_[s].signature = arch::find_kernel_signature(symbol.kernel);
    }
  }
}

void Tile::load_code() {
  memory_.write(code_.base, static_cast<uint32_t>(code_.words.size() * 4),
                reinterpret_cast<const uint8_t*>(code_.words.data()));
  if (monitor_.profile) reserve_records();
}

void Tile::prefetch_state() const {
  const auto lines = [](const void* from, size_t bytes) {
    const auto* p = static_cast<const char*>(from);
    for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b, 0);
  };
  // The members this class declares, from its first (the barrier port) on; the SystemC
  // module's own, before them, are not what a run reads.
  const auto* ours = reinterpret_cast<const char*>(&barrier);
  lines(ours, static_cast<size_t>(reinterpret_cast<const char*>(this) + sizeof(Tile) - ours));
  // The words about the PC: a Repeat body's sync, its row call, its count and its branch back.
  const size_t at = (pc_ - code_.base) / 4, first = std::min(decoded_.size(), at > 8 ? at - 8 : 0);
  lines(decoded_.data() + first, std::min<size_t>(24, decoded_.size() - first) * sizeof(CodeWord));
  lines(code_.sites.data(), code_.sites.size() * sizeof(arch::CodeSite));
  lines(site_targets_.data(), site_targets_.size() * sizeof(SiteTarget));
  lines(loops_.data(), loops_.size() * sizeof(Loop));
}

void Tile::flush_issued() {
  if (issued_ == 0) return;
  const uint64_t cycles = issued_;
  issued_ = 0;
  if (!open_.open) {
    since_release_.add(CycleKind::Control, cycles);
  } else if (open_.role == StepRole::Kernel) {
    since_release_.add_kernel(*open_.kernel, cycles);
  } else {
    const CycleKind kind = open_.role == StepRole::Patch                                      ? CycleKind::Patching
                           : open_.role == StepRole::Host                                     ? CycleKind::Host
                           : open_.role == StepRole::Sync || open_.role == StepRole::Exchange ? CycleKind::Sync
                                                                                              : CycleKind::Control;
    since_release_.add(kind, cycles);
  }
  advance(cycles);
}

void Tile::code_hazard(HazardClass kind, const std::string& detail) {
  step_hazard(kind, "supervisor " + hex(pc_), detail);
}

void Tile::interpret() {
  const uint32_t words = static_cast<uint32_t>(decoded_.size());
  // SystemC's time is read only once the run is stopping: this test runs at every instruction.
  while (!(monitor_.stopping() && monitor_.stops(now() + issued_))) {
    const uint32_t offset = pc_ - code_.base;
    if (pc_ < code_.base || offset % 4 != 0 || offset / 4 >= words) {
      code_hazard(HazardClass::InstructionAccess, "PC " + hex(pc_) + " outside the tile's code " + hex(code_.base) +
                                                      ".." + hex(code_.base + code_.code_bytes));
      break;
    }
    const uint32_t index = offset / 4;
    const CodeWord& word = decoded_[index];
    if (word.first_site >= 0 && enter_sites(index)) break;
    if (!execute(word, index)) break;
    if (waiting_ != Waiting::Nothing) return;  // the process goes on in resume()
  }
  end_program();
}

// Acts on every site at this word, in order. Returns true at the halt.
bool Tile::enter_sites(uint32_t index) {
  const uint32_t address = code_.base + 4 * index;
  const auto first = static_cast<size_t>(decoded_[index].first_site);
  for (size_t s = first; s < code_.sites.size() && code_.sites[s].address == address; ++s) {
    const arch::CodeSite& site = code_.sites[s];
    const void* kind = site_targets_[s].kind;
    if (monitor_.stop_step && arch::opens_record(site.role) && stops_here(site)) return true;
    if (arch::opens_record(site.role)) {
      flush_issued();
      close_record();
    }
    switch (site.role) {
      case SiteRole::Sync:
        open_record(StepRole::Sync, kind);
        break;
      case SiteRole::Exchange: {
        open_record(StepRole::Exchange, kind);
        incoming_format_ = 0;  // the step's own writes are what its phase sees
        incoming_muxpair_.reset();
        break;
      }
      case SiteRole::Kernel:
        open_record(StepRole::Kernel, kind);
        break;
      case SiteRole::Patch:
        open_record(StepRole::Patch, kind);
        break;
      case SiteRole::Host:
        open_record(StepRole::Host, kind);
        break;
      case SiteRole::RepeatEntry:
        entering_ = static_cast<const arch::RepeatStep*>(kind);
        open_record(StepRole::RepeatEntry, kind);
        break;
      case SiteRole::RepeatIteration:
        open_record(StepRole::RepeatIteration, kind);
        break;
      case SiteRole::RepeatBody: {
        const auto* r = static_cast<const arch::RepeatStep*>(kind);
        if (entering_ == r) {
          loops_.push_back({r, 0, epoch_});
          entering_ = nullptr;
        } else if (!loops_.empty()) {
          ++loops_.back().iteration;
        }
        if (!loops_.empty())
          epoch_ = loops_.back().outer_epoch * site_targets_[s].repeat_count + loops_.back().iteration;
        monitor_.check_limits(now() + issued_);
        break;
      }
      case SiteRole::RepeatExit:
        if (!loops_.empty()) {
          epoch_ = loops_.back().outer_epoch;
          loops_.pop_back();
        }
        break;
      case SiteRole::Barrier:
        barrier_ = &site;
        break;
      case SiteRole::RowCall:
        row_call_ = true;
        break;
      case SiteRole::InvocationEnd:
        flush_issued();
        close_record();
        invocation_ends_.push_back(now());
        if (!snapshot_ranges_.empty()) take_snapshot();
        ++invocation_;
        break;
      case SiteRole::Halt:
        break;
    }
  }
  return false;
}

// The invocation's kernels run first (they would at the next barrier, with the same memory).
void Tile::take_snapshot() {
  flush_kernels();
  std::vector<uint8_t>& bytes = snapshots_.emplace_back();
  for (const auto& [address, size] : snapshot_ranges_) {
    const size_t at = bytes.size();
    bytes.resize(at + size);
    memory_.read(address, size, bytes.data() + at);
  }
}

bool Tile::memory_word(uint32_t address, const char* what) {
  if (address % 4 != 0 || !memory_.contains(address, 4)) {
    code_hazard(HazardClass::WriteOutOfRange, std::string(what) + " " + hex(address) + " outside SRAM or unaligned");
    return false;
  }
  if (queued_ > 0 && pending_kernel_touches(address)) flush_kernels();
  return true;
}

void Tile::put_csr(uint32_t csr, uint32_t value) {
  switch (csr) {
    case 0xa0:
      mux = value;
      break;
    case 0xa1:
      incoming_muxpair_ = value;
      break;
    case 0xa3:
      incoming_format_ = value;
      break;
    case 0xa4:
      incoming_base_ = value;
      break;
    case 0xa6:
      incoming_dcount_ = value;
      break;
    case 0xa7:
      if (value != 0)
        code_hazard(HazardClass::Encoding,
                    "OUTGOING_BASE " + hex(value) + ": the model sends from absolute addresses only");
      break;
    default:
      code_hazard(HazardClass::Encoding, "put to CSR " + hex(csr) + ", which the model does not implement");
  }
}

// A host program's body, from its barrier's release to its closing `sync 7`, is the host
// link's: its packets are in the phase's cycles (docs/timing.md, "Host phases"), so its words
// take no slot and its sends move nothing here.
bool Tile::execute_host_body(const CodeWord& in, uint32_t index) {
  switch (in.op) {
    case Opcode::Send:
    case Opcode::SendOff:
    case Opcode::Delay:
      break;
    case Opcode::SetZi:
      if (in.reg != kZeroRegister) reg_[in.reg] = static_cast<uint32_t>(in.immediate);
      break;
    case Opcode::Put:
      put_csr(in.csr, reg_[in.reg]);
      break;
    case Opcode::Sync:
      if (in.zone == 7) {
        host_body_ = false;
      } else if (in.zone != 0) {
        code_hazard(HazardClass::Encoding, "sync " + std::to_string(in.zone) + " inside a host program");
        return false;
      }
      break;
    default:
      code_hazard(HazardClass::Encoding,
                  describe_word(index) + ": not an instruction of a host program (IPU21-DEVICE.md 14)");
      return false;
  }
  pc_ += 4;  // every word of a section 14 body is one instruction
  return true;
}

bool Tile::execute(const CodeWord& in, uint32_t index) {
  if (host_body_) return execute_host_body(in, index);
  const uint32_t cpi = machine_.supervisor_cycles_per_instruction;
  issue(cpi);
  const uint32_t next = pc_ + 4;
  auto set = [&](uint32_t r, uint32_t v) {
    if (r != kZeroRegister) reg_[r] = v;
  };
  switch (in.op) {
    case Opcode::SetZi:
      set(in.reg, static_cast<uint32_t>(in.immediate));
      break;
    case Opcode::Add:
      set(in.dest, reg_[in.source] + static_cast<uint32_t>(in.immediate));
      break;
    case Opcode::And:
      set(in.dest, reg_[in.source] & static_cast<uint32_t>(in.immediate));
      break;
    case Opcode::Shl:
      set(in.dest, in.immediate >= 32 ? 0 : reg_[in.source] << in.immediate);
      break;
    case Opcode::Ld32: {
      const uint32_t address = reg_[in.base] + reg_[in.index] + 4 * in.offset;
      if (!memory_word(address, "ld32")) return false;
      set(in.dest, memory_.read_word(address));
      break;
    }
    case Opcode::St32: {
      const uint32_t address = reg_[in.base] + reg_[in.index] + 4 * in.offset;
      if (!memory_word(address, "st32")) return false;
      memory_.write_word(address, reg_[in.source]);
      if (monitor_.watcher != nullptr) watched_store(address, "supervisor st32 at " + hex(pc_));
      break;
    }
    case Opcode::Put:
      put_csr(in.csr, reg_[in.reg]);
      break;
    case Opcode::Get:
      set(in.dest, in.csr == 0 ? pc_ : 0);
      break;
    case Opcode::Br:
    case Opcode::Return: {
      const uint32_t target = in.op == Opcode::Return ? reg_[10] : reg_[in.reg];
      if (target == 0) {
        issued_ -= cpi;  // the halting branch ends the program; it takes no slot
        return false;
      }
      if (target <= pc_) monitor_.check_limits(now() + issued_);
      pc_ = target;
      return true;
    }
    case Opcode::Brz:
      if (reg_[in.reg] == 0) {
        if (in.target <= pc_) monitor_.check_limits(now() + issued_);
        pc_ = in.target;
        return true;
      }
      break;
    case Opcode::Call: {
      set(in.reg, next);
      if (row_call_) {
        // The row runs from the release for its event count; call and return are its
        // first and last events (IPU21-DEVICE.md 7.2: br advances 0).
        row_call_ = false;
        issued_ -= cpi;
        wait_cycles(static_cast<uint64_t>(row_events_), CycleKind::Exchange);
        break;
      }
      const uint32_t at = (in.target - code_.base) / 4;
      if (in.target >= code_.base && at < intrinsic_at_.size() && intrinsic_at_[at] >= 0) {
        call_intrinsic(static_cast<size_t>(intrinsic_at_[at]));
        break;
      }
      pc_ = in.target;
      return true;
    }
    case Opcode::Sync:
    case Opcode::Sans:
      if (barrier_ != nullptr && barrier_->address == pc_) {
        barrier_wait_.resume_pc = next;
        return barrier_sync(in, index);  // after_barrier() sets the PC
      } else if (!(in.op == Opcode::Sync && in.zone == 1) && in.op != Opcode::Sans) {
        code_hazard(HazardClass::Encoding, "sync " + std::to_string(in.zone) + " is no step's barrier");
        return false;
      }
      break;
    default:
      code_hazard(HazardClass::Encoding, describe_word(index) + ": not a supervisor instruction the model executes");
      return false;
  }
  pc_ = next;
  return true;
}

// A step's barrier: the issued cycles first, then the arrival; an exchange's row events
// follow at its row call (or at the release for a tile without a row).
bool Tile::barrier_sync(const CodeWord& in, uint32_t index) {
  const arch::CodeSite& site = *barrier_;
  barrier_ = nullptr;
  flush_issued();
  const void* kind = site_targets_[&site - code_.sites.data()].kind;  // resolved at decode: the step is cold
  barrier_wait_.host = barrier_wait_.exchange = barrier_wait_.with_row = false;
  if (const auto* host = static_cast<const arch::HostStep*>(kind)) {
    pending_host_ = host;
    barrier_wait_.host = true;
    barrier_wait_.host_body = in.op == Opcode::Sync && in.zone != 1;  // `sans 1; sync 1` abstains: no body
    return arrive_at(BarrierKey{false, host_phases_++, true});
  }
  if (!site.exchange) return arrive_at(BarrierKey{false, 0});
  exchange_ = arch::ExchangeStep{};
  exchange_.phase = site.phase;
  const bool with_row =
      in.op == Opcode::Sync && in.zone == 3 && index + 1 < decoded_.size() && decoded_[index + 1].op == Opcode::Call;
  if (with_row) exchange_.row_address = decoded_[index + 1].target;
  exchange_.incoming_base = incoming_base_;
  exchange_.incoming_format = incoming_format_;
  exchange_.incoming_muxpair = incoming_muxpair_;
  pending_exchange_ = &exchange_;
  current_phase_ = site.phase;
  barrier_wait_.exchange = true;
  barrier_wait_.with_row = with_row;
  return arrive_at(BarrierKey{true, site.phase});
}

// The last arrival releases the barrier once SystemC's time reaches the release (at once when
// it has); the others wait for that release.
bool Tile::arrive_at(const BarrierKey& key) {
  barrier_wait_.key = key;
  barrier_wait_.arrival = barrier->arrive(key, *this);
  if (!barrier_wait_.arrival.last) {
    waiting_ = Waiting::Release;
    return true;
  }
  const uint64_t time = sc_core::sc_time_stamp().value();
  if (barrier_wait_.arrival.release_cycle > time) {
    waiting_ = Waiting::Releasing;
    wake_after_ = barrier_wait_.arrival.release_cycle - time;
    return true;
  }
  barrier->release(key);
  return after_barrier();
}

bool Tile::after_barrier() {
  waiting_ = Waiting::Nothing;
  if (barrier_wait_.host) {
    pending_host_ = nullptr;
    wait_cycles(static_cast<uint64_t>(row_events_), CycleKind::Host);
    host_body_ = barrier_wait_.host_body;
  } else if (barrier_wait_.exchange) {
    pending_exchange_ = nullptr;
    if (!barrier_wait_.with_row) wait_cycles(static_cast<uint64_t>(row_events_), CycleKind::Exchange);
  }
  if (monitor_.stops(now())) return false;
  pc_ = barrier_wait_.resume_pc;
  return true;
}

// `--stop-at tile:T,step:S`: entering top-level step S of tile T, its kernels run first.
bool Tile::stops_here(const arch::CodeSite& site) {
  const auto [tile, step] = *monitor_.stop_step;
  if (tile != logical() || step >= program_.steps.size() || site.step != &program_.steps[step] ||
      site.role == arch::SiteRole::RepeatIteration) {
    return false;
  }
  flush_issued();
  flush_kernels();
  monitor_.request_stop("tile " + std::to_string(tile) + " step " + std::to_string(step) + " at cycle " +
                        std::to_string(now()));
  return true;
}

void Tile::watched_store(uint32_t address, const std::string& writer) {
  const uint64_t at = now() + issued_;
  monitor_.watcher->written(logical(), address, 4, memory_, writer, {at, current_phase_, iteration()});
}

void Tile::call_intrinsic(size_t symbol) {
  issue(kIntrinsicInstructions * machine_.supervisor_cycles_per_instruction);
  if (intrinsics_[symbol].bulk_patch) {
    bulk_patch();
  } else {
    launch_kernel(symbol);
  }
}

// The kernel sees what the registers hold: operand i in $m(2+i), then the scalars.
void Tile::launch_kernel(size_t index) {
  const arch::CodeSymbol& symbol = code_.symbols[index];
  const KernelDefinition* kernel = intrinsics_[index].kernel;
  const arch::KernelSignature* sig = intrinsics_[index].signature;
  if (kernel == nullptr || sig == nullptr) {
    code_hazard(HazardClass::Encoding, "call of " + symbol.name + ": no such kernel in the model");
    return;
  }
  // Kernels wait for the next barrier to run on every core; a long run of them without one
  // (a Repeat of kernel calls) runs here in program order instead, which gives the same
  // memory, so the queue and the operand search over it stay short.
  constexpr size_t kMaxQueuedKernels = 256;
  if (queued_ >= kMaxQueuedKernels) flush_kernels();
  if (queued_ == pending_.size()) pending_.emplace_back();
  PendingKernel& k = pending_[queued_];
  k.kernel = kernel;
  k.name = &symbol.kernel;
  k.operands.clear();
  k.scalars.clear();
  k.cycle = now();
  k.phase = current_phase_;
  k.iteration = iteration();
  for (uint32_t i = 0; i < symbol.operands; ++i) k.operands.push_back(reg_[2 + i]);
  for (uint32_t j = 0; j < sig->scalars && 2 + symbol.operands + j < 10; ++j) {
    const uint32_t r = reg_[2 + symbol.operands + j];
    const bool is_signed = (sig->signed_scalars >> j) & 1u;
    k.scalars.push_back(is_signed ? int64_t(int32_t(r)) : int64_t(r));
  }
  if (kernel->reads_cycle_counter) {
    // $COUNT_L as the helper's worker 0 reads it: the call, the supervisor's store of the
    // destination and runall, and the worker's first instruction after it [decision].
    constexpr uint64_t kReadAfterInstructions = 4;
    const uint64_t at = now() + issued_ + kReadAfterInstructions * machine_.supervisor_cycles_per_instruction;
    k.scalars.push_back(static_cast<uint32_t>(at));
  }
  k.spans = sig->operand_bytes(k.scalars, k.operands.size());
  const uint64_t cycles = kernel->cycles(k.scalars, machine_);
  issue(cycles);
  if (open_.open) open_.kernel_cycles += cycles;
  ++queued_;
}

// The six-worker patcher: $m2 records of (word address, $m5 values), $m3 records, $m4 the
// Repeat's remaining count, $m6 its count. Costs as docs/timing.md's "Bulk" row.
void Tile::bulk_patch() {
  flush_kernels();  // the patch's stores follow the kernels in program order
  const uint32_t list = reg_[2], records = reg_[3], per = std::max<uint32_t>(1, reg_[5]);
  const uint32_t iteration = reg_[6] - reg_[4];
  for (uint32_t e = 0; e < records; ++e) {
    const uint32_t record = list + 4 * e * (1 + per);
    const uint32_t value_at = record + 4 * (1 + (per > 1 ? iteration % per : 0));
    if (!memory_word(record, "bulk patch record") || !memory_word(value_at, "bulk patch value")) return;
    const uint32_t word = memory_.read_word(record);
    if (!memory_word(word, "patched word")) return;
    memory_.write_word(word, memory_.read_word(value_at));
    if (monitor_.watcher != nullptr) watched_store(word, "bulk patch");
  }
  const uint64_t workers = std::max<uint32_t>(1, machine_.workers);
  issue(machine_.supervisor_cycles_per_instruction * (3 + 4 * ((records + workers - 1) / workers)));
}

}  // namespace lockstep::model
