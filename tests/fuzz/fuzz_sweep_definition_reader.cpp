// libFuzzer target: any text through the sweep-definition reader (results/sweep_definition.cpp,
// in the SystemC-free lockstep_results). A SweepDefinition or an InputError are both
// fine; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/errors.hpp"
#include "results/sweep_definition.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lockstep::replay::SweepDefinition sweep =
        lockstep::replay::parse_sweep_definition(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
    (void)sweep.reference.name();
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
