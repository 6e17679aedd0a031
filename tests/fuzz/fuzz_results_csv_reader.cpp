// libFuzzer target: any text through the results.csv reader (results/results.cpp, compiled in
// with the RFC 4180 scanner of io/csv.cpp). Rows or an InputError are both fine; anything
// else is a bug. Whatever reads must also write back and read again to the same rows.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "io/errors.hpp"
#include "results/results.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto rows =
        lockstep::replay::parse_results_csv(std::string(reinterpret_cast<const char*>(data), size), "fuzz.csv");
    const std::string text = lockstep::replay::results_csv_text(rows);
    if (lockstep::replay::results_csv_text(lockstep::replay::parse_results_csv(text, "again.csv")) != text) {
      std::abort();  // the writer and the reader disagree
    }
  } catch (const lockstep::InputError&) {
  }
  return 0;
}
