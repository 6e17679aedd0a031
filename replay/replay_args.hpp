#pragma once
// Parsing the replay and sweep arguments that are not plain numbers.
#include <cstdint>
#include <string>
#include <vector>

#include "replay/point.hpp"

namespace lockstep::replay {

// "3,5,7-9" -> {3,5,7,8,9} (sorted, no duplicates). InputError "--phases: ..." otherwise.
std::vector<uint32_t> parse_phase_list(const std::string& text);

// A configuration as the user writes it: "B256", "B256p" or "B256+paired" (paired width).
// InputError naming the flag for anything else.
PointSpec parse_point_config(const std::string& text, uint32_t phase);

}  // namespace lockstep::replay
