#include "workload/blas_threads.hpp"

#include <cblas.h>
#include <dlfcn.h>

namespace lockstep::workload {

bool stop_blas_worker_threads() {
  openblas_set_num_threads(1);
  // Not in OpenBLAS's headers: exported for its pthread_atfork handler, which joins the
  // workers; the next threaded call starts them again if they are wanted.
  using Shutdown = int (*)();
  const auto shutdown = reinterpret_cast<Shutdown>(dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"));
  return shutdown != nullptr && shutdown() == 0;
}

}  // namespace lockstep::workload
