// The SystemC backend: validates a package, loads it into a fresh model, runs it and
// checks its expectations.
#include <spdlog/spdlog.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <memory>
#include <optional>
#include <sstream>
#include <systemc>

#include "arch/topology.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "io/parallel.hpp"
#include "model/chip.hpp"
#include "model/kernel_registry.hpp"
#include "sim/backend.hpp"
#include "sim/profile_builder.hpp"
#include "sim/stop_at.hpp"
#include "sim/systemc_context.hpp"

namespace lockstep::sim {
namespace {

std::string hex_bytes(const uint8_t* data, size_t n) {
  std::ostringstream s;
  for (size_t i = 0; i < n; ++i) s << std::hex << std::setw(2) << std::setfill('0') << int(data[i]);
  return s.str();
}

std::string hex_digest(uint64_t v) {
  std::ostringstream s;
  s << std::hex << std::setw(16) << std::setfill('0') << v;
  return s.str();
}

class ChipMemoryView : public MemoryView {
 public:
  explicit ChipMemoryView(model::Chip& chip) : chip_(chip) {}
  void read(uint32_t tile, uint32_t address, uint32_t bytes, uint8_t* out) const override {
    const model::Tile* t = chip_.tile(tile);
    if (t == nullptr || !t->memory().contains(address, bytes)) {
      std::fill(out, out + bytes, 0);
      return;
    }
    t->memory().read(address, bytes, out);
  }
  bool equal(uint32_t tile, uint32_t address, uint32_t bytes, const uint8_t* expected) const override {
    const model::Tile* t = chip_.tile(tile);
    if (t == nullptr || !t->memory().contains(address, bytes)) {
      return std::all_of(expected, expected + bytes, [](uint8_t b) { return b == 0; });
    }
    return t->memory().equal(address, bytes, expected);
  }
  bool holds_tokens(uint32_t tile, uint32_t address, uint32_t words, uint32_t first) const override {
    const model::Tile* t = chip_.tile(tile);
    if (t == nullptr || !t->memory().contains(address, uint64_t{words} * 4)) {
      return MemoryView::holds_tokens(tile, address, words, first);
    }
    return t->memory().holds_tokens(address, words, first);
  }
  void write(uint32_t tile, uint32_t address, uint32_t bytes, const uint8_t* data) override {
    model::Tile* t = chip_.tile(tile);
    if (t == nullptr || !t->memory().contains(address, bytes)) return;
    t->memory().write(address, bytes, data);
  }
  void write_tokens(uint32_t tile, uint32_t address, uint32_t bytes, uint64_t seed, uint32_t iteration) override {
    model::Tile* t = chip_.tile(tile);
    if (t == nullptr || !t->memory().contains(address, bytes)) return;
    t->memory().write_tokens(seed, tile, address, bytes, iteration);
  }

 private:
  model::Chip& chip_;
};

// Kernel names and arguments are checked before anything runs.
void check_kernels(const std::vector<arch::Step>& steps, const std::string& where) {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (const auto* k = std::get_if<arch::KernelStep>(&steps[i].kind)) {
      const auto* def = model::find_kernel(k->name);
      const std::string at = where + " step " + std::to_string(i) + " (kernel)";
      if (def == nullptr) throw InputError(at + ": name: unknown kernel '" + k->name + "'");
      if (auto error = def->check(*k); !error.empty()) throw InputError(at + ": " + error);
    }
    if (const auto* r = std::get_if<arch::RepeatStep>(&steps[i].kind)) {
      check_kernels(r->body, where + " step " + std::to_string(i) + " (repeat) body");
    }
  }
}

uint64_t binding_bytes(const arch::Binding& b) {
  uint64_t n = 0;
  for (const auto& s : b.slices) n += s.bytes;
  return n;
}

class SystemCBackend : public Backend {
 public:
  explicit SystemCBackend(arch::MachineDescription machine) : machine_(std::move(machine)), topology_(machine_) {}

