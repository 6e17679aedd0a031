#include "calibration/costs_file.hpp"

#include <cmath>
#include <cstdio>

#include "io/yaml_reader.hpp"
#include "model/kernel_registry.hpp"

namespace lockstep::calibration {
namespace {

constexpr const char* kFormat = "lockstep-costs";
constexpr uint64_t kVersion = 1;

std::string parameter_list(const model::CostModel& cost) {
  std::string out;
  for (const std::string& p : cost.parameters) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

KernelCosts parse_kernel_costs(const std::string& text, const std::string& file_name) {
  arch::YamlMap top(arch::parse_yaml_text(text, file_name), file_name, "");
  if (const std::string format = top.string("format"); format != kFormat) {
    arch::yaml_fail(file_name, top.node()["format"], "format",
                    "expected '" + std::string(kFormat) + "', got '" + format + "'");
  }
  if (const uint64_t version = top.unsigned_value("version", UINT32_MAX); version != kVersion) {
    arch::yaml_fail(file_name, top.node()["version"], "version",
                    "this Lockstep reads version " + std::to_string(kVersion) + ", got " + std::to_string(version));
  }
  if (top.has("clock_hz")) top.real("clock_hz");  // recorded for the reader; the machine's clock rules
  KernelCosts costs;
  arch::YamlMap kernels = top.map("kernels");
  for (const auto& entry : kernels.node()) {
    const std::string name = entry.first.as<std::string>();
    const model::KernelDefinition* kernel = model::find_kernel(name);
    if (kernel == nullptr || !kernel->cost) {
      arch::yaml_fail(file_name, entry.first, kernels.key_path(name),
                      kernel == nullptr ? "no kernel of that name" : "the kernel has no cost model to set");
    }
    arch::YamlMap parameters = kernels.map(name);
    std::vector<double>& values = costs[name];
    for (const std::string& parameter : kernel->cost->parameters) {
      if (!parameters.has(parameter)) {
        arch::yaml_fail(file_name, parameters.node(), parameters.key_path(parameter),
                        "missing (" + name + " takes " + parameter_list(*kernel->cost) + ")");
      }
      const double value = parameters.real(parameter);
      if (!std::isfinite(value) || value < 0) {
        arch::yaml_fail(file_name, parameters.node()[parameter], parameters.key_path(parameter),
                        "expected a finite number at least 0, got " + cost_text(value));
      }
      values.push_back(value);
    }
    parameters.finish();
  }
  top.finish();
  return costs;
}

std::string cost_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

KernelCosts read_kernel_costs(const std::string& path) { return parse_kernel_costs(arch::read_text_file(path), path); }

std::string kernel_costs_text(const Calibration& calibration) {
  std::string out =
      "# Kernel cost parameters fitted by `lockstep calibrate` (docs/calibration.md);\n"
      "# `lockstep run PACKAGE --costs FILE` uses them.\n";
  out += "format: " + std::string(kFormat) + "\nversion: " + std::to_string(kVersion) + "\n";
  out += "clock_hz: " + cost_text(calibration.clock_hz) + "\nkernels:\n";
  if (calibration.kernels.empty()) return out.substr(0, out.size() - 1) + " {}\n";
  for (const KernelFit& fit : calibration.kernels) {
    out += "  # " + std::to_string(fit.samples) + " samples, " + std::to_string(fit.shapes) +
           " shapes; residual per call rms " + cost_text(fit.rms_after) + ", max " + cost_text(fit.max_after) +
           " cycles";
    std::string held;
    for (size_t i = 0; i < fit.parameters.size(); ++i) {
      if (fit.held[i]) held += (held.empty() ? "" : ", ") + fit.parameters[i];
    }
    out += held.empty() ? "\n" : "; held at defaults: " + held + "\n";
    out += "  " + fit.kernel + ":\n";
    for (size_t i = 0; i < fit.parameters.size(); ++i)
      out += "    " + fit.parameters[i] + ": " + cost_text(fit.fitted[i]) + "\n";
  }
  return out;
}

}  // namespace lockstep::calibration
