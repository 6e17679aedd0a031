#include "sim/device/profile_extract.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "io/errors.hpp"

namespace lockstep::arch {

uint64_t app_binding_bytes(const AppBinding& binding) {
  uint64_t end = 0;
  for (const RegionSlice& s : binding.slices) end = std::max(end, s.file_offset + s.size);
  return end;
}

std::vector<std::pair<std::string, std::vector<uint8_t>>> split_call_file(const std::vector<AppBinding>& bindings,
                                                                          const std::vector<uint8_t>& file) {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> out;
  uint64_t base = 0;
  for (const AppBinding& b : bindings) {
    const uint64_t size = app_binding_bytes(b);
    if (base + size <= file.size()) {
      const auto first = file.begin() + static_cast<ptrdiff_t>(base);
      out.emplace_back(b.name, std::vector<uint8_t>(first, first + static_cast<ptrdiff_t>(size)));
    }
    base += size;
  }
  return out;
}

Profile extract_profile(const Application& app, const std::vector<uint8_t>& run_output, uint64_t clock_hz,
                        const std::string& where) {
  uint64_t base = 0;
  const AppBinding* cycles = nullptr;
  for (const AppBinding& b : app.outputs) {
    if (b.name == "profile.cycles") {
      cycles = &b;
      break;
    }
    base += app_binding_bytes(b);
  }
  if (cycles == nullptr) throw InputError(where + ": application has no cycle profile binding");
  std::map<uint32_t, const RegionSlice*> slice_of;
  for (const RegionSlice& s : cycles->slices) slice_of.emplace(s.tile, &s);
  Profile profile;
  profile.lockstep_version = 0;  // a stack profile: no Lockstep fields
  profile.clock_hz = clock_hz;
  ProfileStepTable table(profile.steps);
  bool first = true;
  uint32_t origin = 0;
  for (const TileProfilePlan& plan : app.profile_tiles) {
    const std::string tile = where + ": profile.cycles: tile " + std::to_string(plan.physical_tile);
    const auto it = slice_of.find(plan.physical_tile);
    const uint64_t words = plan.steps.size() + 1;
    if (it == slice_of.end() || it->second->size != 4 * words) {
      throw InputError(tile + ": its slice is not (" + std::to_string(plan.steps.size()) + " steps + 1) x 4 bytes");
    }
    const uint64_t at = base + it->second->file_offset;
    if (at + 4 * words > run_output.size()) throw InputError(tile + ": its slice lies past the run output's end");
    std::vector<uint32_t> count(words);
    std::memcpy(count.data(), run_output.data() + at, 4 * words);
    if (first) origin = count[0];
    first = false;
    TileProfile out{plan.physical_tile, plan.physical_tile, {}};
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const uint64_t start = uint64_t{origin} + static_cast<uint32_t>(count[i] - origin);
      const uint64_t end = start + static_cast<uint32_t>(count[i + 1] - count[i]);
      out.samples.push_back({start, end, table.add(plan.steps[i].step), plan.steps[i].epoch, plan.steps[i].invocation});
      profile.total_cycles = std::max(profile.total_cycles, end - origin);
    }
    profile.tiles.push_back(std::move(out));
  }
  return profile;
}

}  // namespace lockstep::arch
