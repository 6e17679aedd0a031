#include "sim/device/export_profiling.hpp"

#include <algorithm>
#include <charconv>
#include <map>

#include "arch/topology.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "supervisor/supervisor_code.hpp"

// GCC 12's false "maybe uninitialized" on std::variant moves, as in supervisor/code_reader.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace lockstep::arch {
namespace {

constexpr uint32_t kBufferAlign = 0x4000;   // section 17.3
constexpr uint32_t kBufferFirst = 0x5c000;  // clear of the stack runtime's area [inferred, 17.3]
constexpr const char* kCyclesBinding = "profile.cycles";

Step sample(uint32_t address) { return Step{KernelStep{kSampleSymbol, {{address, false}}, {}}}; }

bool is_sample(const Step& step, uint32_t* address = nullptr) {
  const auto* k = std::get_if<KernelStep>(&step.kind);
  if (k == nullptr || k->name != kSampleSymbol || k->operands.size() != 1) return false;
  if (address != nullptr) *address = k->operands[0].address;
  return true;
}

void reserve(TileProgram& t, uint32_t address, uint32_t bytes, const std::string& what) {
  if (const std::string user = sram_user(t, address, uint64_t{address} + bytes); !user.empty()) {
    throw InputError("export --profiling: tile " + std::to_string(t.tile) + ": " + what + " at " + hex(address) + "+" +
                     std::to_string(bytes) + " is taken by the package's " + user);
  }
  Segment s;
  s.address = address;
  s.size = bytes;
  s.fill = FillKind::Zero;
  t.segments.push_back(s);
  std::sort(t.segments.begin(), t.segments.end(),
            [](const Segment& a, const Segment& b) { return a.address < b.address; });
}

// The lowest 0x4000-aligned address from 0x5c000 where `bytes` are free on every tile.
uint32_t buffer_address(const Package& package, const MachineDescription& machine, uint32_t bytes) {
  for (uint64_t a = kBufferFirst; a + bytes <= machine.row_region_end; a += kBufferAlign) {
    bool free = true;
    for (const TileProgram& t : package.tiles) free = free && sram_user(t, a, a + bytes).empty();
    if (free) return static_cast<uint32_t>(a);
  }
  throw InputError("export --profiling full: no 0x4000-aligned run of " + std::to_string(bytes) +
                   " bytes from 0x5c000 below " + hex(machine.row_region_end) + " is free on every tile");
}

Binding u32_binding(const std::string& name) {
  Binding b;
  b.name = name;
  b.kind = BindingKind::Output;
  return b;
}

ProfileStep plan_step(const Step& step, uint32_t index, const Package& package) {
  ProfileStep p;
  p.local_index = index;
  p.phase = index;
  const auto describe_phase = [&](uint32_t id, ProfileStep& into) {
    into.phase = kExchangePhaseBit | id;
    for (const Phase& phase : package.phases) {
      if (phase.id != id) continue;
      into.operation = phase.operation;
      into.phase_label = phase.label;
      into.metadata.push_back({"execution_count", std::to_string(phase.execution_count)});
    }
  };
  if (const auto* e = std::get_if<ExchangeStep>(&step.kind)) {
    p.kind = ProfileStepKind::Exchange;
    p.kernel = "exchange";
    describe_phase(e->phase, p);
  } else if (const auto* k = std::get_if<KernelStep>(&step.kind)) {
    p.kind = ProfileStepKind::Compute;
    p.kernel = k->name;
    p.metadata.push_back({"kernelSpec", kernel_spec(*k)});  // what calibration reads (docs/calibration.md)
    p.metadata.push_back({"invocations", "1"});
  } else if (const auto* r = std::get_if<RepeatStep>(&step.kind)) {
    p.kind = ProfileStepKind::Compute;
    p.kernel = "repeat";
    // The exchanges inside, in pre-order, four entries each.
    std::vector<const ExchangeStep*> inside;
    const auto walk = [&](const auto& self, const std::vector<Step>& body) -> void {
      for (const Step& s : body) {
        if (const auto* e = std::get_if<ExchangeStep>(&s.kind)) inside.push_back(e);
        if (const auto* nested = std::get_if<RepeatStep>(&s.kind)) self(self, nested->body);
      }
    };
    walk(walk, r->body);
    for (const ExchangeStep* e : inside) {
      ProfileStep d;
      describe_phase(e->phase, d);
      p.metadata.push_back({"exchange.phase", std::to_string(e->phase)});
      p.metadata.push_back({"exchange.label", d.phase_label});
      p.metadata.push_back({"exchange.operation", d.operation});
      p.metadata.push_back({"exchange.execution_count", d.metadata.empty() ? "1" : d.metadata.front().value});
    }
  } else if (std::holds_alternative<PatchStep>(step.kind)) {
    p.kind = ProfileStepKind::Compute;
    p.kernel = "patch";
  } else {
    p.kind = ProfileStepKind::Synchronization;
    p.kernel = "sync";
  }
  return p;
}

}  // namespace

