// libFuzzer target: any bytes through the device image (.ipuexe) reader. An Application or
// an InputError are both fine; anything else (a crash, another exception, a sanitizer
// report) is a bug. What reads must also pass its own validation and write back.
#include <cstddef>
#include <cstdint>

#include "io/errors.hpp"
#include "sim/device/application.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lockstep::arch::Application app = lockstep::arch::parse_application(data, size, "fuzz");
    lockstep::arch::validate_application(app, "fuzz");
    (void)lockstep::arch::application_bytes(app);
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
