// libFuzzer target: any bytes through the capture reader (both forms, picked by content;
// the corpus holds Cap'n Proto captures). A Capture or an InputError are both fine;
// anything else (a crash, another exception, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>

#include "formats/capture.hpp"
#include "io/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lockstep::arch::Capture capture = lockstep::arch::read_capture_from_bytes(data, size, "fuzz");
    (void)lockstep::arch::capture_stats(capture);
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
