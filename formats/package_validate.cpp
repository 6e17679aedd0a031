// Every rule a package must satisfy before it runs on a machine (docs/formats.md lists them).
// Each failure names the file, tile, step (index path into Repeat bodies) and field.
#include <algorithm>
#include <map>
#include <set>

#include "arch/host_packets.hpp"
#include "arch/instruction.hpp"
#include "arch/instruction_sequences.hpp"
#include "arch/kernel_signatures.hpp"
#include "arch/stack_kernels.hpp"
#include "formats/package_io.hpp"
#include "formats/package_validate_host.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"

namespace lockstep::arch {

namespace {

// Barriers are compared across tiles up to this many per tile; beyond it (huge Repeat
// counts) the Repeat structure itself must match.
constexpr uint64_t kMaxExpandedBarriers = 1u << 20;
// Steps one tile may execute in one invocation: about 6,000 times the whole SigLIP's; a
// Repeat of 2^32 - 1 kernel calls would otherwise run for hours (docs/formats.md).
constexpr uint64_t kMaxExecutedSteps = 1u << 24;

// Steps `list` executes, Repeats expanded; saturates just above kMaxExecutedSteps.
uint64_t executed_steps(const std::vector<Step>& list) {
  uint64_t total = 0;
  for (const Step& step : list) {
    uint64_t n = 1;
    if (const auto* r = std::get_if<RepeatStep>(&step.kind)) {
      n = std::min<uint64_t>(kMaxExecutedSteps + 1, (1 + executed_steps(r->body)) * uint64_t{r->count});
    }
    total = std::min<uint64_t>(kMaxExecutedSteps + 1, total + n);
  }
  return total;
}

enum class BarrierKind : uint8_t { Sync, Exchange, Host };

struct Barrier {
  BarrierKind kind = BarrierKind::Sync;
  uint32_t value = 0;  // sync zone, phase id, or the host phase's index in the tile's steps
  size_t step = 0;     // index into the tile's step path table
  bool operator==(const Barrier& o) const { return kind == o.kind && value == o.value; }
};

std::string describe(const Barrier& b) {
  switch (b.kind) {
    case BarrierKind::Sync:
      return "sync " + std::to_string(b.value);
    case BarrierKind::Exchange:
      return "exchange of phase " + std::to_string(b.value);
    case BarrierKind::Host:
      return "host phase " + std::to_string(b.value);
  }
  return "?";
}

class Validator {
 public:
  Validator(const Package& p, const MachineDescription& m, const std::string& file) : p_(p), m_(m), file_(file) {}

  void run() {
    if (p_.version != kPackageVersion) {
      fail("version", "package version " + std::to_string(p_.version) + " is not supported");
    }
    if (p_.machine_name != m_.name) {
      fail("machine.name", "package is for machine '" + p_.machine_name + "', not '" + m_.name + "'");
    }
    if (p_.machine_digest != m_.digest) {
      fail("machine.digest", "'" + p_.machine_digest + "' does not match machine " + m_.name + " (digest " + m_.digest +
                                 "): built for a different machine");
    }
    phases();
    const uint64_t host_phases = check_host_phases(p_, file_);
    std::set<uint32_t> seen;
    for (const TileProgram& t : p_.tiles) {
      if (t.tile >= m_.tiles) {
        fail("tile " + std::to_string(t.tile) + ": tile",
             "tile id " + std::to_string(t.tile) + " outside the machine's " + std::to_string(m_.tiles) + " tiles");
      }
      if (!seen.insert(t.tile).second) {
        fail("tile " + std::to_string(t.tile) + ": tile", "tile listed twice");
      }
      tile(t);
    }
    barriers();
    bindings();
    expectations();
    check_host_session(p_, host_phases, file_);
  }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(file_ + ": " + where + ": " + what);
  }

  // A value the supervisor code puts in an instruction field (docs/supervisor-code.md): the
  // encoder's own limit, checked before what the value means.
  void encodable(Opcode op, Field field, int64_t value, const std::string& where) const {
    if (const std::string why = misfit(op, field, value); !why.empty()) fail(where, why);
  }

