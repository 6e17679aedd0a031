#include "cli/run_reference.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

#include "io/errors.hpp"
#include "numerics/fp16.hpp"
#include "workload/lower.hpp"
#include "workload/model_weights.hpp"
#include "workload/weights_file.hpp"
#include "workload/workload.hpp"

namespace lockstep::cli {
// File-local, named so that the CLI's unity batches (cli/CMakeLists.txt) keep files apart.
namespace run_reference_local {}
using namespace run_reference_local;
namespace run_reference_local {

const arch::Binding& find_binding(const arch::Package& package, const std::string& name, arch::BindingKind kind) {
  for (const arch::Binding& b : package.bindings) {
    if (b.name == name && b.kind == kind) return b;
  }
  throw InputError("the package has no " + std::string(kind == arch::BindingKind::Input ? "input" : "output") +
                   " binding `" + name + "`");
}

// The binding's bytes as the package loads them: each slice inside a bytes segment.
std::vector<uint8_t> initial_binding_bytes(const arch::Package& package, const arch::Binding& b) {
  std::vector<uint8_t> bytes;
  for (const arch::Slice& s : b.slices) {
    const uint8_t* at = arch::initial_bytes(package, s.tile, s.address, s.bytes);
    if (at == nullptr) {
      throw InputError("the package holds no initial values of input `" + b.name + "` (tile " + std::to_string(s.tile) +
                       "); give them with --input");
    }
    bytes.insert(bytes.end(), at, at + s.bytes);
  }
  return bytes;
}

// The FP16 input image the run uses, decoded to FP32.
std::vector<float> run_patches(const arch::Package& package, const workload::Workload& w,
                               const std::map<std::string, std::vector<uint8_t>>& inputs) {
  const arch::Binding& b = find_binding(package, "patches", arch::BindingKind::Input);
  const auto given = inputs.find(b.name);
  const std::vector<uint8_t> bytes = given != inputs.end() ? given->second : initial_binding_bytes(package, b);
  const size_t values = size_t{w.rows()} * w.patch_values();
  if (bytes.size() != 2 * values) {
    throw InputError("input `patches` holds " + std::to_string(bytes.size()) + " bytes, the workload's image " +
                     std::to_string(2 * values) + " (FP16 [" + std::to_string(w.rows()) + ", " +
                     std::to_string(w.patch_values()) + "])");
  }
  std::vector<float> patches(values);
  for (size_t i = 0; i < values; ++i) {
    patches[i] = arch::fp16_to_float(static_cast<uint16_t>(bytes[2 * i] | bytes[2 * i + 1] << 8));
  }
  return patches;
}

// The `output` binding must hold the reference's FP32 [rows, hidden], checked before the run.
void check_output_binding(const arch::Package& package, const workload::Workload& w) {
  const arch::Binding& b = find_binding(package, "output", arch::BindingKind::Output);
  uint64_t bytes = 0;
  for (const arch::Slice& s : b.slices) bytes += s.bytes;
  const uint64_t want = uint64_t{4} * w.rows() * w.hidden;
  if (bytes != want) {
    throw InputError("output `output` holds " + std::to_string(bytes) + " bytes, the reference " +
                     std::to_string(want) + " (FP32 [" + std::to_string(w.rows()) + ", " + std::to_string(w.hidden) +
                     "])");
  }
}

}  // namespace run_reference_local

std::vector<float> package_reference(const arch::Package& package, const arch::MachineDescription& machine,
                                     const std::string& file, const std::map<std::string, std::vector<uint8_t>>& inputs,
                                     const std::string& weights_file) {
  if (package.workload.empty()) {
    throw InputError(file + ": --reference needs a package made by `lockstep build` (no workload recorded)");
  }
  try {
    const workload::Workload w = workload::parse_workload_yaml(package.workload, "workload");
    check_output_binding(package, w);
    if (!weights_file.empty()) {
      // The weights as the user gave them, before FP8 quantisation (and its saturation).
      return workload::reference_forward(w, workload::load_weights_file(weights_file, w),
                                         run_patches(package, w, inputs));
    }
    const auto t0 = std::chrono::steady_clock::now();
    const workload::Lowered lowered = workload::lower_workload(w, machine);
    const workload::DeviceWeights device = workload::read_device_weights(package, lowered.weights, w);
    const auto t1 = std::chrono::steady_clock::now();
    std::vector<float> out = workload::reference_forward(w, device, run_patches(package, w, inputs));
    spdlog::debug(
        "reference: weights read in {:.2f} s, forward pass (each layer's weights dequantised on the way) {:.2f} s",
        std::chrono::duration<double>(t1 - t0).count(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count());
    return out;
  } catch (const InputError& e) {
    throw InputError(file + ": --reference: " + e.what());
  }
}

workload::Agreement compare_output(const std::map<std::string, std::vector<uint8_t>>& outputs,
                                   const std::vector<float>& reference) {
  const auto found = outputs.find("output");
  if (found == outputs.end() || found->second.size() != reference.size() * sizeof(float)) {
    throw std::logic_error("--reference: the run gave no `output` of " + std::to_string(reference.size()) +
                           " FP32 values");
  }
  std::vector<float> simulated(reference.size());
  std::memcpy(simulated.data(), found->second.data(), found->second.size());
  return workload::compare(simulated, reference);
}

}  // namespace lockstep::cli
