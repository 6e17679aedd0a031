// libFuzzer target: any text through the sweep-definition reader (replay/sweep_definition.cpp,
// in the SystemC-free lockstep_replay_config). A SweepDefinition or an InputError are both
// fine; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "arch/errors.hpp"
#include "replay/sweep_definition.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lockstep::replay::SweepDefinition sweep = lockstep::replay::parse_sweep_definition(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
    (void)sweep.reference.name();
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