void add_profiling(Package& out, const MachineDescription& machine, ProfilingMode mode) {
  if (mode == ProfilingMode::None) return;
  const Package& package = out;
  if (!package.host.calls.empty()) {
    throw InputError("export --profiling: the package already has host phases; it is exported with the samples it has");
  }
  for (const Binding& b : package.bindings) {
    if (b.name.rfind("profile.", 0) == 0) {
      throw InputError("export --profiling: the package already has a binding '" + b.name + "'");
    }
  }
  const Topology topology(machine);
  size_t most_steps = 0;
  for (const TileProgram& t : out.tiles) most_steps = std::max(most_steps, t.steps.size());
  const uint32_t buffer_bytes = static_cast<uint32_t>(4 * (most_steps + 1));
  const uint32_t buffer = mode == ProfilingMode::Full ? buffer_address(out, machine, buffer_bytes) : 0;
  Binding start = u32_binding("profile.start-cycle"), cycles = u32_binding(kCyclesBinding),
          end = u32_binding("profile.end-cycle");
  std::vector<std::pair<uint32_t, Slice>> cycle_slices;  // by physical tile (17.3: ascending)
  for (TileProgram& t : out.tiles) {
    reserve(t, kStartCycleAddress, 8, "the start and end cycle words");
    std::vector<Step> steps = {sample(kStartCycleAddress)};
    if (mode == ProfilingMode::Full) {
      reserve(t, buffer, buffer_bytes, "the sample buffer");
      for (size_t i = 0; i < t.steps.size(); ++i) {
        steps.push_back(sample(buffer + static_cast<uint32_t>(4 * i)));
        steps.push_back(t.steps[i]);
      }
      steps.push_back(sample(buffer + static_cast<uint32_t>(4 * t.steps.size())));
      if (!t.steps.empty()) {
        cycle_slices.emplace_back(topology.physical(t.tile),
                                  Slice{t.tile, buffer, static_cast<uint32_t>(4 * (t.steps.size() + 1))});
      }
    } else {
      steps.insert(steps.end(), t.steps.begin(), t.steps.end());
    }
    steps.push_back(sample(kEndCycleAddress));
    t.steps = std::move(steps);
    start.slices.push_back({t.tile, kStartCycleAddress, 4});
    end.slices.push_back({t.tile, kEndCycleAddress, 4});
  }
  std::sort(cycle_slices.begin(), cycle_slices.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& entry : cycle_slices) cycles.slices.push_back(entry.second);
  out.bindings.push_back(std::move(start));
  if (mode == ProfilingMode::Full) out.bindings.push_back(std::move(cycles));
  out.bindings.push_back(std::move(end));
}

std::vector<PlanStep> profiled_plan(const TileProgram& program, const Package& package) {
  const Binding* cycles = nullptr;
  for (const Binding& b : package.bindings) {
    if (b.name == kCyclesBinding) cycles = &b;
  }
  if (cycles == nullptr) return {};
  uint32_t buffer = 0, slice_bytes = 0;
  bool found = false;
  for (const Slice& s : cycles->slices) {
    if (s.tile == program.tile) {
      buffer = s.address;
      slice_bytes = s.bytes;
      found = true;
    }
  }
  if (!found) return {};
  // The profiled steps lie between the tile's first and last sample into the buffer.
  size_t first = program.steps.size(), last = 0;
  for (size_t i = 0; i < program.steps.size(); ++i) {
    uint32_t address = 0;
    if (!is_sample(program.steps[i], &address) || address < buffer || address - buffer >= slice_bytes) continue;
    first = std::min(first, i);
    last = i;
  }
  std::vector<PlanStep> plan;
  for (size_t i = first + 1; i < last; ++i) {
    if (is_sample(program.steps[i])) continue;
    PlanStep p;
    p.step = plan_step(program.steps[i], static_cast<uint32_t>(plan.size()), package);
    plan.push_back(std::move(p));
  }
  return plan;
}

std::vector<PlanStep> plan_exchanges_in_order(const std::vector<PlanStep>& plan) {
  std::vector<PlanStep> out;
  for (const PlanStep& s : plan) {
    if (s.step.phase & kExchangePhaseBit) {
      out.push_back(s);
      continue;
    }
    const auto& m = s.step.metadata;
    for (size_t i = 0; i + 3 < m.size(); ++i) {
      if (m[i].name != "exchange.phase" || m[i + 1].name != "exchange.label" || m[i + 2].name != "exchange.operation" ||
          m[i + 3].name != "exchange.execution_count") {
        continue;
      }
      PlanStep e;
      uint32_t id = 0;
      const auto [end, error] = std::from_chars(m[i].value.data(), m[i].value.data() + m[i].value.size(), id);
      if (error != std::errc() || end != m[i].value.data() + m[i].value.size()) continue;
      e.step.kind = ProfileStepKind::Exchange;
      e.step.phase = kExchangePhaseBit | id;
      e.step.phase_label = m[i + 1].value;
      e.step.operation = m[i + 2].value;
      e.step.metadata.push_back({"execution_count", m[i + 3].value});
      out.push_back(std::move(e));
      i += 3;
    }
  }
  return out;
}

}  // namespace lockstep::arch
