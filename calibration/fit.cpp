#include "calibration/fit.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "arch/kernel_costs.hpp"
#include "arch/kernel_signatures.hpp"
#include "io/errors.hpp"
#include "model/kernel_registry.hpp"

namespace lockstep::calibration {
namespace {

struct Sample {
  std::vector<double> terms;
  double cycles = 0;  // per call
};

struct KernelSamples {
  const model::KernelDefinition* kernel = nullptr;
  std::vector<Sample> samples;
  std::set<std::vector<double>> shapes;  // distinct terms
};

// "gelu(1024)" or "reduce_sum(8, 8, 32, 16)" -> name and scalars; nullopt when not that form.
std::optional<std::pair<std::string, std::vector<int64_t>>> parse_kernel_spec(const std::string& spec) {
  const size_t open = spec.find('(');
  if (open == std::string::npos || open == 0 || spec.back() != ')') return std::nullopt;
  std::pair<std::string, std::vector<int64_t>> out{spec.substr(0, open), {}};
  const std::string inside = spec.substr(open + 1, spec.size() - open - 2);
  size_t at = 0;
  while (at < inside.size()) {
    while (at < inside.size() && inside[at] == ' ') ++at;
    size_t used = 0;
    try {
      out.second.push_back(std::stoll(inside.substr(at), &used));
    } catch (const std::exception&) {
      return std::nullopt;
    }
    at += used;
    while (at < inside.size() && inside[at] == ' ') ++at;
    if (at < inside.size() && inside[at++] != ',') return std::nullopt;
  }
  return out;
}

// A count from the step's metadata; nullopt when the step has none.
std::optional<uint64_t> metadata_count(const arch::ProfileStep& step, const std::string& name) {
  const std::string* value = arch::find_metadata(step, name);
  if (value == nullptr) return std::nullopt;
  try {
    return std::stoull(*value);
  } catch (const std::exception&) {
    throw InputError("profile step '" + step.kernel + "': metadata " + name + " = '" + *value + "' is not a count");
  }
}

// Least squares for the first `free` parameters, the rest held at `held_values`; nullopt
// when the samples do not determine them (a pivot below 1e-9 of the largest diagonal).
std::optional<std::vector<double>> solve(const std::vector<Sample>& samples, size_t free,
                                         const std::vector<double>& held_values) {
  std::vector<std::vector<long double>> a(free, std::vector<long double>(free + 1, 0));
  for (const Sample& s : samples) {
    long double rest = s.cycles;
    for (size_t j = free; j < held_values.size(); ++j) rest -= static_cast<long double>(held_values[j]) * s.terms[j];
    for (size_t i = 0; i < free; ++i) {
      for (size_t j = 0; j < free; ++j) a[i][j] += static_cast<long double>(s.terms[i]) * s.terms[j];
      a[i][free] += static_cast<long double>(s.terms[i]) * rest;
    }
  }
  long double scale = 0;
  for (size_t i = 0; i < free; ++i) scale = std::max(scale, std::fabs(a[i][i]));
  if (scale == 0) return std::nullopt;
  for (size_t c = 0; c < free; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < free; ++r) {
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    }
    if (std::fabs(a[pivot][c]) <= 1e-9L * scale) return std::nullopt;
    std::swap(a[c], a[pivot]);
    for (size_t r = 0; r < free; ++r) {
      if (r == c) continue;
      const long double f = a[r][c] / a[c][c];
      for (size_t k = c; k <= free; ++k) a[r][k] -= f * a[c][k];
    }
  }
  std::vector<double> out = held_values;
  for (size_t i = 0; i < free; ++i) out[i] = static_cast<double>(a[i][free] / a[i][i]);
  return out;
}

void residuals(const std::vector<Sample>& samples, const std::vector<double>& parameters, double& rms, double& max) {
  double squares = 0;
  max = 0;
  for (const Sample& s : samples) {
    // What the model would charge (arch::cost_cycles, as `run --costs` does) against the sample.
    const double e = static_cast<double>(arch::cost_cycles(parameters, s.terms)) - s.cycles;
    squares += e * e;
    max = std::max(max, std::fabs(e));
  }
  rms = samples.empty() ? 0 : std::sqrt(squares / static_cast<double>(samples.size()));
}

KernelFit fit_kernel(const std::string& name, const KernelSamples& in) {
  const model::CostModel& cost = *in.kernel->cost;
  KernelFit fit;
  fit.kernel = name;
  fit.samples = in.samples.size();
  fit.shapes = in.shapes.size();
  fit.parameters = cost.parameters;
  fit.defaults = cost.defaults;
  fit.fitted = cost.defaults;
  fit.held.assign(cost.parameters.size(), true);
  for (size_t free = cost.parameters.size(); free > 0; --free) {
    if (auto solved = solve(in.samples, free, cost.defaults)) {
      fit.fitted = *solved;
      for (size_t i = 0; i < free; ++i) fit.held[i] = false;
      break;
    }
  }
  // An exact fit shows as exact: fitted values within 1e-9 of an integer are that integer.
  for (double& p : fit.fitted) {
    if (std::fabs(p - std::round(p)) < 1e-9 * std::max(1.0, std::fabs(p))) p = std::round(p);
  }
  residuals(in.samples, fit.defaults, fit.rms_before, fit.max_before);
  residuals(in.samples, fit.fitted, fit.rms_after, fit.max_after);
  for (const Sample& s : in.samples) fit.mean_cycles += s.cycles;
  if (!in.samples.empty()) fit.mean_cycles /= static_cast<double>(in.samples.size());
  return fit;
}

}  // namespace

