#include "sim/device/runner_process.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace lockstep::cli {

RunnerOutcome run_runner(const std::string& command, const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env, double timeout_seconds) {
  std::vector<std::string> argv_text = {"sh", "-c", command, "lockstep-runner"};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot start the runner: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    ::execv("/bin/sh", argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so a kill below never misses the group
  const auto start = std::chrono::steady_clock::now();
  RunnerOutcome outcome;
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error(std::string("waiting for the runner: ") + std::strerror(errno));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (timeout_seconds > 0 && elapsed > timeout_seconds) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      outcome.timed_out = true;
      return outcome;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);  // whatever the runner left running in its group goes with it
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  return outcome;
}

}  // namespace lockstep::cli
