#pragma once
// Running a site's runner command for `device run`: /bin/sh -c CMD in a process group of
// its own, so a timeout ends the runner and everything it started.
#include <map>
#include <string>
#include <vector>

namespace lockstep::cli {

struct RunnerOutcome {
  bool timed_out = false;
  int exit_code = 0;  // when it exited
  int signal = 0;     // when a signal ended it
};

// Runs `/bin/sh -c command NAME ARGS...` ($0 = "lockstep-runner", $1.. = args) with `env`
// added to this process's environment; the runner's stdout and stderr go, in order, to our stderr
// (an unfinished last line ended with a newline), so the
// command's own stdout stays its summary. timeout_seconds 0: no bound.
RunnerOutcome run_runner(const std::string& command, const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env, double timeout_seconds);

}  // namespace lockstep::cli
