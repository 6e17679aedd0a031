// libFuzzer target: any text through the machine description reader. A machine or an
// InputError are both fine; anything else is a bug. (A `base:` key loads another machine,
// embedded or from disk, as the reader always does.)
#include <cstddef>
#include <cstdint>
#include <string>

#include "arch/machine.hpp"
#include "io/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lockstep::arch::MachineDescription machine =
        lockstep::arch::parse_machine_yaml(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
    (void)lockstep::arch::machine_to_yaml(machine);
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