Calibration calibrate(const std::vector<arch::Profile>& profiles, const std::vector<std::string>& names,
                      const arch::MachineDescription& machine) {
  Calibration out;
  std::map<std::string, KernelSamples> by_kernel;
  for (size_t p = 0; p < profiles.size(); ++p) {
    const arch::Profile& profile = profiles[p];
    if (p > 0 && profile.clock_hz != out.clock_hz) {
      throw InputError(names[p] + ": clockHz " + std::to_string(profile.clock_hz) + " differs from " + names[0] +
                       "'s " + std::to_string(static_cast<uint64_t>(out.clock_hz)) +
                       " (IPU21-DEVICE.md 15.5: calibrated profiles share one clock)");
    }
    out.clock_hz = static_cast<double>(profile.clock_hz);
    for (const arch::TileProfile& tile : profile.tiles) {
      for (const arch::CycleSample& sample : tile.samples) {
        const arch::ProfileStep& step = profile.steps.at(sample.step);
        if (step.kind != arch::ProfileStepKind::Compute || step.kernel.empty()) continue;
        const std::string* spec = arch::find_metadata(step, "kernelSpec");
        const auto parsed = spec ? parse_kernel_spec(*spec) : std::nullopt;
        const model::KernelDefinition* kernel = parsed ? model::find_kernel(parsed->first) : nullptr;
        if (kernel == nullptr || !kernel->cost) {
          if (step.kernel != "repeat" && step.kernel != "patch") ++out.skipped[step.kernel];
          continue;
        }
        const arch::KernelSignature* signature = arch::find_kernel_signature(parsed->first);
        const std::string problem =
            signature == nullptr ? "" : signature->check_scalars(parsed->second, machine.sram_bytes());
        if (signature != nullptr && (parsed->second.size() != signature->scalars || !problem.empty())) {
          throw InputError(
              names[p] + ": tile " + std::to_string(tile.physical_tile) + ": kernelSpec '" + *spec +
              "': " + (problem.empty() ? "takes " + std::to_string(signature->scalars) + " scalars" : problem));
        }
        const uint64_t calls = std::max<uint64_t>(1, metadata_count(step, "invocations").value_or(1));
        const std::optional<uint64_t> recorded_call_cycles = metadata_count(step, "callCycles");
        if (!recorded_call_cycles) ++out.without_call_cycles;
        const uint64_t call_cycles = recorded_call_cycles.value_or(0);
        const uint64_t duration = sample.end_cycle >= sample.start_cycle ? sample.end_cycle - sample.start_cycle : 0;
        KernelSamples& into = by_kernel[parsed->first];
        into.kernel = kernel;
        into.samples.push_back(
            {kernel->cost->terms(parsed->second, machine),
             (static_cast<double>(duration) - static_cast<double>(call_cycles)) / static_cast<double>(calls)});
        into.shapes.insert(into.samples.back().terms);
      }
    }
  }
  for (const auto& [name, samples] : by_kernel) out.kernels.push_back(fit_kernel(name, samples));
  return out;
}

std::map<std::string, std::vector<double>> fitted_costs(const Calibration& calibration) {
  std::map<std::string, std::vector<double>> costs;
  for (const KernelFit& fit : calibration.kernels) costs[fit.kernel] = fit.fitted;
  return costs;
}

}  // namespace lockstep::calibration
