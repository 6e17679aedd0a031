// libFuzzer target: any text through the workload reader (workload/workload.cpp). A
// Workload or an InputError are both fine; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/errors.hpp"
#include "workload/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const lockstep::workload::Workload workload =
        lockstep::workload::parse_workload_yaml(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
    (void)workload.rows();
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
