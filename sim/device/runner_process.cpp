#include "sim/device/runner_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace lockstep::cli {

namespace {

[[noreturn]] void fail_system(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

// Every byte to our stderr; a failed write (stderr closed) drops the rest.
void write_to_stderr(const char* data, size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(STDERR_FILENO, data, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    data += written;
    size -= static_cast<size_t>(written);
  }
}

// The runner's stdout and stderr, through one pipe (so their order is kept), copied to our
// stderr as they come. When the runner is done, output that did not end with a newline is
// given one, so whatever Lockstep prints next (its `error:` line) starts a line of its own.
class ForwardedOutput {
 public:
  ForwardedOutput() {
    if (::pipe2(fds_, O_CLOEXEC) != 0) fail_system("cannot start the runner");
    ::fcntl(fds_[0], F_SETFL, ::fcntl(fds_[0], F_GETFL) | O_NONBLOCK);
  }
  ~ForwardedOutput() {
    for (const int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  ForwardedOutput(const ForwardedOutput&) = delete;
  ForwardedOutput& operator=(const ForwardedOutput&) = delete;

  int write_end() const { return fds_[1]; }

  // In this process once the runner has its copy: the pipe ends when the runner's group does.
  void close_write_end() {
    ::close(fds_[1]);
    fds_[1] = -1;
  }

  // Waits up to `milliseconds` for output and forwards what there is.
  void wait(int milliseconds) {
    pollfd ready{open_ ? fds_[0] : -1, POLLIN, 0};
    if (::poll(&ready, 1, milliseconds) > 0) forward(kChunksPerWait);
  }

  // After the runner's group is gone: forwards what is left and ends an unfinished line.
  void finish() {
    forward(kChunksAtEnd);
    if (line_open_) write_to_stderr("\n", 1);
    line_open_ = false;
  }

 private:
  static constexpr int kChunksPerWait = 16;  // so a chatty runner cannot starve the timeout
  static constexpr int kChunksAtEnd = 256;   // a full pipe is 16; escaped writers stop here

  void forward(int chunks) {
    char buffer[4096];
    while (open_ && chunks-- > 0) {
      const ssize_t got = ::read(fds_[0], buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (got <= 0) {  // every writer has closed it (or it failed)
        open_ = false;
        return;
      }
      write_to_stderr(buffer, static_cast<size_t>(got));
      line_open_ = buffer[got - 1] != '\n';
    }
  }

  int fds_[2] = {-1, -1};
  bool open_ = true;        // until the pipe ends
  bool line_open_ = false;  // the last byte forwarded was not a newline
};

// `/bin/sh -c command lockstep-runner ARGS...` in a process group of its own, its stdout and
// stderr to `output_fd`.
pid_t start_runner(const std::string& command, const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env, int output_fd) {
  std::vector<std::string> argv_text = {"sh", "-c", command, "lockstep-runner"};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) fail_system("cannot start the runner");
  if (pid == 0) {
    ::setpgid(0, 0);
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    ::dup2(output_fd, STDOUT_FILENO);
    ::dup2(output_fd, STDERR_FILENO);
    ::execv("/bin/sh", argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so a kill below never misses the group
  return pid;
}

// Whether the runner has exited (its status in `status`).
bool exited(pid_t pid, int& status) {
  const pid_t done = ::waitpid(pid, &status, WNOHANG);
  if (done < 0 && errno != EINTR) fail_system("waiting for the runner");
  return done == pid;
}

}  // namespace

RunnerOutcome run_runner(const std::string& command, const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env, double timeout_seconds) {
  ForwardedOutput output;
  const pid_t pid = start_runner(command, args, env, output.write_end());
  output.close_write_end();
  const auto start = std::chrono::steady_clock::now();
  RunnerOutcome outcome;
  int status = 0;
  while (!exited(pid, status)) {
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    if (timeout_seconds > 0 && elapsed.count() > timeout_seconds) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      output.finish();
      outcome.timed_out = true;
      return outcome;
    }
    output.wait(20);
  }
  ::kill(-pid, SIGKILL);  // whatever the runner left running in its group goes with it
  output.finish();
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  return outcome;
}

}  // namespace lockstep::cli
