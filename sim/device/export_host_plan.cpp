#include "sim/device/export_host_plan.hpp"

#include <algorithm>
#include <map>

#include "arch/host_packets.hpp"
#include "arch/topology.hpp"
#include "formats/package_validate_host.hpp"
#include "io/errors.hpp"
#include "io/hex.hpp"
#include "supervisor/supervisor_code.hpp"

// GCC 12's false "maybe uninitialized" on std::variant moves, as in supervisor/code_reader.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace lockstep::arch {
namespace {

constexpr uint32_t kSlotBytes = 4096;  // each participating tile's part of page 1 (17.4)

struct Chunk {
  uint32_t tile_address = 0;
  uint32_t bytes = 0;
  uint64_t file_offset = 0;
};

// One side of a call: the bindings that make its file, and each tile's chunks in file order.
struct CallSide {
  std::vector<std::string> bindings;
  std::map<uint32_t, std::vector<Chunk>> chunks;  // by logical tile
  size_t batches() const {
    size_t n = 0;
    for (const auto& entry : chunks) n = std::max(n, entry.second.size());
    return n;
  }
};

CallSide side_of(const Package& package, BindingKind kind) {
  CallSide side;
  uint64_t base = 0;  // the binding's start in the call's file (17.1)
  for (const Binding& b : package.bindings) {
    if (b.kind != kind) continue;
    side.bindings.push_back(b.name);
    uint64_t offset = 0;
    for (size_t i = 0; i < b.slices.size(); ++i) {
      const Slice& s = b.slices[i];
      if (s.address % 4 != 0 || s.bytes % 4 != 0) {
        throw InputError("export: binding '" + b.name + "' slice " + std::to_string(i) + " (tile " +
                         std::to_string(s.tile) + ", " + hex(s.address) + "+" + std::to_string(s.bytes) +
                         "): host packets move whole 4-byte words at 4-aligned addresses (IPU21-DEVICE.md 14); "
                         "--host-io none leaves the bindings in tile memory");
      }
      for (uint32_t done = 0; done < s.bytes; done += kSlotBytes) {
        const uint32_t n = std::min(kSlotBytes, s.bytes - done);
        side.chunks[s.tile].push_back({s.address + done, n, base + offset + done});
      }
      offset += s.bytes;
    }
    base += offset;
  }
  return side;
}

class HostPlan {
 public:
  HostPlan(Package& package, const MachineDescription& machine) : package_(package) {
    const Topology topology(machine);
    std::vector<std::pair<uint32_t, uint32_t>> tiles;  // (physical, logical)
    for (const Binding& b : package.bindings) {
      for (const Slice& s : b.slices) tiles.emplace_back(topology.physical(s.tile), s.tile);
    }
    std::sort(tiles.begin(), tiles.end());
    tiles.erase(std::unique(tiles.begin(), tiles.end()), tiles.end());
    for (size_t rank = 0; rank < tiles.size(); ++rank) {
      order_.push_back(tiles[rank].second);
      slot_[tiles[rank].second] = kSlotBytes * static_cast<uint32_t>(1 + rank);
    }
    arena_bytes_ = kSlotBytes * static_cast<uint32_t>(1 + std::max<size_t>(1, tiles.size()));
  }

