// libFuzzer target: any bytes through the .npy reader. An array whose data holds exactly its
// shape's elements, or an InputError, are both fine; anything else is a bug (the header's
// counts are claims until checked against the file's length).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "formats/npy.hpp"
#include "io/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lockstep::arch::NpyArray array =
        lockstep::arch::parse_npy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.npy");
    const auto elements = lockstep::arch::shape_element_count(array.shape);
    if (!elements) __builtin_trap();
    if (*elements != 0 && array.data.size() % *elements != 0) __builtin_trap();
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
