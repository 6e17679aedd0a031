#pragma once
// `--profile FILE` of run and replay: checked before the run, written after it.
#include <string>

#include "profile/profile.hpp"

namespace lockstep::cli {

// Throws InputError unless FILE can be written and is none of `inputs`.
void check_profile_output(const std::string& file, const std::vector<std::string>& inputs);

// Stamps the producer (this build's version and commit) and the source, then writes
// atomically; prints "profile FILE: N samples on T tiles" to stderr.
void write_run_profile(arch::Profile profile, const std::string& source, const std::string& file);

}  // namespace lockstep::cli
