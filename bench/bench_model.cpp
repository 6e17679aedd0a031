// The whole model, as `lockstep build` and `lockstep run` do it: a workload (default the
// full-size configs/workloads/siglip-so400m.yaml, run from the source tree) built with seeded
// weights and input, one invocation simulated bit-exactly, and the output held against the
// FP32 reference. Prints build and run wall time, peak RSS, simulated cycles (exchange phase
// horizons and everything else; the critical path split into exchange, compute, sync,
// patching and control, compute by kernel) and milliseconds at the machine's clock, cosine and maximum
// absolute error against FP32, and beside them the wall time of the FP32 reference forward
// on this machine (the same GEMM work in plain FP32: the arithmetic limit). With
// LOCKSTEP_BINARY (scripts/bench.sh sets it) and the SigLIP workload, also the commands as a
// user types them: `lockstep build`, `lockstep run` (goal 15 s), `run --reference` (20 s).
//   build/<preset>/bench/bench_model [WORKLOAD]
#include <cblas.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "arch/machine.hpp"
#include "bench_support.hpp"
#include "numerics/fp16.hpp"
#include "replay/model_package.hpp"
#include "sim/backend.hpp"
#include "workload/model_weights.hpp"
#include "workload/reference.hpp"
#include "workload/workload.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;
}

// The FP32 reference's multiply-adds, counted as 2 flops each: the patch embedding, and per
// layer QKV, the scores and the context of every head, the output projection and the MLP.
double reference_gflop(const lockstep::workload::Workload& w) {
  const double R = w.rows(), H = w.hidden, M = w.mlp, P = w.patch_values();
  const double layer = 2 * R * H * 3 * H + 2 * 2 * R * R * H + 2 * R * H * H + 2 * 2 * R * H * M;
  return (2 * R * P * H + w.layers * layer) / 1e9;
}

// The limit beside it: OpenBLAS SGEMM on this machine, 2048 x 2048 x 2048, best of three.
// Each kernel's work over the whole program (Repeat bodies times their count), in the unit of
// its throughput bound: multiply-adds x 2 for the GEMMs (AMP: 128 FP16 flops a cycle a tile,
// IPU21-KERNELS.md 11.1), values for the vector kernels (one 64-bit vector instruction a cycle
// a tile: 4 FP16 or 2 FP32 values), bytes for copies (8 a cycle, 11.1).
struct KernelWork {
  double work = 0;
  double per_cycle = 1;  // per tile
};

void add_work(const std::vector<lockstep::arch::Step>& steps, double times, std::map<std::string, KernelWork>& out) {
  for (const auto& step : steps) {
    if (const auto* r = std::get_if<lockstep::arch::RepeatStep>(&step.kind)) add_work(r->body, times * r->count, out);
    const auto* k = std::get_if<lockstep::arch::KernelStep>(&step.kind);
    if (!k || k->scalars.empty()) continue;
    const auto s = [&](size_t i) { return i < k->scalars.size() ? double(k->scalars[i]) : 0.0; };
    KernelWork& w = out[k->name];
    if (k->name.rfind("gemm_fp16", 0) == 0 || k->name.rfind("gemm_fp8", 0) == 0) {  // and the _interleaved ones
      w.work += times * 2 * s(0) * s(1) * s(2);
      w.per_cycle = 128;
    } else if (k->name == "softmax" || k->name == "attention_softmax") {
      w.work += times * s(0) * s(1);
      w.per_cycle = 2;
    } else if (k->name == "attention_merge") {
      w.work += times * s(0) * s(1) * s(2);  // FP32 accumulator values, f32v2
      w.per_cycle = 2;
    } else if (k->name == "layernorm") {
      w.work += times * s(0) * s(1);
      w.per_cycle = 4;
    } else if (k->name == "reduce_sum") {
      w.work += times * s(0) * s(1) * s(2);
      w.per_cycle = 4;
    } else if (k->name == "copy" || k->name == "fill") {
      w.work += times * s(0);
      w.per_cycle = 8;
    } else if (k->name == "ipu_stack_copy_u64") {  // [words per worker, remainder workers]
      w.work += times * 8 * (6 * s(0) + s(1));
      w.per_cycle = 8;
    } else {
      w.work += times * s(0);  // gelu, add, cast: element counts
      w.per_cycle = 4;
    }
  }
}

