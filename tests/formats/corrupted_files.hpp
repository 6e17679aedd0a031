#pragma once
// A reader held against corrupted copies of a valid file (the .npy and safetensors tests): a
// fixed-seed loop of truncations and overwritten bytes, each of which must read or fail with one
// line naming the file, allocating no more than a bound. Allocations are tracked by replacing
// operator new in this test binary (corrupted_files.cpp), except under a sanitizer.
#include <cstddef>
#include <functional>
#include <string>

namespace lockstep::arch {

struct CorruptionOutcomes {
  int reads = 0;     // corrupted copies that still read
  int refusals = 0;  // ... and those refused with an InputError
};

// 20,000 copies of `valid`, a quarter each: cut short; one to three bytes overwritten among the
// first `header_bytes`; the same anywhere; both. `read(bytes, name)` parses them as file `name`.
// Every refusal must start with "NAME: " and be one line, every other exception fails, and no
// single allocation may exceed `times` x the copy's size + `slack` bytes.
void read_corrupted_copies(const std::string& valid, size_t header_bytes, const std::string& name, size_t times,
                           size_t slack, const std::function<void(const std::string&, const std::string&)>& read,
                           CorruptionOutcomes& outcomes);

}  // namespace lockstep::arch
