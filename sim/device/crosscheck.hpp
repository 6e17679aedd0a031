#pragma once
// Simulation against the device (docs/device.md, "Cross-check"): two result folders of the
// runner contract, compared. Outputs byte for byte per binding; cycles per exchange phase,
// per kernel and in total, with the error of each row, the mean absolute percentage error
// and the correlation. Plain C++: no simulator involved.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profile/profile.hpp"
#include "sim/device/device_result.hpp"

namespace lockstep::replay {

// One binding's bytes, simulated against device.
struct OutputComparison {
  std::string name;
  std::optional<uint64_t> simulated_bytes;  // absent: the simulated run has no such output
  std::optional<uint64_t> device_bytes;
  std::optional<uint64_t> first_difference;  // byte offset; set when both exist and differ
  bool equal() const;
  std::string describe() const;  // "output 'y': byte 12 differs" and so on; "equal"
};
std::vector<OutputComparison> compare_outputs(const DeviceResult& simulated, const DeviceResult& device);

enum class RowKind : uint8_t { Phase, Kernel, Total };
const char* row_kind_name(RowKind kind);  // "phase", "kernel", "total"

// Cycles of one thing in both runs.
//   phase:  an exchange phase execution, keyed (invocation, epoch, phase id); its cycles are
//           the stack's "measured" span: the latest end minus the latest start over the
//           tiles' exchange samples of that execution (from the last tile's entry).
//   kernel: the sum over every tile of the durations of the compute samples of that kernel.
//   total:  Profile::totalCycles, or the latest sample end when it is 0 (a stack profile).
struct CycleRow {
  RowKind kind = RowKind::Phase;
  std::string name;                               // "phase 3", the kernel's name, "total"
  std::string label;                              // phase rows: the phase label (from the simulated profile when both)
  uint32_t invocation = 0, epoch = 0, phase = 0;  // phase rows
  std::optional<uint64_t> simulated, device;      // absent: not in that profile
  // (simulated - device) / device x 100. Both 0: 0. Device 0, simulated not: +inf.
  // Either side absent: NaN.
  double error_percent() const;
  std::string describe() const;  // "phase 3 (attn.qkv) epoch 0 invocation 0"
};

// Phase rows by (invocation, epoch, phase), kernel rows by name, then the total.
std::vector<CycleRow> cycle_rows(const arch::Profile& simulated, const arch::Profile& device);

// Over the phase and kernel rows present on both sides whose error is finite (device > 0):
// the mean absolute percentage error, and Pearson's correlation of log10 cycles and of the
// plain cycles (rows with a zero on either side are left out of the log one). NaN where
// undefined (no rows; fewer than two, or no spread, for a correlation).
struct ErrorStatistics {
  size_t rows = 0;
  double mape_percent = 0;
  double pearson_log = 0;
  double pearson = 0;
};
ErrorStatistics error_statistics(const std::vector<CycleRow>& rows);
// Pearson's r of two equal-length series; NaN for fewer than two points or no spread.
double pearson(const std::vector<double>& x, const std::vector<double>& y);

// Absent: no bound. Percentages, compared with |error|.
struct Thresholds {
  std::optional<double> total_percent, phase_percent, kernel_percent;
};

struct Crosscheck {
  std::string simulated_dir, device_dir;
  DeviceResult simulated, device;  // result.json of each (outputs' bytes dropped)
  std::vector<OutputComparison> outputs;
  std::vector<CycleRow> rows;
  ErrorStatistics statistics;
  Thresholds thresholds;
  std::vector<std::string> failures;  // one line each: failed runs, payloads, rows, thresholds
  bool passed() const { return failures.empty(); }
};

// Compares two loaded result folders. InputError when both name a package digest and the
// digests differ (they ran different programs).
Crosscheck crosscheck(const LoadedResult& simulated, const LoadedResult& device, const Thresholds& thresholds);

// "-9.0909" (four decimals), "inf", or "" for NaN.
std::string percent_text(double percent);

}  // namespace lockstep::replay
