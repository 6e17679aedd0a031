// libFuzzer target: any bytes through the package reader (both forms, picked by content).
// A Package or an InputError are both fine; anything else (a crash, another exception, a
// sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>

#include "formats/package_io.hpp"
#include "io/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lockstep::arch::Package package = lockstep::arch::read_package_from_bytes(data, size, "fuzz");
    // Whatever was read must also write in both forms.
    (void)lockstep::arch::package_to_capnp_bytes(package);
    (void)lockstep::arch::package_to_yaml(package);
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
