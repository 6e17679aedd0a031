#include "profile/profile_chrome.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace lockstep::replay {
namespace {

std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Picoseconds at the clock, rounded down; a sample's duration is the difference of its
// rounded ends, so ts + dur of one sample is exactly the next sample's ts.
uint64_t picoseconds(uint64_t cycles, uint64_t clock_hz) {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(cycles) * 1'000'000'000'000u / clock_hz);
}

// Microseconds with picosecond digits, printed the same on every machine.
std::string microseconds(uint64_t ps) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%llu.%06llu", static_cast<unsigned long long>(ps / 1'000'000),
                static_cast<unsigned long long>(ps % 1'000'000));
  return buffer;
}

std::string event_name(const arch::ProfileStep& step) {
  if (step.kind == arch::ProfileStepKind::Exchange || (step.phase & arch::kExchangePhaseBit) != 0) {
    return step.kernel + " " +
           (step.phase_label.empty() ? std::to_string(step.phase & ~arch::kExchangePhaseBit) : step.phase_label);
  }
  return step.kernel.empty() ? "(no kernel)" : step.kernel;
}

std::string event_args(const arch::ProfileStep& step, const arch::CycleSample& s) {
  std::string args = "{\"cycles\":" + std::to_string(s.end_cycle - s.start_cycle) +
                     ",\"start_cycle\":" + std::to_string(s.start_cycle) + ",\"epoch\":" + std::to_string(s.epoch) +
                     ",\"invocation\":" + std::to_string(s.invocation) + ",\"phase\":" + std::to_string(step.phase);
  if (!step.operation.empty()) args += ",\"operation\":" + quoted(step.operation);
  if (!step.phase_label.empty()) args += ",\"phase_label\":" + quoted(step.phase_label);
  for (const auto& m : step.metadata) args += "," + quoted(m.name) + ":" + quoted(m.value);
  if (step.kind == arch::ProfileStepKind::Exchange) {
    args += ",\"event_cycles\":" + std::to_string(step.event_cycles) + ",\"activities\":\"";
    for (size_t i = 0; i < step.activities.size(); ++i) {
      const auto& a = step.activities[i];
      args += (i ? " " : "") + std::string(arch::activity_kind_name(a.kind)) + "[" + std::to_string(a.start_cycle) +
              "," + std::to_string(a.end_cycle) + ")";
    }
    args += "\"";
  }
  return args + "}";
}

}  // namespace

void write_chrome_trace(const arch::Profile& profile, const ChromeTraceOptions& options, std::ostream& out) {
  const auto wanted = [&](const arch::TileProfile& tile) {
    return !options.tiles || options.tiles->count(tile.physical_tile) > 0;
  };
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":" << quoted(profile.producer)
      << ",\"source\":" << quoted(profile.source) << ",\"machine\":" << quoted(profile.machine_name)
      << ",\"clock_hz\":" << profile.clock_hz << "},\"traceEvents\":[\n";
  out << "{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":"
      << quoted(profile.source.empty() ? "profile" : profile.source) << "}}";
  for (const auto& tile : profile.tiles) {
    if (!wanted(tile)) continue;
    out << ",\n{\"ph\":\"M\",\"pid\":0,\"tid\":" << tile.physical_tile
        << ",\"name\":\"thread_name\",\"args\":{\"name\":\"tile " << tile.physical_tile << " (logical "
        << tile.logical_tile << ")\"}}";
    out << ",\n{\"ph\":\"M\",\"pid\":0,\"tid\":" << tile.physical_tile
        << ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" << tile.physical_tile << "}}";
  }
  for (const auto& tile : profile.tiles) {
    if (!wanted(tile)) continue;
    for (const auto& s : tile.samples) {
      if (options.invocation && s.invocation != *options.invocation) continue;
      const arch::ProfileStep& step = profile.steps.at(s.step);
      const uint64_t start = picoseconds(s.start_cycle, profile.clock_hz);
      const uint64_t end = picoseconds(s.end_cycle, profile.clock_hz);
      out << ",\n{\"ph\":\"X\",\"pid\":0,\"tid\":" << tile.physical_tile << ",\"name\":" << quoted(event_name(step))
          << ",\"cat\":\"" << arch::profile_step_kind_name(step.kind) << "\",\"ts\":" << microseconds(start)
          << ",\"dur\":" << microseconds(end - start) << ",\"args\":" << event_args(step, s) << "}";
    }
  }
  out << "\n]}\n";
}

}  // namespace lockstep::replay
