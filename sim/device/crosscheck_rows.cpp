// The cycle rows of a cross-check: exchange phases, kernels and the total of two profiles.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>

#include "sim/device/crosscheck.hpp"

namespace lockstep::replay {

namespace {

using PhaseKey = std::tuple<uint32_t, uint32_t, uint32_t>;  // invocation, epoch, phase id

struct PhaseSpan {
  uint64_t max_start = 0;
  uint64_t max_end = 0;
  std::string label;
};

// Per exchange phase execution, the latest start and the latest end over its tiles.
std::map<PhaseKey, PhaseSpan> phase_spans(const arch::Profile& profile) {
  std::map<PhaseKey, PhaseSpan> spans;
  for (const auto& tile : profile.tiles) {
    for (const auto& sample : tile.samples) {
      const arch::ProfileStep& step = profile.steps.at(sample.step);
      if (step.kind != arch::ProfileStepKind::Exchange || (step.phase & arch::kExchangePhaseBit) == 0) continue;
      PhaseSpan& span = spans[{sample.invocation, sample.epoch, step.phase & ~arch::kExchangePhaseBit}];
      span.max_start = std::max(span.max_start, sample.start_cycle);
      span.max_end = std::max(span.max_end, sample.end_cycle);
      if (span.label.empty()) span.label = step.phase_label;
    }
  }
  return spans;
}

// Per kernel, the summed durations of its compute samples over every tile.
std::map<std::string, uint64_t> kernel_cycles(const arch::Profile& profile) {
  std::map<std::string, uint64_t> kernels;
  for (const auto& tile : profile.tiles) {
    for (const auto& sample : tile.samples) {
      const arch::ProfileStep& step = profile.steps.at(sample.step);
      if (step.kind != arch::ProfileStepKind::Compute) continue;
      kernels[step.kernel.empty() ? "(no kernel)" : step.kernel] += sample.end_cycle - sample.start_cycle;
    }
  }
  return kernels;
}

uint64_t total_cycles(const arch::Profile& profile) {
  if (profile.total_cycles > 0) return profile.total_cycles;
  uint64_t end = 0;
  for (const auto& tile : profile.tiles) {
    for (const auto& sample : tile.samples) end = std::max(end, sample.end_cycle);
  }
  return end;
}

}  // namespace

const char* row_kind_name(RowKind kind) {
  switch (kind) {
    case RowKind::Phase:
      return "phase";
    case RowKind::Kernel:
      return "kernel";
    case RowKind::Total:
      return "total";
  }
  return "?";
}

double CycleRow::error_percent() const {
  if (!simulated || !device) return std::numeric_limits<double>::quiet_NaN();
  if (*device == 0) return *simulated == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return (static_cast<double>(*simulated) - static_cast<double>(*device)) / static_cast<double>(*device) * 100.0;
}

std::string CycleRow::describe() const {
  switch (kind) {
    case RowKind::Phase:
      return name + (label.empty() ? "" : " (" + label + ")") + " epoch " + std::to_string(epoch) + " invocation " +
             std::to_string(invocation);
    case RowKind::Kernel:
      return "kernel " + name;
    case RowKind::Total:
      return "total";
  }
  return name;
}

std::vector<CycleRow> cycle_rows(const arch::Profile& simulated, const arch::Profile& device) {
  std::vector<CycleRow> rows;
  std::map<PhaseKey, CycleRow> phases;
  for (const auto* profile : {&simulated, &device}) {
    for (const auto& [key, span] : phase_spans(*profile)) {
      CycleRow& row = phases[key];
      row.kind = RowKind::Phase;
      std::tie(row.invocation, row.epoch, row.phase) = key;
      row.name = "phase " + std::to_string(row.phase);
      if (row.label.empty()) row.label = span.label;
      (profile == &simulated ? row.simulated : row.device) = span.max_end - span.max_start;
    }
  }
  for (auto& [key, row] : phases) rows.push_back(std::move(row));
  std::map<std::string, CycleRow> kernels;
  for (const auto* profile : {&simulated, &device}) {
    for (const auto& [name, cycles] : kernel_cycles(*profile)) {
      CycleRow& row = kernels[name];
      row.kind = RowKind::Kernel;
      row.name = name;
      (profile == &simulated ? row.simulated : row.device) = cycles;
    }
  }
  for (auto& [name, row] : kernels) rows.push_back(std::move(row));
  CycleRow total;
  total.kind = RowKind::Total;
  total.name = "total";
  total.simulated = total_cycles(simulated);
  total.device = total_cycles(device);
  rows.push_back(std::move(total));
  return rows;
}

std::string percent_text(double percent) {
  if (std::isnan(percent)) return "";
  if (std::isinf(percent)) return percent > 0 ? "inf" : "-inf";
  char text[48];
  std::snprintf(text, sizeof text, "%.4f", percent);
  return text;
}

}  // namespace lockstep::replay