  void sram(const std::string& where, uint64_t address, uint64_t bytes) const {
    if (address < m_.sram_base || address + bytes > m_.sram_end) {
      fail(where, hex_range(address, address + bytes) + " outside SRAM " + hex_range(m_.sram_base, m_.sram_end));
    }
  }

  void phases() {
    std::set<uint32_t> ids;
    for (size_t i = 0; i < p_.phases.size(); ++i) {
      const Phase& ph = p_.phases[i];
      const std::string where = "phase " + std::to_string(ph.id);
      if (!ids.insert(ph.id).second) fail(where + ": id", "phase id listed twice");
      if (ph.execution_count == 0) fail(where + ": execution_count", "must be at least 1");
      phase_ids_.insert(ph.id);
    }
  }

  void tile(const TileProgram& t) {
    tile_name_ = "tile " + std::to_string(t.tile);
    table_ = t.table;
    segments(t);
    if (t.table.size != 0 || t.table.address != 0) {
      const std::string where = tile_name_ + ": table";
      if (t.table.address % 8 != 0) fail(where + ".address", hex(t.table.address) + " is not 8-aligned");
      if (t.table.size % 4 != 0) fail(where + ".size", std::to_string(t.table.size) + " is not a multiple of 4");
      sram(where, t.table.address, t.table.size);
      if (uint64_t(t.table.address) + t.table.size > m_.row_region_end) {
        fail(where, hex_range(t.table.address, uint64_t{t.table.address} + t.table.size) +
                        " reaches past the row region end " + hex(m_.row_region_end) + " (rows must be fetchable)");
      }
    }
    barriers_[t.tile].clear();
    paths_.clear();
    host_index_ = 0;
    steps(t.steps, "", nullptr, t.tile);
    tile_paths_[t.tile] = paths_;
  }

  void segments(const TileProgram& t) {
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    for (size_t i = 0; i < t.segments.size(); ++i) {
      const Segment& s = t.segments[i];
      const std::string where = tile_name_ + ": segment " + std::to_string(i) + " (" + hex(s.address) + ")";
      if (s.address % 4 != 0) fail(where + ": address", hex(s.address) + " is not 4-aligned");
      if (s.size % 4 != 0) fail(where + ": size", std::to_string(s.size) + " is not a multiple of 4");
      if (s.fill == FillKind::Bytes && s.bytes.size() != s.size) {
        fail(where + ": bytes", std::to_string(s.bytes.size()) + " bytes given for size " + std::to_string(s.size));
      }
      if (s.fill != FillKind::Bytes && !s.bytes.empty()) {
        fail(where + ": bytes", "a " + std::string(fill_kind_name(s.fill)) + " segment holds no bytes");
      }
      sram(where, s.address, s.size);
      if (uint64_t(s.address) + s.size > m_.loader_limit) {
        fail(where, hex_range(s.address, uint64_t{s.address} + s.size) + " reaches past the loader limit " +
                        hex(m_.loader_limit));
      }
      spans.emplace_back(s.address, uint64_t(s.address) + s.size);
    }
    std::vector<size_t> order(spans.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return spans[a] < spans[b]; });
    for (size_t k = 1; k < order.size(); ++k) {
      const auto& prev = spans[order[k - 1]];
      const auto& cur = spans[order[k]];
      if (cur.first < prev.second) {
        fail(tile_name_ + ": segment " + std::to_string(order[k]) + " (" + hex(cur.first) + ")",
             hex_range(cur.first, cur.second) + " overlaps segment " + std::to_string(order[k - 1]) + " " +
                 hex_range(prev.first, prev.second));
      }
    }
    segments_ = spans;
  }

  bool initialised(uint64_t address) const {
    return std::any_of(segments_.begin(), segments_.end(),
                       [&](const auto& s) { return address >= s.first && address + 4 <= s.second; });
  }

  bool in_table(uint64_t address, uint64_t bytes) const {
    return address >= table_.address && address + bytes <= uint64_t(table_.address) + table_.size;
  }

