// OpenBLAS's idle workers stopped (workload/blas_threads.hpp): the process loses exactly those
// threads, OpenBLAS stays on one thread, and the FP32 reference gives the same bits after.
#include "workload/blas_threads.hpp"

#include <cblas.h>
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cstring>
#include <filesystem>
#include <iterator>

#include "numerics/fp16.hpp"
#include "support/test_support.hpp"
#include "workload/model_weights.hpp"
#include "workload/reference.hpp"
#include "workload/workload.hpp"

namespace lockstep::workload {
namespace {

long threads_of_this_process() {
  const std::filesystem::directory_iterator tasks("/proc/self/task");
  return std::distance(begin(tasks), end(tasks));
}

std::vector<float> vit_tiny_reference() {
  const Workload w = load_workload(testing::source_path("configs/workloads/vit-tiny.yaml"));
  std::vector<float> patches;
  for (const uint16_t h : seeded_patches(w, 3)) patches.push_back(arch::fp16_to_float(h));
  return reference_forward(w, dequantized(fold_and_quantize(seeded_weights(w, 3), w), w), patches);
}

TEST(BlasThreads, StoppingTheWorkersLeavesOneThreadAndTheReferenceItsBits) {
  // oneTBB on this thread alone, so that no worker of its starts between the counts (the
  // reference's bits do not depend on its threads).
  const tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
  const std::vector<float> before = vit_tiny_reference();
  const int blas_threads = openblas_get_num_threads();
  const long threads = threads_of_this_process();
  if (!stop_blas_worker_threads())
    GTEST_SKIP() << "this OpenBLAS has no blas_thread_shutdown_ (not the pthread flavour)";
  EXPECT_EQ(threads - threads_of_this_process(), blas_threads - 1) << "the workers OpenBLAS started as it loaded";
  EXPECT_EQ(openblas_get_num_threads(), 1);
  const std::vector<float> after = vit_tiny_reference();
  ASSERT_EQ(after.size(), before.size());
  EXPECT_EQ(std::memcmp(after.data(), before.data(), after.size() * sizeof(float)), 0);
  EXPECT_EQ(openblas_get_num_threads(), 1) << "the reference restores what it found";
}

}  // namespace
}  // namespace lockstep::workload
