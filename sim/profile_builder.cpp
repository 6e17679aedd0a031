#include "sim/profile_builder.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "arch/kernel_signatures.hpp"

namespace lockstep::sim {
namespace {

using arch::ProfileStep;
using arch::ProfileStepKind;
using model::StepRecord;
using model::StepRole;

// Pre-order index of every step of a program (Repeat bodies after their Repeat), keyed by
// the address of the step's alternative, which is what the tile records.
void number_steps(const std::vector<arch::Step>& steps, std::unordered_map<const void*, uint32_t>& index) {
  for (const auto& step : steps) {
    std::visit([&](const auto& s) { index.emplace(&s, static_cast<uint32_t>(index.size())); }, step.kind);
    if (const auto* r = std::get_if<arch::RepeatStep>(&step.kind)) number_steps(r->body, index);
  }
}

void kernel_step(const arch::KernelStep& k, uint32_t calls, ProfileStep& out) {
  out.kind = ProfileStepKind::Compute;
  out.kernel = k.name;
  out.metadata.push_back({"reason", "Kernel"});
  out.metadata.push_back({"kernelSpec", arch::kernel_spec(k)});
  if (const auto* sig = arch::find_kernel_signature(k.name)) {
    const auto bytes = sig->operand_bytes(k.scalars, k.operands.size());
    for (size_t i = 0; i < bytes.size(); ++i)
      out.metadata.push_back({"operand" + std::to_string(i) + "Bytes", std::to_string(bytes[i])});
  }
  out.metadata.push_back({"invocations", std::to_string(calls)});
}

const char* patch_method(arch::PatchMethod m) {
  switch (m) {
    case arch::PatchMethod::Helper:
      return "helper";
    case arch::PatchMethod::Bulk:
      return "bulk";
    case arch::PatchMethod::Setup:
      return "setup";
  }
  return "unknown";
}

// Everything of the step but its phase attribution (operation and label).
ProfileStep describe(const StepRecord& r, uint32_t local_index) {
  ProfileStep out;
  out.local_index = local_index;
  out.phase = local_index;
  switch (r.role) {
    case StepRole::Sync:
      out.kind = ProfileStepKind::Synchronization;
      out.kernel = "sync";
      out.metadata = {{"reason", "Sync"}, {"zone", std::to_string(static_cast<const arch::SyncStep*>(r.step)->zone)}};
      break;
    case StepRole::Exchange: {
      const auto& e = *static_cast<const arch::ExchangeStep*>(r.step);
      out.phase = arch::kExchangePhaseBit | e.phase;
      if (!e.row_address) {  // `sans 0; sync 1`: in the barrier, no row of its own
        out.kind = ProfileStepKind::Synchronization;
        out.kernel = "sync";
        out.metadata = {{"reason", "ExchangeBarrier"}};
        break;
      }
      out.kind = ProfileStepKind::Exchange;
      out.kernel = "exchange";
      if (r.activities) {
        out.activities = r.activities->per_tile.at(r.position);
        out.event_cycles = static_cast<uint32_t>(std::clamp<int64_t>(r.activities->horizon, 0, UINT32_MAX));
        if (r.position < r.activities->row_end.size()) {
          out.metadata = {{"reason", "Exchange"}, {"rowEvents", std::to_string(r.activities->row_end[r.position])}};
        }
      }
      break;
    }
    case StepRole::Kernel:
      kernel_step(*static_cast<const arch::KernelStep*>(r.step), r.calls, out);
      // The supervisor's call sequence around the kernels (operands, call, return), which
      // calibration takes out of the sample (docs/calibration.md).
      out.metadata.push_back(
          {"callCycles", std::to_string(r.end - r.start - std::min(r.kernel_cycles, r.end - r.start))});
      break;
    case StepRole::RepeatEntry:
    case StepRole::RepeatIteration:
      out.kind = ProfileStepKind::Compute;
      out.kernel = "repeat";
      out.metadata = {{"reason", r.role == StepRole::RepeatEntry ? "RepeatEntry" : "RepeatIteration"},
                      {"count", std::to_string(static_cast<const arch::RepeatStep*>(r.step)->count)}};
      break;
    case StepRole::Host: {
      const auto& h = *static_cast<const arch::HostStep*>(r.step);
      uint64_t to_tile = 0, to_host = 0;
      for (const auto& t : h.transfers) (t.direction == arch::HostDirection::ToTile ? to_tile : to_host) += t.bytes;
      out.kind = ProfileStepKind::Exchange;
      out.kernel = "host-exchange";
      out.metadata = {
          {"reason", "HostPhase"}, {"bytesToTile", std::to_string(to_tile)}, {"bytesToHost", std::to_string(to_host)}};
      break;
    }
    case StepRole::Patch: {
      const auto& p = *static_cast<const arch::PatchStep*>(r.step);
      out.kind = ProfileStepKind::Compute;
      out.kernel = "patch";
      out.metadata = {
          {"reason", "RepeatPatch"}, {"method", patch_method(p.method)}, {"words", std::to_string(p.entries.size())}};
      break;
    }
  }
  return out;
}

// The exchange phase each record belongs to: its own, or the next one the tile takes part in.
std::vector<const arch::Phase*> attributed_phases(const std::vector<StepRecord>& records,
                                                  const std::map<uint32_t, const arch::Phase*>& phases) {
  std::vector<const arch::Phase*> out(records.size(), nullptr);
  const arch::Phase* next = nullptr;
  for (size_t i = records.size(); i-- > 0;) {
    if (records[i].role == StepRole::Exchange) {
      const auto found = phases.find(static_cast<const arch::ExchangeStep*>(records[i].step)->phase);
      next = found == phases.end() ? nullptr : found->second;
    }
    out[i] = next;
  }
  return out;
}

void add_tile(const model::Tile& tile, const std::map<uint32_t, const arch::Phase*>& phases, uint64_t total_cycles,
              arch::ProfileStepTable& table, arch::Profile& profile) {
  arch::TileProfile out;
  out.physical_tile = tile.physical();
  out.logical_tile = tile.logical();
  const auto& records = tile.records();
  if (tile.program().steps.empty()) {  // listed, but with nothing to run
    ProfileStep idle;
    idle.kind = ProfileStepKind::Idle;
    idle.kernel = "idle";
    idle.metadata = {{"reason", "InactiveTile"}};
    out.samples.push_back({0, total_cycles, table.add(std::move(idle)), 0, 0});
  }
  std::unordered_map<const void*, uint32_t> index;
  number_steps(tile.program().steps, index);
  const auto attributed = attributed_phases(records, phases);
  // A Repeat executes the same steps every iteration: describe each distinct one once.
  using Key = std::tuple<const void*, StepRole, uint32_t, const model::PhaseActivities*, uint32_t, const arch::Phase*>;
  std::map<Key, uint32_t> described;
  out.samples.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const StepRecord& r = records[i];
    const Key key{r.step, r.role, r.calls, r.activities.get(), r.position, attributed[i]};
    auto [it, added] = described.try_emplace(key, 0);
    if (added) {
      ProfileStep step = describe(r, index.at(r.step));
      if (attributed[i] != nullptr) {
        step.operation = attributed[i]->operation;
        step.phase_label = attributed[i]->label;
      }
      it->second = table.add(std::move(step));
    }
    out.samples.push_back({r.start, r.end, it->second, r.epoch, r.invocation});
  }
  profile.tiles.push_back(std::move(out));
}

}  // namespace

arch::Profile build_profile(const model::Chip& chip, const arch::Package& package,
                            const arch::MachineDescription& machine, uint64_t total_cycles) {
  arch::Profile profile;
  profile.clock_hz = static_cast<uint64_t>(machine.clock_hz);
  profile.machine_name = machine.name;
  profile.total_cycles = total_cycles;
  std::map<uint32_t, const arch::Phase*> phases;
  for (const auto& p : package.phases) phases[p.id] = &p;
  arch::ProfileStepTable table(profile.steps);
  std::vector<const model::Tile*> tiles;
  for (const auto& t : chip.tiles()) tiles.push_back(t.get());
  std::sort(tiles.begin(), tiles.end(), [](const auto* a, const auto* b) { return a->physical() < b->physical(); });
  for (const model::Tile* t : tiles) add_tile(*t, phases, total_cycles, table, profile);
  return profile;
}

}  // namespace lockstep::sim
