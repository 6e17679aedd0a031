#include "replay/parallel.hpp"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "io/errors.hpp"

namespace lockstep::replay {
namespace {

enum : uint8_t { kOk = 0, kInputError = 2, kFailure = 3 };

bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// False on end of file before the first byte; throws if the stream stops half-way.
bool read_all(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, p + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(std::string("worker pipe: ") + std::strerror(errno));
    if (n == 0) {
      if (got == 0) return false;
      throw std::runtime_error("worker pipe: truncated message");
    }
    got += static_cast<size_t>(n);
  }
  return true;
}

// A frame: index, status, length, bytes (a result or an error message).
void send_frame(int fd, uint64_t index, uint8_t status, const std::string& bytes) {
  const uint64_t size = bytes.size();
  if (!write_all(fd, &index, sizeof index) || !write_all(fd, &status, 1) || !write_all(fd, &size, sizeof size) ||
      !write_all(fd, bytes.data(), bytes.size())) {
    _exit(4);
  }
}

[[noreturn]] void worker_main(int task_fd, int result_fd, const std::function<std::string(size_t)>& task) {
  uint64_t index = 0;
  while (read_all(task_fd, &index, sizeof index)) {
    try {
      send_frame(result_fd, index, kOk, task(index));
    } catch (const InputError& e) {
      send_frame(result_fd, index, kInputError, e.what());
    } catch (const std::exception& e) {
      send_frame(result_fd, index, kFailure, e.what());
    }
  }
  std::fflush(nullptr);
  _exit(0);  // skip the parent's atexit handlers and static destructors
}

struct Worker {
  pid_t pid = -1;
  int task_fd = -1;    // parent writes task indices
  int result_fd = -1;  // parent reads frames
  std::optional<uint64_t> running;
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

Worker start_worker(const std::function<std::string(size_t)>& task, std::vector<Worker>& others) {
  int to_child[2], to_parent[2];
  if (::pipe(to_child) != 0 || ::pipe(to_parent) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_DFL);
    for (auto& w : others) {
      close_fd(w.task_fd);
      close_fd(w.result_fd);
    }
    ::close(to_child[1]);
    ::close(to_parent[0]);
    worker_main(to_child[0], to_parent[1], task);
  }
  ::close(to_child[0]);
  ::close(to_parent[1]);
  return Worker{pid, to_child[1], to_parent[0], std::nullopt};
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

std::vector<std::string> run_here(size_t count, const std::function<std::string(size_t)>& task,
                                  const DoneCallback& on_done) {
  std::vector<std::string> results(count);
  for (size_t i = 0; i < count; ++i) {
    results[i] = task(i);
    if (on_done) on_done(i, results[i]);
  }
  return results;
}

}  // namespace

size_t available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<size_t>(n);
  }
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<size_t>(n) : 1;
}

std::vector<std::string> run_in_processes(size_t count, size_t jobs, const std::function<std::string(size_t)>& task,
                                          const DoneCallback& on_done, const CrashResult& on_crash) {
  if (jobs > count) jobs = count;
  if (count == 0) return {};
  if (jobs <= 1 && !on_crash) return run_here(count, task, on_done);
  jobs = std::max<size_t>(jobs, 1);

  // A worker that dies must not kill us with SIGPIPE when we hand it the next task.
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);

  std::vector<Worker> workers;
  std::vector<std::string> results(count);
  size_t next = 0, finished = 0;
  uint8_t error_status = kOk;
  std::string error;

  auto give_next = [&](Worker& w) {
    if (next < count && error.empty()) {
      const uint64_t index = next++;
      if (write_all(w.task_fd, &index, sizeof index)) {
        w.running = index;
        return;
      }
      error_status = kFailure;
      error = "worker " + std::to_string(w.pid) + " stopped taking tasks";
    }
    close_fd(w.task_fd);  // end of file: the worker exits
  };

  try {
    for (size_t j = 0; j < jobs; ++j) workers.push_back(start_worker(task, workers));
    for (auto& w : workers) give_next(w);
    std::vector<pollfd> fds;
    while (true) {
      fds.clear();
      for (auto& w : workers) {
        if (w.result_fd >= 0) fds.push_back({w.result_fd, POLLIN, 0});
      }
      if (fds.empty()) break;
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      }
      for (const auto& p : fds) {
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Worker* w = nullptr;
        for (auto& candidate : workers) {
          if (candidate.result_fd == p.fd) w = &candidate;
        }
        uint64_t index = 0, size = 0;
        uint8_t status = 0;
        if (!read_all(w->result_fd, &index, sizeof index)) {
          close_fd(w->result_fd);
          close_fd(w->task_fd);
          int wait_status = 0;
          ::waitpid(w->pid, &wait_status, 0);
          w->pid = -1;
          if (!w->running) continue;
          const size_t lost = *w->running;
          w->running.reset();
          if (on_crash && error.empty()) {
            results[lost] = on_crash(lost, describe_exit(wait_status));
            ++finished;
            if (on_done) on_done(lost, results[lost]);
            *w = start_worker(task, workers);
            give_next(*w);
          } else if (error.empty()) {
            error_status = kFailure;
            error = "worker process died while running task " + std::to_string(lost) + " (" +
                    describe_exit(wait_status) + ")";
          }
          continue;
        }
        if (!read_all(w->result_fd, &status, 1) || !read_all(w->result_fd, &size, sizeof size)) {
          throw std::runtime_error("worker pipe: truncated message");
        }
        std::string bytes(size, '\0');
        if (size > 0 && !read_all(w->result_fd, bytes.data(), size)) {
          throw std::runtime_error("worker pipe: truncated message");
        }
        if (index >= count || !w->running || *w->running != index) {
          throw std::runtime_error("worker pipe: unexpected task " + std::to_string(index));
        }
        w->running.reset();
        if (status == kOk) {
          results[index] = std::move(bytes);
          ++finished;
          if (on_done) on_done(index, results[index]);
        } else if (error.empty()) {
          error_status = status;
          error = bytes;
        }
        give_next(*w);
      }
    }
  } catch (...) {
    for (auto& w : workers) {
      close_fd(w.task_fd);
      close_fd(w.result_fd);
      if (w.pid > 0) ::kill(w.pid, SIGTERM);
    }
    for (auto& w : workers) {
      if (w.pid > 0) ::waitpid(w.pid, nullptr, 0);
    }
    ::sigaction(SIGPIPE, &previous, nullptr);
    throw;
  }
  for (auto& w : workers) {
    int status = 0;
    if (w.pid > 0) ::waitpid(w.pid, &status, 0);
  }
  ::sigaction(SIGPIPE, &previous, nullptr);
  if (error_status == kInputError) throw InputError(error);
  if (!error.empty()) throw std::runtime_error(error);
  if (finished != count) throw std::runtime_error("worker processes finished early");
  return results;
}

}  // namespace lockstep::replay
