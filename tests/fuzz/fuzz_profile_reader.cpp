// libFuzzer target: any bytes through the profile reader (the corpus holds Lockstep's
// compact and the stack's inline layouts). A Profile or an InputError are both fine;
// anything else (a crash, another exception, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>

#include "io/errors.hpp"
#include "profile/profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lockstep::arch::Profile profile = lockstep::arch::parse_profile(data, size, "fuzz");
    for (const auto& tile : profile.tiles) {
      for (const auto& s : tile.samples) (void)profile.steps.at(s.step);  // every index is in the table
    }
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