  RunResult run(const arch::Package& package, const RunOptions& options) override {
    const std::string& file = options.source_name;
    arch::validate_package(package, machine_, file);
    for (const auto& t : package.tiles) check_kernels(t.steps, file + ": tile " + std::to_string(t.tile) + ":");
    check_inputs(package, options);

    const auto began = std::chrono::steady_clock::now();
    FreshSimulationContext context;
    model::RunMonitor monitor;
    monitor.keep_going = options.keep_going;
    monitor.trace_tile = options.trace_tile;
    monitor.record_tiles = options.record_tiles;
    monitor.keep_tile_records = options.keep_tiles;
    monitor.profile = options.profile;
    monitor.lay_copied_tokens = options.lay_copied_tokens;
    monitor.lay_small_writes = options.lay_small_writes;
    monitor.set_limits(options.max_cycles, options.timeout_seconds);
    check_watches(options.watches, machine_);
    check_watches(options.dumps, machine_, "--dump");
    std::optional<model::Watcher> watcher;
    if (!options.watches.empty()) monitor.watcher = &watcher.emplace(options.watches);
    auto chip = std::make_unique<model::Chip>("chip", machine_, topology_, package, monitor,
                                              std::max<uint32_t>(1, options.invocations),
                                              [&](model::SramArena& arena) { load_segments(package, arena); });
    ChipMemoryView view(*chip);
    RunResult result;
    if (options.after_exchange) {
      monitor.after_phase = [&](const model::PhaseRecord& r) { options.after_exchange(to_execution(r), view); };
    }
    if (options.after_landing) {
      monitor.after_landing = [&](uint32_t phase, uint32_t iteration, uint32_t tile) {
        options.after_landing(phase, iteration, tile, view);
      };
    }
    arm_stop(options, monitor);
    const auto built = std::chrono::steady_clock::now();
    load(package, options, *chip);
    if (watcher) report_loaded(package, options, *chip, *watcher);
    if (chip->host_phases() > 0 || !package.host.calls.empty()) attach_host(package, options, *chip, view);
    const bool snapshots = options.invocation_outputs && options.invocations > 1;
    if (snapshots) snapshot_outputs(package, *chip);
    const auto loaded = std::chrono::steady_clock::now();
    sc_core::sc_start();
    chip->run_pending_kernels();  // kernels launched after the last barrier
    const auto simulated = std::chrono::steady_clock::now();

    if (!monitor.stopping()) {
      for (const auto& [key, tiles] : chip->barrier().stuck()) {
        std::string list;
        for (const auto* t : tiles) list += (list.empty() ? "" : ",") + std::to_string(t->logical());
        const std::string what = key.host       ? "host phase " + std::to_string(key.phase)
                                 : key.exchange ? "phase " + std::to_string(key.phase)
                                                : std::string("sync");
        throw InputError(file + ": " + what + ": barrier never releases: tiles " + list +
                         " arrive but others never do (mismatched steps)");
      }
    }
    uint64_t total = sc_core::sc_time_stamp().value();
    const model::Tile* last = nullptr;  // the first tile (by logical order) to finish last
    for (const auto& t : chip->tiles()) {
      if (t->finished() && (last == nullptr || t->finish_cycle() > last->finish_cycle())) last = t.get();
      total = std::max(total, t->finish_cycle());
    }
    result.total_cycles = total;
    if (last != nullptr) result.cycle_split = last->finish_path();
    for (const auto& t : chip->tiles()) {
      const auto& ends = t->invocation_ends();
      if (result.invocation_ends.size() < ends.size()) result.invocation_ends.resize(ends.size(), 0);
      for (size_t i = 0; i < ends.size(); ++i) result.invocation_ends[i] = std::max(result.invocation_ends[i], ends[i]);
    }
    for (const auto& r : monitor.executions()) result.executions.push_back(to_execution(r));
    for (const auto& h : monitor.hazards()) result.hazards.push_back(to_hazard(h));
    std::stable_sort(result.hazards.begin(), result.hazards.end(), [](const Hazard& a, const Hazard& b) {
      return std::make_tuple(a.cycle, a.tile, static_cast<int>(a.kind), a.phase, a.row_offset, a.detail) <
             std::make_tuple(b.cycle, b.tile, static_cast<int>(b.kind), b.phase, b.row_offset, b.detail);
    });
    // Without keep_going the run ends at the first hazard: report that one alone.
    if (!options.keep_going && result.hazards.size() > 1) result.hazards.resize(1);
    result.stopped = monitor.limit_reached();
    if (!monitor.stopping()) check_expectations(package, view, result);
    collect_outputs(package, view, result);
    if (watcher) result.watch_writes = watcher->records();
    collect_stop(options, monitor, *chip, view, result);
    if (model::HostLink* host = chip->host()) {
      host->finish();
      for (const auto& run : host->calls()) result.host_outputs.emplace_back(run.call->name, run.output);
      result.host_cycles = host->cycles();
    }
    if (snapshots && !monitor.stopping()) collect_invocation_outputs(package, *chip, result);
    if (options.profile) {
      const auto start = std::chrono::steady_clock::now();
      result.profile = build_profile(*chip, package, machine_, total);
      spdlog::debug("profile: {} steps built in {:.3f} s", result.profile->steps.size(),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    const auto collected = std::chrono::steady_clock::now();
    chip.reset();
    spdlog::debug(
        "run: {} phase executions copied {} bytes between SRAMs in {} copies; {} bytes of repeats were "
        "in place already (nothing wrote their pages since), not copied again",
        monitor.executions().size(), monitor.copied().bytes, monitor.copied().copies, monitor.copied().landed_bytes);
    const auto seconds = [](auto from, auto to) { return std::chrono::duration<double>(to - from).count(); };
    spdlog::debug(
        "run: chip built in {:.3f} s, loaded in {:.3f} s, simulated in {:.3f} s, results in {:.3f} s, "
        "chip taken down in {:.3f} s",
        seconds(began, built), seconds(built, loaded), seconds(loaded, simulated), seconds(simulated, collected),
        seconds(collected, std::chrono::steady_clock::now()));
    return result;
  }

 private:
  arch::MachineDescription machine_;
  arch::Topology topology_;

  static PhaseExecution to_execution(const model::PhaseRecord& r) {
    return {r.phase, r.iteration, r.release_cycle, static_cast<uint32_t>(r.horizon), r.tiles, r.last_arrival, r.before};
  }

  static Hazard to_hazard(const model::RecordedHazard& r) {
    Hazard h;
    h.kind = static_cast<HazardKind>(r.hazard.kind);
    h.tile = r.hazard.tile;
    h.phase = r.phase;
    h.iteration = r.iteration;
    h.cycle = r.cycle;
    h.row_offset = r.hazard.row_offset;
    h.instruction = r.hazard.instruction;
    h.detail = r.hazard.detail;
    h.step = r.hazard.step;
    return h;
  }

  void check_inputs(const arch::Package& package, const RunOptions& options) const {
    for (const auto& input : options.inputs) {
      const std::string& name = input.first;
      const std::vector<uint8_t>& bytes = input.second;
      const auto it = std::find_if(package.bindings.begin(), package.bindings.end(),
                                   [&](const arch::Binding& b) { return b.name == name; });
      if (it == package.bindings.end() || it->kind == arch::BindingKind::Output) {
        throw InputError(options.source_name + ": bindings: no input binding named '" + name + "'");
      }
      if (binding_bytes(*it) != bytes.size()) {
        throw InputError(options.source_name + ": bindings." + name + ": expects " +
                         std::to_string(binding_bytes(*it)) + " bytes, got " + std::to_string(bytes.size()));
      }
    }
  }

  // The package's segments, tiles in parallel (each writes only its own SRAM); the chip runs
  // this while it builds its tiles.
  void load_segments(const arch::Package& package, model::SramArena& arena) const {
    tbb::parallel_for(size_t{0}, package.tiles.size(), [&](size_t t) {
      const auto& program = package.tiles[t];
      model::Sram memory(machine_, arena, t);  // the slot of package.tiles[t]
      for (const auto& seg : program.segments) {
        // Most of an exchange-only package's 640 MB of tokens are only ever read: their whole
        // pages are made when first touched, and the copies make the tokens they move
        // (model/token_pages.hpp).
        switch (seg.fill) {
          case arch::FillKind::Tokens:
            memory.write_tokens(seg.token_seed, program.tile, seg.address, seg.size);
            break;
          case arch::FillKind::Bytes:
            memory.load(seg.address, seg.size, seg.bytes.data());
            break;
          case arch::FillKind::Zero:
            memory.populate(seg.address, seg.size);
            memory.zero(seg.address, seg.size);
            break;
        }
      }
    });
  }

  // After the segments (load_segments): each tile's code area, then the input files given.
  void load(const arch::Package& package, const RunOptions& options, model::Chip& chip) const {
    tbb::parallel_for(size_t{0}, package.tiles.size(),
                      [&](size_t t) { chip.tile(package.tiles[t].tile)->load_code(); });
    for (const auto& input : options.inputs) {
      const std::string& name = input.first;  // (clang captures no structured binding)
      const std::vector<uint8_t>& bytes = input.second;
      if (!options.host_calls && host_fed(package, name)) continue;  // arrives by host phases
      const auto& binding = *std::find_if(package.bindings.begin(), package.bindings.end(),
                                          [&](const arch::Binding& b) { return b.name == name; });
      size_t offset = 0;
      for (const auto& slice : binding.slices) {
        model::Tile* t = chip.tile(slice.tile);
        if (t == nullptr || !t->memory().contains(slice.address, slice.bytes)) {
          throw InputError(options.source_name + ": bindings." + name + ": slice on tile " +
                           std::to_string(slice.tile) + " is not in the package's memory");
        }
        t->memory().write(slice.address, slice.bytes, bytes.data() + offset);
        offset += slice.bytes;
      }
    }
  }

  // The loader's writes: the package's segments and the input files given.
  static void report_loaded(const arch::Package& package, const RunOptions& options, model::Chip& chip,
                            model::Watcher& watcher) {
    for (const auto& program : package.tiles) {
      if (!watcher.watches(program.tile)) continue;
      for (const auto& seg : program.segments) {
        watcher.written(program.tile, seg.address, seg.size, chip.tile(program.tile)->memory(),
                        "loader: segment at " + arch::hex(seg.address) + bindings_in(package, program.tile, seg), {});
      }
    }
    for (const auto& [name, bytes] : options.inputs) {
      if (!options.host_calls && host_fed(package, name)) continue;
      for (const auto& b : package.bindings) {
        if (b.name != name) continue;
        for (const auto& s : b.slices) {
          if (chip.tile(s.tile) == nullptr) continue;
          watcher.written(s.tile, s.address, s.bytes, chip.tile(s.tile)->memory(), "loader: input " + name, {});
        }
      }
    }
  }

  // " (holding input x, weight w)": the input and weight bindings whose bytes a segment carries.
  static std::string bindings_in(const arch::Package& package, uint32_t tile, const arch::Segment& seg) {
    std::string names;
    for (const auto& b : package.bindings) {
      if (b.kind == arch::BindingKind::Output) continue;
      const bool inside = std::any_of(b.slices.begin(), b.slices.end(), [&](const arch::Slice& s) {
        return s.tile == tile && s.address < uint64_t{seg.address} + seg.size &&
               seg.address < uint64_t{s.address} + s.bytes;
      });
      if (inside)
        names += (names.empty() ? "" : ", ") + std::string(b.kind == arch::BindingKind::Weight ? "weight " : "input ") +
                 b.name;
    }
    return names.empty() ? "" : " (holding " + names + ")";
  }

  static bool host_fed(const arch::Package& package, const std::string& binding) {
    for (const auto& call : package.host.calls) {
      if (std::find(call.input_bindings.begin(), call.input_bindings.end(), binding) != call.input_bindings.end())
        return true;
    }
    return false;
  }

  // The calls the host invokes (RunOptions::host_calls), each with its input file.
  static void attach_host(const arch::Package& package, const RunOptions& options, model::Chip& chip,
                          const MemoryView& view) {
    const auto& calls = package.host.calls;
    auto find = [&](const std::string& name) -> const arch::HostCallSpec& {
      const auto it =
          std::find_if(calls.begin(), calls.end(), [&](const arch::HostCallSpec& c) { return c.name == name; });
      if (it == calls.end()) throw InputError(options.source_name + ": unknown host call " + name);
      return *it;
    };
    std::vector<model::HostCallRun> runs;
    if (options.host_calls) {
      for (const auto& c : *options.host_calls) runs.push_back({&find(c.name), c.input, {}});
    } else {
      for (const auto& call : calls) {
        model::HostCallRun run{&call, {}, {}};
        for (const auto& name : call.input_bindings) {
          const auto& b = *std::find_if(package.bindings.begin(), package.bindings.end(),
                                        [&](const arch::Binding& x) { return x.name == name; });
          if (const auto it = options.inputs.find(name); it != options.inputs.end()) {
            run.input.insert(run.input.end(), it->second.begin(), it->second.end());
            continue;
          }
          for (const auto& s : b.slices) {
            const size_t at = run.input.size();
            run.input.resize(at + s.bytes);
            view.read(s.tile, s.address, s.bytes, run.input.data() + at);
          }
        }
        // A file is as long as its slices reach (section 17.1); bindings past them, unmoved.
        if (run.input.size() > model::host_input_bytes(call)) run.input.resize(model::host_input_bytes(call));
        runs.push_back(std::move(run));
      }
    }
    try {
      chip.attach_host(package.host, std::move(runs));
    } catch (const InputError& e) {
      throw InputError(options.source_name + ": " + e.what());
    }
  }

  // Tiles in parallel (a proof's final digests cover every destination byte, hundreds of
  // megabytes); failures are listed in expectation order.
  void check_expectations(const arch::Package& package, const MemoryView& view, RunResult& result) const {
    const auto& all = package.expectations;
    // One task per tile: MemoryView's threading rule.
    const arch::Groups by_tile = arch::group_by(all.size(), [&](size_t i) { return all[i].tile; });
    std::vector<std::optional<ExpectationFailure>> failures(all.size());
    tbb::parallel_for(size_t{0}, by_tile.size(), [&](size_t g) {
      std::vector<uint8_t> found;
      for (const uint32_t i : by_tile.of(g)) {
        const auto& e = all[i];
        found.resize(e.size);
        view.read(e.tile, e.address, e.size, found.data());
        if (e.digest) {
          const uint64_t d = arch::fnv1a64(found.data(), found.size());
          if (d != *e.digest)
            failures[i] = {e.tile, e.address, "digest " + hex_digest(*e.digest), "digest " + hex_digest(d)};
        } else if (found != e.bytes) {
          failures[i] = {e.tile, e.address, hex_bytes(e.bytes.data(), e.bytes.size()),
                         hex_bytes(found.data(), found.size())};
        }
      }
    });
    for (auto& f : failures) {
      if (f) result.expectation_failures.push_back(std::move(*f));
    }
  }

  // Every output slice, in binding and slice order, is one snapshot range of its tile.
  static void snapshot_outputs(const arch::Package& package, model::Chip& chip) {
    std::map<uint32_t, std::vector<std::pair<uint32_t, uint32_t>>> ranges;
    for (const auto& b : package.bindings) {
      if (b.kind != arch::BindingKind::Output) continue;
      for (const auto& s : b.slices) ranges[s.tile].emplace_back(s.address, s.bytes);
    }
    for (auto& [tile, list] : ranges) chip.tile(tile)->snapshot_at_invocation_ends(std::move(list));
  }

  static void collect_invocation_outputs(const arch::Package& package, const model::Chip& chip, RunResult& result) {
    const size_t earlier = result.invocation_ends.empty() ? 0 : result.invocation_ends.size() - 1;
    result.invocation_outputs.resize(earlier);
    for (size_t i = 0; i < earlier; ++i) {
      std::map<uint32_t, size_t> offset;  // each tile's read position in its snapshot
      for (const auto& b : package.bindings) {
        if (b.kind != arch::BindingKind::Output) continue;
        std::vector<uint8_t>& bytes = result.invocation_outputs[i][b.name];
        for (const auto& s : b.slices) {
          const std::vector<uint8_t>& snapshot = chip.tile(s.tile)->snapshots().at(i);
          const size_t at = offset[s.tile];
          bytes.insert(bytes.end(), snapshot.begin() + static_cast<ptrdiff_t>(at),
                       snapshot.begin() + static_cast<ptrdiff_t>(at + s.bytes));
          offset[s.tile] = at + s.bytes;
        }
      }
    }
  }

  void collect_outputs(const arch::Package& package, const MemoryView& view, RunResult& result) const {
    for (const auto& b : package.bindings) {
      if (b.kind != arch::BindingKind::Output) continue;
      std::vector<uint8_t> bytes;
      for (const auto& s : b.slices) {
        const size_t at = bytes.size();
        bytes.resize(at + s.bytes);
        view.read(s.tile, s.address, s.bytes, bytes.data() + at);
      }
      result.outputs[b.name] = std::move(bytes);
    }
  }
};

}  // namespace

void check_watches(const std::vector<model::WatchRange>& watches, const arch::MachineDescription& machine,
                   const char* option) {
  for (const model::WatchRange& w : watches) {
    const std::string what =
        std::string(option) + " " + std::to_string(w.tile) + ":" + arch::hex(w.address) + ":" + std::to_string(w.bytes);
    if (w.tile >= machine.tiles)
      throw InputError(what + ": machine " + machine.name + " has tiles 0.." + std::to_string(machine.tiles - 1));
    if (w.address % 4 != 0 || w.bytes == 0 || w.bytes % 4 != 0)
      throw InputError(what + ": the address must be 4-aligned and the bytes a positive multiple of 4");
    if (w.address < machine.sram_base || uint64_t{w.address} + w.bytes > machine.sram_end)
      throw InputError(what + ": outside the tile's memory [" + arch::hex(machine.sram_base) + ", " +
                       arch::hex(machine.sram_end) + ")");
  }
}

std::unique_ptr<Backend> make_systemc_backend(const arch::MachineDescription& machine) {
  return std::make_unique<SystemCBackend>(machine);
}

}  // namespace lockstep::sim
