#pragma once
// What the stack's `profile-extract` makes of a run call's output (IPU21-DEVICE.md 15.1,
// 17.2, 17.3), and the run output split into the image's output bindings (17.1's layout).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "profile/profile.hpp"
#include "sim/device/application.hpp"

namespace lockstep::arch {

// A binding's bytes in a call file: max(fileOffset + size) over its slices.
uint64_t app_binding_bytes(const AppBinding& binding);

// Each of `bindings` cut from `file` at the running total of the earlier ones' sizes; a
// binding that lies past the file's end (the `completion` word the run call never moves) is
// left out.
std::vector<std::pair<std::string, std::vector<uint8_t>>> split_call_file(const std::vector<AppBinding>& bindings,
                                                                          const std::vector<uint8_t>& file);

// The profile of `profile.cycles` in the run output: each TileProfilePlan's (steps + 1) words,
// sample i spanning word i to word i + 1 (32-bit counts, unwrapped from the first tile's first
// word). InputError "WHERE: application has no cycle profile binding" without one, and naming
// the tile whose slice is not (steps + 1) x 4 bytes or lies past the output.
Profile extract_profile(const Application& app, const std::vector<uint8_t>& run_output, uint64_t clock_hz,
                        const std::string& where);

}  // namespace lockstep::arch
