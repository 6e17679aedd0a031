// libFuzzer target: any bytes through the safetensors reader. Every tensor it returns must lie
// inside the data it was given (AddressSanitizer checks each byte read here); an InputError is
// fine; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/safetensors.hpp"
#include "io/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lockstep::arch::SafeTensors file =
        lockstep::arch::parse_safetensors(std::string(reinterpret_cast<const char*>(data), size), "fuzz.safetensors");
    unsigned sum = 0;
    for (const auto& [name, tensor] : file.tensors()) {
      if (tensor.bytes.size() != tensor.end - tensor.begin) __builtin_trap();
      for (uint8_t b : tensor.bytes) sum += b;
    }
    (void)sum;
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
