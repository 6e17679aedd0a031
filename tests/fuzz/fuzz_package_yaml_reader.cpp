// libFuzzer target: any text through the YAML package reader (fuzz_package_reader takes
// both forms; this one spends all its time on YAML). A Package or an InputError are both
// fine; anything else is a bug. Whatever was read must also write in both forms.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/package_io.hpp"
#include "io/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lockstep::arch::Package package =
        lockstep::arch::parse_package_yaml(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
    (void)lockstep::arch::package_to_capnp_bytes(package);
    (void)lockstep::arch::package_to_yaml(package);
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
