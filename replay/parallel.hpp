#pragma once
// Work spread over forked worker processes. SystemC has one kernel per process, so points
// run in parallel only as processes; each worker sends its results back over a pipe.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace lockstep::replay {

// Runs task(i) for every i in [0, count) on `jobs` worker processes (in this process when
// jobs <= 1) and returns the bytes each returned, in index order, so the outcome never
// depends on `jobs`. Tasks go out one at a time to whichever worker is free. on_done is
// called in this process after every finished task, with its index and result (in the
// order tasks finish, so a caller can save each as it comes). A task that throws stops the run:
// InputError is rethrown as InputError, anything else as std::runtime_error naming the task.
//
// With `on_crash`, a worker that dies (a signal, an exit) does not stop the run: its task
// gets on_crash(index, "killed by signal 11 (Segmentation fault)") as its result and a
// fresh worker takes its place; tasks then always run in worker processes, even for
// jobs <= 1, so a crash never takes this process down.
using CrashResult = std::function<std::string(size_t index, const std::string& how)>;
using DoneCallback = std::function<void(size_t index, const std::string& result)>;
std::vector<std::string> run_in_processes(size_t count, size_t jobs, const std::function<std::string(size_t)>& task,
                                          const DoneCallback& on_done = {}, const CrashResult& on_crash = {});

// Cores this process may use (sched_getaffinity), at least 1.
size_t available_cores();

}  // namespace lockstep::replay
