// The rules of docs/IPU21-DEVICE.md section 12.3 (the stack's reader and writer both run
// them) and the header of 12.2. Each failure is one line naming the field.
#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

#include "io/errors.hpp"
#include "io/hex.hpp"
#include "io/printable.hpp"
#include "sim/device/application.hpp"

namespace lockstep::arch {
namespace {

std::string at(const std::string& field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

class Validator {
 public:
  Validator(const Application& app, std::string file) : app_(app), file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(file_ + ": " + where + ": " + what);
  }

  uint64_t memory_end() const { return uint64_t{app_.tile_memory_base} + app_.tile_memory_size; }
  std::string memory() const { return hex_range(app_.tile_memory_base, memory_end()); }
  bool in_memory(uint64_t address, uint64_t size) const {
    return address >= app_.tile_memory_base && address + size <= memory_end();
  }

  void header() const {
    const auto mismatch = [&](const std::string& field, const std::string& found, const std::string& expected) {
      throw InputError(file_ + ": incompatible package header: " + field + " " + found + " (expected " + expected +
                       ")");
    };
    if (app_.schema_version != kApplicationSchemaVersion) {
      mismatch("schemaVersion", std::to_string(app_.schema_version), std::to_string(kApplicationSchemaVersion));
    }
    if (app_.target != kApplicationTarget) mismatch("target", "\"" + app_.target + "\"", "\"ipu21\"");
    if (app_.tile_memory_base != kApplicationMemoryBase) {
      mismatch("tileMemoryBase", std::to_string(app_.tile_memory_base), std::to_string(kApplicationMemoryBase));
    }
    if (app_.tile_memory_size != kApplicationMemorySize) {
      mismatch("tileMemorySize", std::to_string(app_.tile_memory_size), std::to_string(kApplicationMemorySize));
    }
  }

  void tiles() {
    if (app_.tiles.empty()) fail("tiles", "no tiles (an application needs at least one)");
    for (size_t t = 0; t < app_.tiles.size(); ++t) {
      const TileImage& tile = app_.tiles[t];
      if (!tiles_.insert(tile.physical_tile).second) {
        fail(at("tiles", t) + ".physicalTile", std::to_string(tile.physical_tile) + " appears twice");
      }
      segments(tile, at("tiles", t));
    }
  }

  void segments(const TileImage& tile, const std::string& where) const {
    std::vector<std::pair<uint64_t, size_t>> used;  // (address, index) of non-empty segments
    for (size_t i = 0; i < tile.segments.size(); ++i) {
      const AppSegment& seg = tile.segments[i];
      const std::string name = at(where + ".segments", i);
      if (!in_memory(seg.address, seg.memory_size)) {
        fail(name, hex(seg.address) + "+" + std::to_string(seg.memory_size) + " outside tile memory " + memory());
      }
      if (seg.data.size() > seg.memory_size) {
        fail(name, "data is " + std::to_string(seg.data.size()) + " bytes, more than memorySize " +
                       std::to_string(seg.memory_size));
      }
      if (seg.memory_size > 0) used.push_back({seg.address, i});
    }
    std::sort(used.begin(), used.end());
    for (size_t k = 1; k < used.size(); ++k) {
      const AppSegment& prev = tile.segments[used[k - 1].second];
      if (prev.address + uint64_t{prev.memory_size} > used[k].first) {
        fail(at(where + ".segments", used[k].second),
             hex(used[k].first) + " overlaps segments[" + std::to_string(used[k - 1].second) + "] (" +
                 hex(prev.address) + "+" + std::to_string(prev.memory_size) + ")");
      }
    }
  }

  void config_writes() const {
    std::set<uint32_t> offsets;
    for (size_t i = 0; i < app_.device_config_writes.size(); ++i) {
      const uint32_t offset = app_.device_config_writes[i].offset;
      const std::string where = at("deviceConfigWrites", i) + ".offset";
      if (offset % 4 != 0) fail(where, hex(offset) + " is not 4-byte aligned");
      if (!offsets.insert(offset).second) fail(where, hex(offset) + " is written twice");
    }
  }

  void profile_plans() const {
    std::set<uint32_t> planned;
    for (size_t i = 0; i < app_.profile_tiles.size(); ++i) {
      const TileProfilePlan& plan = app_.profile_tiles[i];
      const std::string where = at("profileTiles", i);
      if (!tiles_.count(plan.physical_tile)) {
        fail(where + ".physicalTile", std::to_string(plan.physical_tile) + " is not a tile of the application");
      }
      if (!planned.insert(plan.physical_tile).second) {
        fail(where + ".physicalTile", std::to_string(plan.physical_tile) + " has a second plan");
      }
      for (size_t k = 0; k < plan.steps.size(); ++k) {
        if (plan.steps[k].step.local_index != k) {
          fail(at(where + ".steps", k) + ".localIndex",
               std::to_string(plan.steps[k].step.local_index) + " (expected " + std::to_string(k) + ")");
        }
      }
    }
  }

  void debug() const {
    for (size_t i = 0; i < app_.debug_symbols.size(); ++i) {
      if (app_.debug_symbols[i].name.empty()) fail(at("debugSymbols", i) + ".name", "empty");
    }
    for (size_t i = 0; i < app_.debug_regions.size(); ++i) {
      const DebugRegion& r = app_.debug_regions[i];
      const std::string where = at("debugRegions", i);
      if (r.name.empty()) fail(where + ".name", "empty");
      if (r.size == 0) fail(where + ".size", "0 (a region needs at least one byte)");
      if (uint64_t{r.address} + r.size > 0xffffffffull) {
        fail(where, hex(r.address) + "+" + std::to_string(r.size) + " overflows 32 bits");
      }
      if (r.physical_tile != kDebugAllTiles && !tiles_.count(r.physical_tile)) {
        fail(where + ".physicalTile", std::to_string(r.physical_tile) + " is not a tile of the application");
      }
    }
  }

  void bindings(const std::vector<AppBinding>& list, const std::string& field, std::set<std::string>& names) const {
    for (size_t i = 0; i < list.size(); ++i) {
      const AppBinding& b = list[i];
      const std::string where = at(field, i);
      if (b.name.empty()) fail(where + ".name", "empty");
      if (!names.insert(b.name).second) fail(where + ".name", "'" + b.name + "' names a second binding");
      // Lockstep's reader beyond 12.3: a dtype is one of 12.2's five strings, and every slice
      // names bytes of a file (an offset past 2^64 names none).
      if (dtype_bytes(b.dtype) == 0) {
        fail(where + ".dtype", "binding '" + printable(b.name) + "': \"" + printable(b.dtype) +
                                   "\" is not a dtype (f16, f32, f8f143, u32, u8)");
      }
      for (size_t k = 0; k < b.slices.size(); ++k) {
        const RegionSlice& s = b.slices[k];
        const std::string slice = at(where + ".slices", k);
        if (s.file_offset + s.size < s.file_offset) {
          fail(slice, "binding '" + printable(b.name) + "': fileOffset " + std::to_string(s.file_offset) + " + size " +
                          std::to_string(s.size) + " overflows 64 bits");
        }
        if (!tiles_.count(s.tile)) fail(slice + ".tile", std::to_string(s.tile) + " is not a tile of the application");
        if (s.size > app_.tile_memory_size || !in_memory(s.tile_address, s.size)) {
          fail(slice, hex(s.tile_address) + "+" + std::to_string(s.size) + " outside tile memory " + memory());
        }
      }
    }
  }

  void host_exchange() const;
  void host_call(const HostCall& call, const std::string& where) const;

  void all() {
    header();
    tiles();
    config_writes();
    profile_plans();
    debug();
    std::set<std::string> names;
    bindings(app_.inputs, "inputs", names);
    bindings(app_.outputs, "outputs", names);
    bindings(app_.weights, "weights", names);
    host_exchange();
  }

 private:
  const Application& app_;
  std::string file_;
  std::set<uint32_t> tiles_;
};

const HostPage* find_page(const HostExchange& host, uint32_t index) {
  for (const HostPage& p : host.pages) {
    if (p.index == index) return &p;
  }
  return nullptr;
}

void Validator::host_exchange() const {
  const HostExchange& host = app_.host_exchange;
  std::set<uint32_t> indices;
  for (size_t i = 0; i < host.pages.size(); ++i) {
    if (!indices.insert(host.pages[i].index).second) {
      fail(at("hostExchange.pages", i) + ".index", std::to_string(host.pages[i].index) + " appears twice");
    }
  }
  for (size_t i = 0; i < host.attach_order.size(); ++i) {
    if (!indices.count(host.attach_order[i])) {
      fail(at("hostExchange.attachOrder", i), "page " + std::to_string(host.attach_order[i]) + " does not exist");
    }
  }
  if (host.calls.empty()) return;
  const HostPage* command = find_page(host, host.command_page);
  if (!command) fail("hostExchange.commandPage", "page " + std::to_string(host.command_page) + " does not exist");
  if (host.command_offset > command->size || command->size - host.command_offset < 4) {
    fail("hostExchange.commandOffset", std::to_string(host.command_offset) + " + 4 is beyond the command page's " +
                                           std::to_string(command->size) + " bytes");
  }
  for (size_t i = 0; i < host.calls.size(); ++i) host_call(host.calls[i], at("hostExchange.calls", i));
}

void Validator::host_call(const HostCall& call, const std::string& where) const {
  if (call.invocations < 1) fail(where + ".invocations", "0 (at least 1)");
  const auto batch_ends = [&](const std::vector<uint32_t>& ends, size_t slices, const std::string& field) {
    if (ends.empty()) {
      if (slices > 0) fail(where + "." + field, "empty, but the call has " + std::to_string(slices) + " slices");
      return;
    }
    for (size_t k = 0; k < ends.size(); ++k) {
      if (ends[k] > slices)
        fail(at(where + "." + field, k),
             std::to_string(ends[k]) + " is beyond the " + std::to_string(slices) + " slices");
      if (k > 0 && ends[k] <= ends[k - 1]) fail(at(where + "." + field, k), "not strictly increasing");
    }
    if (ends.back() != slices) {
      fail(where + "." + field,
           "ends at " + std::to_string(ends.back()) + ", not at the slice count " + std::to_string(slices));
    }
  };
  batch_ends(call.input_batch_ends, call.inputs.size(), "inputBatchEnds");
  batch_ends(call.output_batch_ends, call.outputs.size(), "outputBatchEnds");
  const auto slices = [&](const std::vector<HostSlice>& list, const std::string& field) {
    for (size_t k = 0; k < list.size(); ++k) {
      const HostSlice& s = list[k];
      const HostPage* page = find_page(app_.host_exchange, s.page);
      const std::string slice = at(where + "." + field, k);
      if (!page) fail(slice + ".page", std::to_string(s.page) + " does not exist");
      if (s.page_offset > page->size || s.size > page->size - s.page_offset) {
        fail(slice, std::to_string(s.page_offset) + "+" + std::to_string(s.size) + " is beyond page " +
                        std::to_string(s.page) + "'s " + std::to_string(page->size) + " bytes");
      }
    }
  };
  slices(call.inputs, "inputs");
  slices(call.outputs, "outputs");
}

}  // namespace

uint32_t dtype_bytes(const std::string& dtype) {
  if (dtype == "f16") return 2;
  if (dtype == "f32" || dtype == "u32") return 4;
  if (dtype == "f8f143" || dtype == "u8") return 1;
  return 0;
}

void validate_application(const Application& app, const std::string& file_name) { Validator(app, file_name).all(); }

}  // namespace lockstep::arch
