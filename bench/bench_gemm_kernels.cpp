// The simulated GEMM kernels' speed (issue 25): gemm_fp8 and gemm_fp16, bit-exact AMP
// arithmetic, at the per-tile shapes of the whole SigLIP-So400m program (docs/lowering.md:
// the four layer GEMMs' grid tiles, the patch embedding's, and attention's QK and PV), beside
// OpenBLAS's FP32 GEMM (cblas_sgemm) on the same shapes in the same run: the limit the issue
// measures them against (goal: at least 50% of its GFLOP/s). Both on one thread: the simulator
// runs one tile's kernel per thread, many tiles at once.
#include <cblas.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "bench/bench_support.hpp"
#include "model/kernel_registry.hpp"
#include "model/kernels/tensor_io.hpp"
#include "model/sram.hpp"
#include "numerics/fp16.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Shape {
  const char* what;
  const char* kernel;  // gemm_fp8 or gemm_fp16
  int64_t rows, k, n;
  bool transposed;  // gemm_fp16's b as [n][k] (QK^T)
};

// Per-tile calls of `lockstep build siglip-so400m` (docs/lowering.md "Figures").
const Shape kShapes[] = {
    {"patch embedding 15x98", "gemm_fp8", 729, 40, 12, false},
    {"QKV 12x122", "gemm_fp8", 729, 96, 30, false},
    {"attention output 20x73", "gemm_fp8", 729, 58, 16, false},
    {"MLP up 10x147, a row chunk", "gemm_fp8", 365, 116, 30, false},
    {"MLP down 39x37", "gemm_fp8", 729, 112, 32, false},
    {"attention QK, 57 queries x 112 keys", "gemm_fp16", 57, 72, 112, true},
    {"attention PV", "gemm_fp16", 57, 112, 72, false},
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Calls of `f` until at least `budget` seconds have passed; returns seconds per call.
template <class F>
double per_call(F&& f, double budget = 0.5) {
  f();  // warm-up
  size_t calls = 0;
  const auto start = Clock::now();
  do {
    f();
    ++calls;
  } while (seconds_since(start) < budget);
  return seconds_since(start) / static_cast<double>(calls);
}

}  // namespace

int main() {
  using namespace lockstep;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  openblas_set_num_threads(1);
  std::printf("OpenBLAS on one thread, its %s\n", bench::openblas_kernels().c_str());
  const arch::MachineDescription machine = arch::load_machine("ipu21-c600");
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_int_distribution<int> byte(0, 255);
  double kernel_flop = 0, kernel_seconds = 0, blas_seconds = 0;
  std::printf("%-40s %10s %10s %8s\n", "shape (rows x k x n)", "kernel", "sgemm", "ratio");
  for (const Shape& shape : kShapes) {
    const auto* kernel = model::find_kernel(shape.kernel);
    model::Sram memory(machine);
    const uint32_t out = 0x60000, a = 0x90000, b = 0xc0000;
    std::vector<uint16_t> a16(static_cast<size_t>(shape.rows * shape.k));
    for (auto& h : a16) h = arch::fp16_from_double(normal(rng));
    model::kernels::write_array(memory, a, a16, "a");
    std::vector<float> af(a16.size()), bf(static_cast<size_t>(shape.k * shape.n)),
        cf(static_cast<size_t>(shape.rows * shape.n));
    for (size_t i = 0; i < a16.size(); ++i) af[i] = arch::fp16_to_float(a16[i]);
    if (std::string(shape.kernel) == "gemm_fp8") {
      std::vector<uint8_t> w(bf.size());
      for (auto& v : w) v = static_cast<uint8_t>(byte(rng) & 0x77);  // finite F143 codes
      model::kernels::write_array(memory, b, w, "b");
    } else {
      std::vector<uint16_t> w(bf.size());
      for (auto& h : w) h = arch::fp16_from_double(normal(rng));
      model::kernels::write_array(memory, b, w, "b");
    }
    for (auto& f : bf) f = static_cast<float>(normal(rng));
    const std::vector<int64_t> scalars =
        std::string(shape.kernel) == "gemm_fp8"
            ? std::vector<int64_t>{shape.rows, shape.k, shape.n, 0, 16}
            : std::vector<int64_t>{shape.rows, shape.n, shape.k, shape.transposed ? 1 : 0, 16};
    const double kernel_call = per_call([&] { kernel->execute({out, a, b}, scalars, memory); });
    const int m = static_cast<int>(shape.rows), k = static_cast<int>(shape.k), n = static_cast<int>(shape.n);
    const double blas_call = per_call([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, shape.transposed ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, af.data(),
                  k, bf.data(), shape.transposed ? k : n, 0.0f, cf.data(), n);
    });
    const double flop = 2.0 * shape.rows * shape.k * shape.n;
    kernel_flop += flop;
    kernel_seconds += kernel_call;
    blas_seconds += blas_call;
    std::printf("%-30s %4lldx%3lldx%3lld %6.2f GF/s %6.2f GF/s %7.1f%%  (%s)\n", shape.what,
                static_cast<long long>(shape.rows), static_cast<long long>(shape.k), static_cast<long long>(shape.n),
                flop / kernel_call / 1e9, flop / blas_call / 1e9, 100.0 * blas_call / kernel_call, shape.kernel);
  }
  const double ratio = blas_seconds / kernel_seconds;
  std::printf(
      "all shapes, one call each: kernels %.2f GFLOP/s, OpenBLAS SGEMM %.2f GFLOP/s on the same shapes: "
      "%.1f%% (goal at least 50%%: %s)\n",
      kernel_flop / kernel_seconds / 1e9, kernel_flop / blas_seconds / 1e9, 100.0 * ratio,
      ratio >= 0.5 ? "met" : "missed");
  return 0;
}
