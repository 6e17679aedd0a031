// libFuzzer target: any text through the YAML capture reader. A Capture or an InputError
// are both fine; anything else is a bug. What was read must also write as canonical YAML.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/capture.hpp"
#include "io/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lockstep::arch::Capture capture =
        lockstep::arch::parse_capture_yaml(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
    (void)lockstep::arch::capture_to_yaml(capture);
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
