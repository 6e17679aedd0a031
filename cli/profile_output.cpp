#include "cli/profile_output.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <iostream>

#include "cli/version.hpp"
#include "io/atomic_file.hpp"

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
  const auto start = std::chrono::steady_clock::now();
  arch::write_profile(profile, file);
  spdlog::debug("profile: written in {:.3f} s",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  std::cerr << "profile " << file << ": " << samples << " samples on " << profile.tiles.size() << " tiles\n";
}

}  // namespace lockstep::cli
