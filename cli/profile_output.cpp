#include "cli/profile_output.hpp"

#include <iostream>

#include "arch/atomic_file.hpp"
#include "cli/version.hpp"

namespace lockstep::cli {

void check_profile_output(const std::string& file, const std::vector<std::string>& inputs) {
  arch::check_output_file(file, "--profile");
  arch::refuse_overwriting_input(file, inputs);
}

void write_run_profile(arch::Profile profile, const std::string& source, const std::string& file) {
  profile.producer = "lockstep " LOCKSTEP_VERSION " (commit " LOCKSTEP_COMMIT ")";
  profile.source = source;
  size_t samples = 0;
  for (const auto& t : profile.tiles) samples += t.samples.size();
  arch::write_profile(profile, file);
  std::cerr << "profile " << file << ": " << samples << " samples on " << profile.tiles.size() << " tiles\n";
}

}  // namespace lockstep::cli