double sgemm_gflops() {
  const int n = 2048;
  std::vector<float> a(size_t(n) * n, 0.5f), b(size_t(n) * n, 0.25f), c(size_t(n) * n);
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    best = std::max(best, 2.0 * n * n * n / 1e9 / seconds_since(start));
  }
  return best;
}

// The whole model as a user runs it (the throughput issue's rows): `lockstep build`, then
// `lockstep run` (goal 15 s) and `lockstep run --reference` (goal 20 s) of its package.
void command_line_figures(const std::string& binary, const std::string& workload) {
  namespace fs = std::filesystem;
  const fs::path directory = fs::temp_directory_path() / ("bench_model_" + std::to_string(::getpid()));
  fs::create_directories(directory);
  const std::string package = (directory / "model.lkspkg").string();
  if (lockstep::bench::measured_command({binary, "build", workload, "-o", package}).seconds < 0) {
    std::printf("command line: lockstep build %s failed\n", workload.c_str());
  } else {
    // Three runs each: this machine's speed moves by a fifth within minutes (performance.md).
    const auto run = lockstep::bench::median_of({binary, "run", package}, 3);
    lockstep::bench::print_against_goal("lockstep run, whole model package", run, 15.0);
    std::printf("  peak RSS %.2f GB\n", run.peak_rss_gb);
    const auto reference = lockstep::bench::median_of({binary, "run", package, "--reference"}, 3);
    lockstep::bench::print_against_goal("lockstep run --reference, whole model package", reference, 20.0);
  }
  std::error_code ignored;
  fs::remove_all(directory, ignored);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lockstep;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // figures appear as they are measured
  const std::string file = argc > 1 ? argv[1] : "configs/workloads/siglip-so400m.yaml";
  const workload::Workload w = workload::load_workload(file);
  const arch::MachineDescription machine = arch::load_machine(w.machine);
  std::printf("workload %s (%u layers, %u tokens, hidden %u) on %s\n", w.name.c_str(), w.layers, w.rows(), w.hidden,
              machine.name.c_str());

  auto start = std::chrono::steady_clock::now();
  const workload::DeviceWeights device = workload::seeded_device_weights(w, 1);
  replay::ModelPackageOptions options;
  options.weights = &device;
  options.patches = workload::seeded_patches(w, 1);
  const replay::ModelPackage built = replay::build_model_package(w, machine, options);
  const double build_seconds = seconds_since(start);
  std::printf("build (seeded weights, lower, compile B1024, merge) %.1f s (goal 15 s: %s)\n", build_seconds,
              build_seconds <= 15.0 ? "met" : "missed");

  start = std::chrono::steady_clock::now();
  const sim::RunResult result = sim::make_systemc_backend(machine)->run(built.package, {});
  const double run_seconds = seconds_since(start);
  uint64_t exchange = 0;
  for (const auto& e : result.executions) exchange += e.horizon;
  std::printf(
      "run, one invocation (in this process): %.1f s wall (goal 15 s: %.2fx of it, %s), peak RSS %.0f MiB, %s\n",
      run_seconds, run_seconds / 15.0, run_seconds <= 15.0 ? "met" : "missed", peak_rss_mib(),
      result.ok() ? "no hazard" : "HAZARDS");
  std::printf("simulated cycles %llu (%.3f ms at %.2f GHz): exchange phase horizons %llu, everything else %llu\n",
              static_cast<unsigned long long>(result.total_cycles),
              1e3 * double(result.total_cycles) / machine.clock_hz, machine.clock_hz / 1e9,
              static_cast<unsigned long long>(exchange),
              static_cast<unsigned long long>(result.total_cycles - exchange));
  const auto& split = result.cycle_split;
  std::printf("critical path: exchange %llu, compute %llu, sync %llu, patching %llu, control %llu cycles\n",
              static_cast<unsigned long long>(split.exchange), static_cast<unsigned long long>(split.compute),
              static_cast<unsigned long long>(split.sync), static_cast<unsigned long long>(split.patching),
              static_cast<unsigned long long>(split.control));
  // Each kernel beside its throughput bound: its work spread evenly over every tile.
  std::map<std::string, KernelWork> work;
  for (const auto& tile : built.package.tiles) add_work(tile.steps, 1, work);
  const double tiles = double(built.package.tiles.size());
  double bounds = 0;
  for (const auto& [name, cycles] : split.compute_by_kernel) {
    const auto it = work.find(name);
    const double bound = it == work.end() ? 0 : it->second.work / (tiles * it->second.per_cycle);
    bounds += bound;
    std::printf("  compute %-10s %llu (throughput bound %.0f: %.1fx of it)\n", name.c_str(),
                static_cast<unsigned long long>(cycles), bound, bound > 0 ? double(cycles) / bound : 0.0);
  }
  std::printf("compute on the critical path %llu against the throughput bound %.0f: %.3fx (goal at most 2x: %s)\n",
              static_cast<unsigned long long>(split.compute), bounds, double(split.compute) / bounds,
              double(split.compute) <= 2 * bounds ? "met" : "missed");
  // Issue 24's goals for the whole SigLIP model: the seed's run on the chip and its table.
  if (w.name == "siglip-so400m") {
    constexpr double kSeedCycles = 13291890, kSeedTableBytes = 40824;
    std::printf("cycles per inference %llu (goal at most 13,291,890, the seed on the chip: %.2fx of it, %s)\n",
                static_cast<unsigned long long>(result.total_cycles), double(result.total_cycles) / kSeedCycles,
                double(result.total_cycles) <= kSeedCycles ? "met" : "missed");
    std::printf("exchange table peak %u bytes per tile (goal at most 40,824, the seed's: %.2fx of it, %s)\n",
                built.summary.table_bytes, built.summary.table_bytes / kSeedTableBytes,
                built.summary.table_bytes <= kSeedTableBytes ? "met" : "missed");
  }

  std::vector<float> patches;
  for (uint16_t v : options.patches) patches.push_back(arch::fp16_to_float(v));
  start = std::chrono::steady_clock::now();
  // As `run --reference` runs it: each layer's weights dequantised just before the layer (all
  // of them at once first was 1.4 GB of fresh FP32 and 3.5 s more here).
  const std::vector<float> reference = workload::reference_forward(w, device, patches);
  const double reference_seconds = seconds_since(start);
  const auto& bytes = result.outputs.at("output");
  std::vector<float> simulated(bytes.size() / 4);
  std::memcpy(simulated.data(), bytes.data(), bytes.size());
  const workload::Agreement a = workload::compare(simulated, reference);
  std::printf("against FP32: cosine %.9f (goal at least 0.9999: %s), max abs error %.6f\n", a.cosine,
              a.cosine >= 0.9999 ? "met" : "missed", a.max_abs_error);
  const double gflop = reference_gflop(w);
  std::printf(
      "FP32 reference forward (the same GEMM work in plain FP32 on OpenBLAS, each layer dequantised on the "
      "way) %.1f s, %.0f GFLOP at %.0f GFLOP/s; "
      "simulation / FP32 = %.1fx\n",
      reference_seconds, gflop, gflop / reference_seconds, run_seconds / reference_seconds);
  const double limit = sgemm_gflops();
  std::printf(
      "limit: OpenBLAS SGEMM 2048^3 on this machine (its %s) %.0f GFLOP/s, so %.1f s for the reference's "
      "products\n",
      lockstep::bench::openblas_kernels().c_str(), limit, gflop / limit);
  if (const char* binary = std::getenv("LOCKSTEP_BINARY"); binary != nullptr && w.name == "siglip-so400m") {
    command_line_figures(binary, file);
  }
  return result.ok() ? 0 : 1;
}
