#pragma once
// Configuration names as sweep files, results.csv and the command line spell them. Kept
// apart from results.cpp so the sweep-definition reader (lockstep_replay_config) needs
// neither the simulator nor SystemC.
#include <string>

namespace lockstep::replay {

// True for latency | automatic | remaining-combined | S<W> | B<W> (W a positive decimal
// integer without leading zeros).
bool is_config_name(const std::string& name);

}  // namespace lockstep::replay
