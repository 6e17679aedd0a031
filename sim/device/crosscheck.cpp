// Comparing a simulated result folder with a device's: payloads, error statistics, verdict.
#include "sim/device/crosscheck.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "io/errors.hpp"

namespace lockstep::replay {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string bytes_text(const std::optional<uint64_t>& bytes) {
  return bytes ? std::to_string(*bytes) + " bytes" : std::string("missing");
}

// Runs that did not finish, and programs that differ.
void check_runs(const Crosscheck& c, std::vector<std::string>& failures) {
  if (!c.simulated.package_digest.empty() && !c.device.package_digest.empty() &&
      c.simulated.package_digest != c.device.package_digest) {
    throw InputError(c.device_dir + ": package digest " + c.device.package_digest + " differs from the simulated " +
                     c.simulated.package_digest + " (" + c.simulated_dir + "): they ran different packages");
  }
  if (c.simulated.invocations != c.device.invocations) {
    throw InputError(c.device_dir + ": " + std::to_string(c.device.invocations) +
                     " invocation(s), but the simulated run (" + c.simulated_dir + ") had " +
                     std::to_string(c.simulated.invocations) + ": run both with the same invocation count");
  }
  for (const auto* r : {&c.simulated, &c.device}) {
    if (r->status == "ok") continue;
    const std::string& dir = r == &c.simulated ? c.simulated_dir : c.device_dir;
    failures.push_back(dir + ": the run failed (runner " + r->runner + ")" +
                       (r->detail.empty() ? "" : ": " + r->detail));
  }
}

// Rows on one side only, and rows whose |error| passes their bound.
void check_rows(const Crosscheck& c, std::vector<std::string>& failures) {
  for (const auto& row : c.rows) {
    if (!row.simulated || !row.device) {
      failures.push_back(row.describe() + ": only in the " + (row.simulated ? "simulated" : "device") + " profile");
      continue;
    }
    const std::optional<double>& bound = row.kind == RowKind::Phase    ? c.thresholds.phase_percent
                                         : row.kind == RowKind::Kernel ? c.thresholds.kernel_percent
                                                                       : c.thresholds.total_percent;
    const char* option = row.kind == RowKind::Phase    ? "--max-phase-error"
                         : row.kind == RowKind::Kernel ? "--max-kernel-error"
                                                       : "--max-total-error";
    const double error = row.error_percent();
    if (bound && !(std::fabs(error) <= *bound)) {
      failures.push_back(row.describe() + ": simulated " + std::to_string(*row.simulated) + " cycles, device " +
                         std::to_string(*row.device) + ", error " + percent_text(error) + "% passes " + option + " " +
                         percent_text(*bound) + "%");
    }
  }
}

}  // namespace

bool OutputComparison::equal() const {
  return simulated_bytes && device_bytes && *simulated_bytes == *device_bytes && !first_difference;
}

std::string OutputComparison::describe() const {
  const std::string what = "output '" + name + "'";
  if (!simulated_bytes || !device_bytes) {
    return what + ": only in the " + (simulated_bytes ? "simulated" : "device") + " result";
  }
  if (equal()) return what + ": equal (" + bytes_text(simulated_bytes) + ")";
  std::string text = what + ":";
  if (*simulated_bytes != *device_bytes) {
    text += " sizes differ (simulated " + bytes_text(simulated_bytes) + ", device " + bytes_text(device_bytes) + ")";
  }
  if (first_difference) {
    text +=
        std::string(text.back() == ':' ? "" : ";") + " first difference at byte " + std::to_string(*first_difference);
  }
  return text;
}

std::vector<OutputComparison> compare_outputs(const DeviceResult& simulated, const DeviceResult& device) {
  std::map<std::string, std::pair<const DeviceOutput*, const DeviceOutput*>> by_name;
  for (const auto& o : simulated.outputs) by_name[o.name].first = &o;
  for (const auto& o : device.outputs) by_name[o.name].second = &o;
  std::vector<OutputComparison> comparisons;
  for (const auto& [name, pair] : by_name) {
    OutputComparison c;
    c.name = name;
    const auto [sim, dev] = pair;
    if (sim) c.simulated_bytes = sim->bytes.size();
    if (dev) c.device_bytes = dev->bytes.size();
    if (sim && dev) {
      const size_t common = std::min(sim->bytes.size(), dev->bytes.size());
      const auto mismatch = std::mismatch(sim->bytes.begin(), sim->bytes.begin() + common, dev->bytes.begin());
      const size_t at = static_cast<size_t>(mismatch.first - sim->bytes.begin());
      if (at < common)
        c.first_difference = at;
      else if (sim->bytes.size() != dev->bytes.size())
        c.first_difference = common;
    }
    comparisons.push_back(std::move(c));
  }
  return comparisons;
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  if (n < 2 || y.size() != n) return kNaN;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= double(n), my /= double(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (!(sxx > 0) || !(syy > 0)) return kNaN;
  return sxy / std::sqrt(sxx * syy);
}

ErrorStatistics error_statistics(const std::vector<CycleRow>& rows) {
  ErrorStatistics s;
  double absolute = 0;
  std::vector<double> x, y, log_x, log_y;
  for (const auto& row : rows) {
    if (row.kind == RowKind::Total || !row.simulated || !row.device) continue;
    const double error = row.error_percent();
    if (!std::isfinite(error)) continue;
    ++s.rows;
    absolute += std::fabs(error);
    x.push_back(static_cast<double>(*row.simulated));
    y.push_back(static_cast<double>(*row.device));
    if (*row.simulated > 0 && *row.device > 0) {
      log_x.push_back(std::log10(x.back()));
      log_y.push_back(std::log10(y.back()));
    }
  }
  s.mape_percent = s.rows == 0 ? kNaN : absolute / double(s.rows);
  s.pearson = pearson(x, y);
  s.pearson_log = pearson(log_x, log_y);
  return s;
}

Crosscheck crosscheck(const LoadedResult& simulated, const LoadedResult& device, const Thresholds& thresholds) {
  Crosscheck c;
  c.simulated_dir = simulated.dir;
  c.device_dir = device.dir;
  c.simulated = simulated.result;
  c.device = device.result;
  c.thresholds = thresholds;
  check_runs(c, c.failures);
  c.outputs = compare_outputs(simulated.result, device.result);
  for (const auto& o : c.outputs) {
    if (!o.equal()) c.failures.push_back(o.describe());
  }
  for (auto* r : {&c.simulated, &c.device}) {
    for (auto& o : r->outputs) o.bytes = {};
  }
  c.rows = cycle_rows(simulated.profile, device.profile);
  c.statistics = error_statistics(c.rows);
  check_rows(c, c.failures);
  return c;
}

}  // namespace lockstep::replay
