#pragma once
// OpenBLAS's own worker threads, which Lockstep never uses: the FP32 reference runs
// single-threaded SGEMMs on fixed output tiles spread over oneTBB (reference.cpp).

namespace lockstep::workload {

// Stops OpenBLAS's worker threads and keeps its calls on the calling thread from then on.
// Debian's OpenBLAS (the pthread flavour, 0.3.21) starts its workers as the library loads, and
// each spins on sched_yield for its timeout (2^28 cycles, about 0.15 s here) before it sleeps:
// on two cores, every `lockstep` process lost one core for its first 0.15 s
// (docs/performance.md, round twenty-six). The stop is OpenBLAS's own, the function its fork
// handler calls (`blas_thread_shutdown_`), looked up at run time: a flavour without it (serial,
// or an OpenBLAS that renames it) keeps its threads, and nothing else changes. A later
// openblas_set_num_threads above 1 starts the workers again at the next threaded call.
// Returns whether the workers were stopped.
bool stop_blas_worker_threads();

}  // namespace lockstep::workload