  // `repeat` is the innermost enclosing Repeat (nullptr at top level).
  void steps(const std::vector<Step>& list, const std::string& prefix, const RepeatStep* repeat, uint32_t tile) {
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string path = prefix.empty() ? std::to_string(i) : prefix + "." + std::to_string(i);
      const Step& step = list[i];
      const std::string where = tile_name_ + ": step " + path + " (" + step_kind_name(step) + ")";
      paths_.push_back(where);
      const size_t path_index = paths_.size() - 1;
      if (const auto* s = std::get_if<SyncStep>(&step.kind)) {
        encodable(Opcode::Sync, Field::Zone, s->zone, where + ": zone");
        record(tile, Barrier{BarrierKind::Sync, s->zone, path_index});
      } else if (const auto* e = std::get_if<ExchangeStep>(&step.kind)) {
        exchange(*e, where);
        record(tile, Barrier{BarrierKind::Exchange, e->phase, path_index});
      } else if (const auto* k = std::get_if<KernelStep>(&step.kind)) {
        kernel(*k, where);
      } else if (const auto* r = std::get_if<RepeatStep>(&step.kind)) {
        if (r->count == 0) fail(where + ": count", "must be at least 1");
        if (r->body.empty()) fail(where + ": body", "is empty");
        pointers(*r, where);
        // The body's barriers repeat `count` times; expand them after the body is checked.
        const size_t before = barriers_[tile].size();
        steps(r->body, path, r, tile);
        if ((1 + executed_steps(r->body)) * uint64_t{r->count} > kMaxExecutedSteps) {
          fail(where + ": count", "expands to more than " + std::to_string(kMaxExecutedSteps) +
                                      " step executions; lockstep will not simulate that many");
        }
        repeat_barriers(tile, before, r->count, where);
      } else if (const auto* p = std::get_if<PatchStep>(&step.kind)) {
        patch(*p, where, repeat);
      } else if (const auto* h = std::get_if<HostStep>(&step.kind)) {
        host(*h, where, repeat);
        record(tile, Barrier{BarrierKind::Host, host_index_++, path_index});
      }
    }
  }

  // The emitter writes each slot with `setzi $m1, slot` (the stride is added in chunks of
  // add's immediate, so every int32 stride lowers).
  void pointers(const RepeatStep& r, const std::string& where) const {
    for (size_t j = 0; j < r.pointers.size(); ++j) {
      const auto& ptr = r.pointers[j];
      const std::string field = where + ": pointers[" + std::to_string(j) + "].address";
      if (ptr.address % 4 != 0) fail(field, hex(ptr.address) + " is not 4-aligned");
      encodable(Opcode::SetZi, Field::Immediate, ptr.address, field);
      sram(field, ptr.address, 4);
    }
  }

  void record(uint32_t tile, Barrier b) {
    auto& list = barriers_[tile];
    if (list.size() > kMaxExpandedBarriers) return;
    list.push_back(b);
  }

  void repeat_barriers(uint32_t tile, size_t before, uint32_t count, const std::string& where) {
    auto& list = barriers_[tile];
    const size_t body = list.size() - before;
    if (body == 0) return;
    if (uint64_t(body) * count > kMaxExpandedBarriers || list.size() > kMaxExpandedBarriers) {
      fail(where + ": count", "expands to more than " + std::to_string(kMaxExpandedBarriers) +
                                  " barriers; lockstep cannot check that many");
    }
    for (uint32_t c = 1; c < count; ++c) {
      for (size_t k = 0; k < body; ++k) list.push_back(list[before + k]);
    }
  }

  // The CSR values go through `setzi $m8`, the row through `call $m10, row`.
  void exchange(const ExchangeStep& e, const std::string& where) {
    if (!phase_ids_.count(e.phase)) {
      fail(where + ": phase", "phase " + std::to_string(e.phase) + " is not in the package's phases");
    }
    encodable(Opcode::SetZi, Field::Immediate, e.incoming_base, where + ": incoming_base");
    if (e.incoming_mux) mux_value(*e.incoming_mux, where + ": incoming_mux");
    if (e.incoming_muxpair) mux_value(*e.incoming_muxpair, where + ": incoming_muxpair");
    encodable(Opcode::SetZi, Field::Immediate, e.incoming_format, where + ": incoming_format");
    if (e.incoming_format > 2) {
      fail(where + ": incoming_format",
           std::to_string(e.incoming_format) + " is not a format (0 32-bit, 1 early half, 2 waiting half)");
    }
    if (!e.row_address) return;
    const uint32_t row = *e.row_address;
    if (row % 8 != 0) fail(where + ": row_address", hex(row) + " is not 8-aligned");
    encodable(Opcode::Call, Field::Target, row, where + ": row_address");
    if (table_.size == 0 || !in_table(row, 4)) {
      fail(where + ": row_address",
           hex(row) + " outside the table " + hex_range(table_.address, uint64_t{table_.address} + table_.size));
    }
    if (!initialised(row)) fail(where + ": row_address", hex(row) + " is in no segment");
  }

  // A mux CSR holds a physical tile id, the neutral value or a host endpoint 0x600 + x.
  void mux_value(uint32_t value, const std::string& field) {
    encodable(Opcode::SetZi, Field::Immediate, value, field);
    const bool host = value >= 0x600 && value < 0x640;
    if (value < m_.chip_tiles || value == m_.neutral_mux || host) return;
    fail(field, hex(value) + " is no tile (0.." + std::to_string(m_.chip_tiles - 1) + "), not neutral " +
                    hex(m_.neutral_mux) + " and no host endpoint 0x600..0x63f");
  }

  void kernel(const KernelStep& k, const std::string& where) {
    const KernelSignature* sig = kernel_signature(k.name, where);
    // What the lowering can pass (the kernel ABI, the setzi macro), then what the kernel takes.
    const std::string registers = kernel_arguments_misfit(k.operands.size() + k.scalars.size());
    if (!registers.empty()) fail(where + ": operands", registers);
    for (size_t j = 0; j < k.scalars.size(); ++j) {
      const std::string why = word_misfit(k.scalars[j]);
      if (!why.empty()) fail(where + ": scalars[" + std::to_string(j) + "]", why);
    }
    const auto& counts = sig->operand_counts;
    if (std::find(counts.begin(), counts.end(), k.operands.size()) == counts.end()) {
      std::string want;
      for (size_t n : counts) want += (want.empty() ? "" : " or ") + std::to_string(n);
      fail(where + ": operands", k.name + " takes " + want + " operands, got " + std::to_string(k.operands.size()));
    }
    if (k.scalars.size() != sig->scalars) {
      fail(where + ": scalars",
           k.name + " takes " + std::to_string(sig->scalars) + " scalars, got " + std::to_string(k.scalars.size()));
    }
    if (auto error = sig->check_scalars(k.scalars, m_.sram_bytes()); !error.empty()) {
      const auto colon = error.find(':');
      fail(where + ": " + error.substr(0, colon), k.name + ": " + error.substr(colon + 2));
    }
    operands(k, sig->operand_bytes(k.scalars, k.operands.size()), where);
  }

  const KernelSignature* kernel_signature(const std::string& name, const std::string& where) const {
    if (const KernelSignature* sig = find_kernel_signature(name)) return sig;
    if (const std::string why = stack_kernel_refusal(name); !why.empty()) {
      fail(where + ": name", why);
    }
    fail(where + ": name", "unknown kernel '" + name + "' (known: " + kernel_signature_names() +
                               ", and the IPU21 stack's kernels by symbol)");
  }

  // Each operand goes in its register with `setzi $r, address` (an indirect one's slot, read
  // with ld32: where it points is known only at run time).
  void operands(const KernelStep& k, const std::vector<uint64_t>& spans, const std::string& where) const {
    for (size_t i = 0; i < k.operands.size(); ++i) {
      const Operand& o = k.operands[i];
      const std::string field = where + ": operands[" + std::to_string(i) + "]";
      if (o.address % 4 != 0) {
        fail(field, (o.indirect ? "pointer slot " : "") + hex(o.address) + " is not 4-aligned");
      }
      if (o.offset != 0 && !o.indirect)
        fail(field + ".offset", "an offset without a pointer (write the address itself)");
      encodable(Opcode::SetZi, Field::Immediate, o.address, field);
      sram(field, o.address, o.indirect ? 4 : spans[i]);
    }
  }

  void patch(const PatchStep& p, const std::string& where, const RepeatStep* repeat) {
    if (p.entries.empty()) fail(where + ": entries", "is empty");
    const uint32_t count = repeat ? repeat->count : 1;
    for (size_t i = 0; i < p.entries.size(); ++i) {
      const PatchEntry& e = p.entries[i];
      const std::string field = where + ": entries[" + std::to_string(i) + "]";
      if (e.word_address % 4 != 0) fail(field + ".word", hex(e.word_address) + " is not 4-aligned");
      // helper and setup patches address each word with `setzi $m2, word`; bulk lists are data.
      if (p.method != PatchMethod::Bulk) {
        encodable(Opcode::SetZi, Field::Immediate, e.word_address, field + ".word");
      }
      if (table_.size == 0 || !in_table(e.word_address, 4)) {
        fail(field + ".word", hex(e.word_address) + " outside the table " +
                                  hex_range(table_.address, uint64_t{table_.address} + table_.size));
      }
      if (e.values.empty()) fail(field + ".values", "is empty");
      if (e.values.size() != 1 && e.values.size() != count) {
        fail(field + ".values", std::to_string(e.values.size()) + " values; expected 1 or " +
                                    (repeat ? "the enclosing Repeat's count " + std::to_string(count)
                                            : std::string("(outside a Repeat) 1")));
      }
    }
  }

  // Host phases run only at the top level: the host counts them per call, not per iteration.
  void host(const HostStep& h, const std::string& where, const RepeatStep* repeat) const {
    if (repeat) fail(where, "a host phase inside a Repeat (host phases run only at the top level)");
    for (size_t i = 0; i < h.transfers.size(); ++i) {
      const std::string at = where + ": transfers[" + std::to_string(i) + "]";
      host_transfer(h.transfers[i], at);
      if (h.transfers[i].direction != h.transfers.front().direction) {
        fail(at + ".to",
             "goes the other way from transfers[0]: a host program moves data one way (IPU21-DEVICE.md 14)");
      }
    }
    if (const std::string why = host_staging_misfit(h); !why.empty()) fail(where + ": transfers", why);
    // The packets the host program sends must encode (section 14).
    const std::vector<uint32_t> landing = host_landing_addresses(h);
    for (size_t i = 0; i < h.transfers.size(); ++i) {
      const HostTransfer& t = h.transfers[i];
      for (const HostPacket& p :
           host_packets(t.direction == HostDirection::ToTile, landing[i], t.host_address, t.bytes)) {
        if (const std::string why = host_packet_misfit(p); !why.empty()) {
          fail(where + ": transfers[" + std::to_string(i) + "]", why);
        }
      }
    }
  }

  void host_transfer(const HostTransfer& t, const std::string& field) const {
    if (t.bytes == 0 || t.bytes % 4 != 0) {
      fail(field + ".bytes", std::to_string(t.bytes) + " is not a positive multiple of 4");
    }
    if (t.tile_address % 4 != 0) fail(field + ".tile_address", hex(t.tile_address) + " is not 4-aligned");
    if (t.host_address % 4 != 0) fail(field + ".host_address", hex(t.host_address) + " is not 4-aligned");
    sram(field + ".tile_address", t.tile_address, t.bytes);
    if (uint64_t{t.host_address} + t.bytes > p_.host.arena_bytes) {
      fail(field + ".host_address", hex_range(t.host_address, uint64_t{t.host_address} + t.bytes) +
                                        " outside the host arena " + hex_range(0, p_.host.arena_bytes));
    }
  }

  // Every listed tile takes part in every barrier: the same sequence of syncs, exchange phases
  // and host phases, Repeats expanded. Tiles not listed are idle and take no part.
  void barriers() {
    if (p_.tiles.empty()) return;
    const uint32_t first = p_.tiles.front().tile;
    const auto& ref = barriers_[first];
    for (const TileProgram& t : p_.tiles) {
      const auto& seq = barriers_[t.tile];
      const std::string name = "tile " + std::to_string(t.tile);
      const size_t n = std::min(seq.size(), ref.size());
      for (size_t i = 0; i < n; ++i) {
        if (!(seq[i] == ref[i])) {
          fail(tile_paths_[t.tile][seq[i].step], "barrier " + std::to_string(i) + " is " + describe(seq[i]) +
                                                     " but tile " + std::to_string(first) + " has " + describe(ref[i]) +
                                                     " (" + tile_paths_[first][ref[i].step] + ")");
        }
      }
      if (seq.size() != ref.size()) {
        const bool shorter = seq.size() < ref.size();
        const auto& longer = shorter ? ref : seq;
        const uint32_t longer_tile = shorter ? first : t.tile;
        fail(name + ": steps", "takes part in " + std::to_string(seq.size()) + " barriers but tile " +
                                   std::to_string(first) + " in " + std::to_string(ref.size()) + "; first unmatched: " +
                                   describe(longer[n]) + " at " + tile_paths_[longer_tile][longer[n].step]);
      }
    }
  }

  void bindings() {
    for (const Binding& b : p_.bindings) {
      element_shape(b);
      for (size_t i = 0; i < b.slices.size(); ++i) {
        const Slice& s = b.slices[i];
        const std::string where = "binding '" + b.name + "': slices[" + std::to_string(i) + "]";
        if (s.tile >= m_.tiles) fail(where + ".tile", "tile " + std::to_string(s.tile) + " outside the machine");
        sram(where, s.address, s.bytes);
      }
    }
  }

  // A typed binding's shape must account for exactly its bytes.
  void element_shape(const Binding& b) {
    const std::string where = "binding '" + b.name + "'";
    if (b.element == ElementType::Bytes) {
      if (!b.shape.empty()) fail(where + ": shape", "given for untyped bytes (set element)");
      return;
    }
    uint64_t elements = 1;
    for (uint32_t d : b.shape) elements = d == 0 ? 0 : std::min<uint64_t>(elements * d, uint64_t{1} << 40);
    uint64_t bytes = 0;
    for (const Slice& s : b.slices) bytes += s.bytes;
    const uint64_t want = elements * (b.element == ElementType::Float16 ? 2 : 4);
    if (want != bytes) {
      fail(where + ": shape", std::to_string(elements) + " elements of " +
                                  (b.element == ElementType::Float16 ? "float16" : "float32") + " are " +
                                  std::to_string(want) + " bytes, but the slices hold " + std::to_string(bytes));
    }
  }

  void expectations() {
    for (size_t i = 0; i < p_.expectations.size(); ++i) {
      const Expectation& e = p_.expectations[i];
      const std::string where = "expectation " + std::to_string(i) + " (tile " + std::to_string(e.tile) + ")";
      if (e.tile >= m_.tiles) fail(where + ": tile", "tile " + std::to_string(e.tile) + " outside the machine");
      sram(where, e.address, e.size);
      if (e.digest && !e.bytes.empty()) fail(where + ": bytes", "give bytes or a digest, not both");
      if (!e.digest && e.bytes.size() != e.size) {
        fail(where + ": bytes", std::to_string(e.bytes.size()) + " bytes given for size " + std::to_string(e.size));
      }
    }
  }

  const Package& p_;
  const MachineDescription& m_;
  const std::string& file_;
  std::set<uint32_t> phase_ids_;
  std::string tile_name_;
  TableRegion table_;
  std::vector<std::pair<uint64_t, uint64_t>> segments_;
  std::map<uint32_t, std::vector<Barrier>> barriers_;
  std::vector<std::string> paths_;
  std::map<uint32_t, std::vector<std::string>> tile_paths_;
  uint32_t host_index_ = 0;
};

}  // namespace

void validate_package(const Package& package, const MachineDescription& machine, const std::string& file_name) {
  Validator(package, machine, file_name).run();
}

}  // namespace lockstep::arch