  void build() {
    Package& out = package_;
    const CallSide weights = side_of(package_, BindingKind::Weight);
    const CallSide inputs = side_of(package_, BindingKind::Input);
    const CallSide outputs = side_of(package_, BindingKind::Output);
    std::map<uint32_t, std::vector<Step>> before, after;  // by logical tile
    out.host.arena_bytes = arena_bytes_;
    out.host.command_address = 0;
    if (weights.batches() > 0) {
      HostCallSpec init{"initialize", 0, 0, {}, {}, {}, {}, weights.bindings, {}};
      for (size_t b = 0; b < weights.batches(); ++b) {
        data_phase(weights, b, HostDirection::ToTile, init.inputs, init.input_batch_ends, before);
        follower(before);
      }
      init.phases = static_cast<uint32_t>(2 * weights.batches());
      out.host.calls.push_back(std::move(init));
    }
    HostCallSpec run{"run", 0, 0, {}, {}, {}, {}, inputs.bindings, outputs.bindings};
    const size_t in = inputs.batches(), outs = outputs.batches();
    for (size_t b = 0; b < in; ++b) {
      data_phase(inputs, b, HostDirection::ToTile, run.inputs, run.input_batch_ends, before);
      if (b + 1 < in || outs > 0) follower(before);
    }
    for (size_t b = 0; b < outs; ++b) {
      if (b > 0) follower(after);
      data_phase(outputs, b, HostDirection::ToHost, run.outputs, run.output_batch_ends, after);
    }
    run.phases = in + outs == 0 ? 0 : static_cast<uint32_t>(2 * (in + outs) - 1);
    out.host.calls.push_back(std::move(run));
    for (TileProgram& t : out.tiles) {
      check_staging(t, before[t.tile]);
      std::vector<Step> steps = std::move(before[t.tile]);
      steps.insert(steps.end(), t.steps.begin(), t.steps.end());
      steps.insert(steps.end(), after[t.tile].begin(), after[t.tile].end());
      t.steps = std::move(steps);
    }
  }

 private:
  // Batch b: chunk b of every tile that has one, through its slot; every tile takes part.
  void data_phase(const CallSide& side, size_t b, HostDirection direction, std::vector<HostFileSlice>& slices,
                  std::vector<uint32_t>& batch_ends, std::map<uint32_t, std::vector<Step>>& steps) {
    for (const TileProgram& t : package_.tiles) steps[t.tile].push_back(Step{HostStep{}});
    for (const uint32_t tile : order_) {
      const auto it = side.chunks.find(tile);
      if (it == side.chunks.end() || b >= it->second.size()) continue;
      const Chunk& c = it->second[b];
      slices.push_back({slot_.at(tile), c.file_offset, c.bytes});
      std::get<HostStep>(steps[tile].back().kind)
          .transfers.push_back({direction, c.tile_address, slot_.at(tile), c.bytes});
    }
    batch_ends.push_back(static_cast<uint32_t>(slices.size()));
  }

  // Staged input lands in 0x50180.. before the program runs: that SRAM must hold nothing of
  // the package's (its rows, data, operands).
  static void check_staging(const TileProgram& t, const std::vector<Step>& steps) {
    uint64_t end = kHostStaging;
    for (const Step& step : steps) {
      const auto& h = std::get<HostStep>(step.kind);
      const std::vector<uint32_t> landing = host_landing_addresses(h);
      for (size_t i = 0; i < landing.size(); ++i) {
        if (landing[i] != h.transfers[i].tile_address)
          end = std::max<uint64_t>(end, uint64_t{landing[i]} + h.transfers[i].bytes);
      }
    }
    if (end == kHostStaging) return;
    // The table region's unused part is free (its rows are segments); the code area keeps out
    // of the staging buffer, which its placement counts as used.
    const std::string user = sram_user(t, kHostStaging, end);
    if (!user.empty()) {
      throw InputError("export: tile " + std::to_string(t.tile) + ": the staging buffer " + hex(kHostStaging) + ".." +
                       hex(static_cast<uint32_t>(end)) +
                       " that host input lands in (IPU21-DEVICE.md 9.2, 14) is taken by the " + user +
                       "; --host-io none leaves the bindings in tile memory");
    }
  }

  // The second handshake of a batch: every tile abstains (sans 1; sync 1).
  void follower(std::map<uint32_t, std::vector<Step>>& steps) {
    for (const TileProgram& t : package_.tiles) steps[t.tile].push_back(Step{HostStep{}});
  }

  Package& package_;
  std::vector<uint32_t> order_;        // participating logical tiles by ascending physical id
  std::map<uint32_t, uint32_t> slot_;  // logical tile -> its slot's host address
  uint32_t arena_bytes_ = 0;
};

}  // namespace

void add_stack_host_calls(Package& package, const MachineDescription& machine) { HostPlan(package, machine).build(); }

}  // namespace lockstep::arch
